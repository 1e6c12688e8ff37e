import { Hono } from 'hono';
import type { RelayClient } from '../../client/relay-client.js';
import type { InboxEnv } from './inbox-env.js';
import type { InboxSession } from './inbox-sessions.js';
import type { RunCatalogs } from './run-catalogs.js';
import { endingWithSession } from './session-streams.js';
import { SharedReads } from './shared-reads.js';
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
  // Half an interval: every live list of a tenant shares one read, at most two an interval, whoever shows them.
  const tenantLists = new SharedReads<string>(pollIntervalMs / 2);

  /** {@link readApprovals} as JSON, read once for all the tenant's people: the list depends on the tenant alone. */
  function sharedApprovals(session: InboxSession): Promise<string> {
    const tenantId = session.tenant.tenantId;
    return tenantLists.read(tenantId, async () => JSON.stringify(await readApprovals(tenantId)));
  }

  /**
   * The tenant's pending approvals, each with its tool's description and JSON Schema, the waiting runs that did
   * not answer in time, and whether more runs wait than the list reads.
   */
  async function readApprovals(tenantId: string) {
    const limit = inboxListedRuns;
    const { approvals, unanswered, hasMore } = await client.listPendingApprovals({ tenantId, limit });
    const withSchemas = await Promise.all(
      approvals.map(async (approval) => {
        const tool = (await catalogs.of(approval.runId, tenantId)).find((entry) => entry.name === approval.toolName);
        return { ...approval, ...(tool ? { inputSchema: tool.inputSchema, description: tool.description } : {}) };
      }),
    );
    return { approvals: withSchemas, unanswered, hasMore, limit };
  }

  // A read asked for once is read afresh; the live lists below share theirs.
  app.get('/', async (c) => c.json(await readApprovals(c.get('session').tenant.tenantId)));

  // Until the session expires: it was checked once, when the stream opened.
  app.get('/stream', (c) => {
    const session = c.get('session');
    let last = '';
    const changes = streamChanges(c, {
      intervalMs: pollIntervalMs,
      eventName: 'approvals',
      logger,
      read: async () => {
        const approvals = await sharedApprovals(session);
        if (approvals === last) return undefined;
        last = approvals;
        return approvals;
      },
    });
    return endingWithSession(changes, session);
  });

  return app;
}
