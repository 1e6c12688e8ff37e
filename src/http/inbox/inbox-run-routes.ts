import { Hono } from 'hono';
import type { Context } from 'hono';
import type { z } from 'zod';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import type { RelayClient } from '../../client/relay-client.js';
import { getRunNamingTaskFailure } from '../../client/workflow-task-failure.js';
import { checkToolInput } from '../../shared/tool-input.js';
import type { RunSnapshot } from '../../shared/run-types.js';
import { approveRequestSchema, runIdParamsSchema } from '../api-schemas.js';
import { cancelStatusOf, cancelUnlessEnded } from '../cancel-run.js';
import { invalidRequest } from '../create-resource-api.js';
import { HttpError } from '../http-error.js';
import { invalidJson, refuseDeepBody } from '../request-body.js';
import type { RunEventHub } from '../run-event-hub.js';
import { streamRunEvents } from '../stream-run-events.js';
import { FreshReads } from './fresh-reads.js';
import type { InboxEnv } from './inbox-env.js';
import { runPage } from './inbox-pages.js';
import { approverOf } from './inbox-sessions.js';
import type { InboxSession } from './inbox-sessions.js';
import type { RunCatalogs } from './run-catalogs.js';
import { endingWithSession } from './session-streams.js';

// The inbox's decisions are the API's: the same fields and bounds (the edited input only read by an approval).
const decisionSchema = approveRequestSchema;

export interface InboxRunRoutesOptions {
  client: RelayClient;
  catalogs: RunCatalogs;
  /** The process's followers of runs, shared with the API's event streams. */
  followers: RunEventHub;
  /** How often an idle timeline sends a comment line, as the API's event streams do. */
  heartbeatIntervalMs: number;
  logger: Pick<Console, 'error'>;
}

/** One run's page (`/inbox/runs/:id`): its state, its live timeline, and the decisions and cancel made there. */
export function inboxRunRoutes(options: InboxRunRoutesOptions): Hono<InboxEnv> {
  const app = new Hono<InboxEnv>();
  // An id pasted with spaces around it (copied from a notice or a log) names the same run.
  app.get('/', (c) =>
    c.redirect(`/inbox/runs/${encodeURIComponent(checkRunId(c.req.query('id')?.trim(), 'query'))}`, 303),
  );
  // Every route below names a run: an id no run can have is refused before the run is read, followed or decided.
  app.use('/:id/*', async (c, next) => {
    checkRunId(c.req.param('id'), 'param');
    await next();
  });
  app.get('/:id', (c) => c.html(runPage(c.get('session'), c.req.param('id'))));
  readingRoutes(app, options);
  decisionRoutes(app, options);
  return app;
}

/** The run's state with the schemas of the tools it waits on, and its events as a stream. */
function readingRoutes(app: Hono<InboxEnv>, options: InboxRunRoutesOptions) {
  const { client, catalogs } = options;
  // Every page of a run asks for its state on the same events: they share a read started after they asked.
  const snapshots = new FreshReads<RunSnapshot>();
  app.get('/:id/state', async (c) => {
    const runId = c.req.param('id');
    const tenantId = c.get('session').tenant.tenantId;
    // Read while the page opens or its run changes: a run that cannot answer is said with why, as the API's read says it.
    const snapshot = await snapshots.read(JSON.stringify([tenantId, runId]), () =>
      getRunNamingTaskFailure(client, runId, { tenantId }),
    );
    const pendingTools = new Set(snapshot.pendingApprovals.map((approval) => approval.toolName));
    const catalog = pendingTools.size > 0 ? await catalogs.of(runId, tenantId) : [];
    return c.json({ snapshot, tools: catalog.filter((tool) => pendingTools.has(tool.name)) });
  });

  // Until the run ends or the session expires: the session was checked once, when the stream opened.
  app.get('/:id/events', async (c) => {
    const lastEventId = c.req.header('last-event-id');
    const session = c.get('session');
    const events = await streamRunEvents(c, {
      followers: options.followers,
      runId: c.req.param('id'),
      tenantId: session.tenant.tenantId,
      after: lastEventId !== undefined && /^\d+$/.test(lastEventId) ? Number(lastEventId) : 0,
      heartbeatIntervalMs: options.heartbeatIntervalMs,
      logger: options.logger,
      namedEvents: false,
    });
    return endingWithSession(events, session);
  });
}

/** An edited input checked before it is sent, approve, reject and cancel: each as the signed-in key's tenant. */
function decisionRoutes(app: Hono<InboxEnv>, { client, catalogs }: InboxRunRoutesOptions) {
  app.post('/:id/check', async (c) => {
    const runId = c.req.param('id');
    const { toolCallId, input } = await readDecision(c);
    const tenantId = c.get('session').tenant.tenantId;
    const pending = (await client.getRun(runId, { tenantId })).pendingApprovals.find(
      (approval) => approval.toolCallId === toolCallId,
    );
    if (!pending)
      throw new HttpError(409, 'approval_not_pending', `Tool call '${toolCallId}' is not awaiting approval`);
    const catalog = await catalogs.of(runId, tenantId);
    // Without the tool's schema here, the run's own check of the decision is the only one: nothing to show yet.
    if (!catalog.some((tool) => tool.name === pending.toolName)) return c.json({ valid: true, issues: [] });
    const check = new ToolCallValidator(catalog).checkEdit(pending.toolName, input);
    return c.json(check.valid ? { valid: true, issues: [] } : { valid: false, issues: check.issues });
  });

  app.post('/:id/approve', async (c) => {
    const { toolCallId, reason, input, requestedAt } = await readDecision(c);
    const outcome = await client.approve(c.req.param('id'), toolCallId, {
      ...decidedBy(c.get('session')),
      ...(reason ? { reason } : {}),
      ...(input !== undefined ? { input } : {}),
      ...(requestedAt !== undefined ? { requestedAt } : {}),
    });
    return c.json(outcome);
  });

  app.post('/:id/reject', async (c) => {
    const { toolCallId, reason, requestedAt } = await readDecision(c);
    const outcome = await client.reject(c.req.param('id'), toolCallId, {
      ...decidedBy(c.get('session')),
      ...(reason ? { reason } : {}),
      ...(requestedAt !== undefined ? { requestedAt } : {}),
    });
    return c.json(outcome);
  });

  // As the API answers: a run that already ended is left as it is, and its final status said. Temporal records the
  // cancel under the name decisions are recorded under.
  app.post('/:id/cancel', async (c) => {
    const session = c.get('session');
    const outcome = await cancelUnlessEnded(client, c.req.param('id'), session.tenant.tenantId, {
      by: approverOf(session),
    });
    return c.json(outcome, cancelStatusOf(outcome));
  });
}

/**
 * The run id a path or query names, refused as the API's run routes refuse it ({@link runIdParamsSchema}: 422
 * `invalid_input`) when no run can have it, so that an id of any length never costs a round trip to Temporal.
 */
function checkRunId(id: string | undefined, target: 'param' | 'query'): string {
  const check = runIdParamsSchema.safeParse({ id });
  if (!check.success) throw invalidRequest(target, check.error.issues);
  return check.data.id;
}

async function readDecision(c: Context<InboxEnv>): Promise<z.infer<typeof decisionSchema>> {
  const check = checkToolInput(decisionSchema, await readJson(c));
  if (!check.success) throw new HttpError(422, 'invalid_input', check.message, { issues: check.issues });
  return check.data;
}

/** The body as JSON; a body that is not JSON is the sender's mistake to hear of, not a decision missing its fields. */
async function readJson(c: Context<InboxEnv>): Promise<unknown> {
  let body: unknown;
  try {
    body = await c.req.json();
  } catch (error) {
    throw invalidJson(error);
  }
  refuseDeepBody(body);
  return body;
}

function decidedBy(session: InboxSession): { tenantId: string; approver: string } {
  return { tenantId: session.tenant.tenantId, approver: approverOf(session) };
}
