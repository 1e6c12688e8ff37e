import { Hono } from 'hono';
import type { RelayClient } from '../../client/relay-client.js';
import type { InboxEnv } from './inbox-env.js';
import type { InboxSession } from './inbox-sessions.js';
import type { RunCatalogs } from './run-catalogs.js';
import { streamChanges } from './stream-changes.js';

/** The waiting runs the inbox's list reads at most, newest first; it says when more wait. */
const inboxListedRuns = 100;

export interface InboxApprovalRoutesOptions {
  client: RelayClient;
  catalogs: RunCatalogs;
  /** How often the live list asks Temporal for changes. */
  pollIntervalMs: number;
  logger: Pick<Console, 'error'>;
}

/** The tenant's waiting calls (`/inbox/approvals`), read once or streamed as they change. */
export function inboxApprovalRoutes({ client, catalogs, pollIntervalMs, logger }: InboxApprovalRoutesOptions) {
  const app = new Hono<InboxEnv>();

  /**
   * The tenant's pending approvals, each with the JSON Schema of its tool for the editor, the waiting runs that did
   * not answer in time, and whether more runs wait than the list reads.
   */
  async function listApprovals(session: InboxSession) {
    const tenantId = session.tenant.tenantId;
    const limit = inboxListedRuns;
    const { approvals, unanswered, hasMore } = await client.listPendingApprovals({ tenantId, limit });
    const withSchemas = await Promise.all(
      approvals.map(async (approval) => {
        const tool = (await catalogs.of(approval.runId, tenantId)).find((entry) => entry.name === approval.toolName);
        return { ...approval, ...(tool ? { inputSchema: tool.inputSchema } : {}) };
      }),
    );
    return { approvals: withSchemas, unanswered, hasMore, limit };
  }

  app.get('/', async (c) => c.json(await listApprovals(c.get('session'))));

  app.get('/stream', (c) => {
    const session = c.get('session');
    let last = '';
    return streamChanges(c, {
      intervalMs: pollIntervalMs,
      eventName: 'approvals',
      logger,
      read: async () => {
        const approvals = JSON.stringify(await listApprovals(session));
        if (approvals === last) return undefined;
        last = approvals;
        return approvals;
      },
    });
  });

  return app;
}
