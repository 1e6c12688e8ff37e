import type { InboxSession } from './inbox-sessions.js';

/** What the inbox's routes share once the session middleware let a request through. */
export interface InboxEnv {
  Variables: { session: InboxSession };
}
