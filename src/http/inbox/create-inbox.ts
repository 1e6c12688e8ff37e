import { readFile } from 'node:fs/promises';
import { Hono } from 'hono';
import type { Context } from 'hono';
import type { RelayClient } from '../../client/relay-client.js';
import { RelayError } from '../../shared/errors.js';
import type { ApiKeyTenants } from '../api-keys.js';
import { defaultMaxBodyBytes, limitBody } from '../request-body.js';
import type { RunEventHub } from '../run-event-hub.js';
import { defaultSseHeartbeatIntervalMs } from '../stream-run-events.js';
import { inboxApprovalRoutes } from './inbox-approval-routes.js';
import type { InboxEnv } from './inbox-env.js';
import { inboxRunRoutes } from './inbox-run-routes.js';
import { inboxSessionRoutes, requireSession } from './inbox-session-routes.js';
import { approverOf, InboxSessions } from './inbox-sessions.js';
import { inboxStyles } from './inbox-styles.js';
import { RunCatalogs } from './run-catalogs.js';

export interface CreateInboxOptions {
  client: RelayClient;
  /** The keys people sign in with, each mapped to its tenant; they also seal the sessions (see InboxSessions). */
  apiKeys: ApiKeyTenants;
  /** How often the live approvals list asks Temporal for changes. @default 1_000 */
  approvalsPollIntervalMs?: number;
  /** The process's followers of runs, which a run page's timeline joins (one poller a run, shared with the API). */
  followers: RunEventHub;
  /** How often an idle run timeline sends a comment line to keep proxies from closing it. @default 15_000 */
  sseHeartbeatIntervalMs?: number;
  /** The largest request body accepted, signing in included. @default 1_048_576 (1 MiB) */
  maxBodyBytes?: number;
  /** @default console */
  logger?: Pick<Console, 'error'>;
  /**
   * The address people open the inbox at, when it is not the one requests reach this server at: behind a proxy or
   * load balancer that ends TLS, `https://inbox.example.com`. Sign-in, sign-out and decisions are then taken from its
   * origin only, and the session cookie is `Secure` when it is `https:`. `X-Forwarded-*` headers are never trusted.
   * @default undefined (each request's own origin: its scheme is this server's, its host the `Host` header)
   */
  publicUrl?: string;
}

const securityHeaders: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it Chromium sends `Origin: null` on same-origin form posts, which the origin check refuses.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const inboxScript = readFile(new URL('./assets/inbox.js', import.meta.url), 'utf8');

/**
 * The web approvals inbox: sign in with an API key (then an HttpOnly, SameSite=Strict session cookie), see the
 * tenant's pending approvals live, read a run's timeline, approve (as proposed or edited), reject, cancel.
 */
export function createInbox(options: CreateInboxOptions): Hono<InboxEnv> {
  const { client } = options;
  const logger = options.logger ?? console;
  const publicOrigin = publicOriginOf(options.publicUrl);
  const sessions = new InboxSessions(options.apiKeys);
  const catalogs = new RunCatalogs(client);
  const app = new Hono<InboxEnv>();

  app.use('/', setSecurityHeaders);
  app.use('/inbox/*', setSecurityHeaders);
  // Before anything reads a body: signing in reads one from anybody.
  app.use('/inbox/*', limitBody(options.maxBodyBytes ?? defaultMaxBodyBytes));
  app.get('/inbox/assets/inbox.js', async (c) =>
    c.body(await inboxScript, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
  );
  app.get('/inbox/assets/inbox.css', (c) => c.body(inboxStyles, 200, { 'content-type': 'text/css; charset=utf-8' }));
  // Browsers ask for it on every page: an empty answer rather than a 404 in every log.
  app.get('/favicon.ico', (c) => c.body(null, 204));
  app.route('/', inboxSessionRoutes(sessions, publicOrigin));

  // Everything below needs a session; changes also need the page's CSRF token.
  app.use('/inbox/*', requireSession(sessions, publicOrigin));
  // A page left open across a sign-in in another tab takes up the new session's token and name from here.
  app.get('/inbox/session', (c) => {
    const session = c.get('session');
    return c.json({ csrfToken: session.csrfToken, approver: approverOf(session) });
  });
  const approvalsPollIntervalMs = options.approvalsPollIntervalMs ?? 1_000;
  app.route(
    '/inbox/approvals',
    inboxApprovalRoutes({ client, catalogs, pollIntervalMs: approvalsPollIntervalMs, logger }),
  );
  const heartbeatIntervalMs = options.sseHeartbeatIntervalMs ?? defaultSseHeartbeatIntervalMs;
  app.route(
    '/inbox/runs',
    inboxRunRoutes({ client, catalogs, followers: options.followers, heartbeatIntervalMs, logger }),
  );
  return app;
}

/** The origin of the inbox's public URL; a URL that is not http or https is refused when the inbox is built. */
export function publicOriginOf(publicUrl: string | undefined): string | undefined {
  if (publicUrl === undefined) return undefined;
  const url = URL.parse(publicUrl);
  if (url?.protocol !== 'https:' && url?.protocol !== 'http:') {
    throw new RelayError('invalid_input', `The inbox URL '${publicUrl}' is not an http or https URL`);
  }
  return url.origin;
}

async function setSecurityHeaders(c: Context, next: () => Promise<void>): Promise<void> {
  await next();
  for (const [name, value] of Object.entries(securityHeaders)) c.res.headers.set(name, value);
}
