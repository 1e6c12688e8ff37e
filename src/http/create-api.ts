import { OpenAPIHono, createRoute } from '@hono/zod-openapi';
import type { Hook } from '@hono/zod-openapi';
import { WorkflowExecutionAlreadyStartedError } from '@temporalio/client';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { AgentRunInput, ApprovalOutcome, RunStatus } from '../shared/run-types.js';
import { formatIssuePath } from '../shared/tool-input.js';
import type { ToolInputIssue } from '../shared/tool-input.js';
import { createApiKeyVerifier } from './api-keys.js';
import type { ApiKeyTenant, ApiKeyTenants } from './api-keys.js';
import {
  approvalOutcomeSchema,
  approvalsQuerySchema,
  approvalsResponseSchema,
  approveRequestSchema,
  cancelResponseSchema,
  problemSchema,
  rejectRequestSchema,
  runEventSchema,
  runEventsHeadersSchema,
  runEventsQuerySchema,
  runIdParamsSchema,
  runSnapshotSchema,
  startRunRequestSchema,
  startRunResponseSchema,
} from './api-schemas.js';
import { HttpError, toHttpError } from './http-error.js';
import { createInbox } from './inbox/create-inbox.js';
import { readJsonBody } from './read-json-body.js';
import { streamRunEvents } from './stream-run-events.js';

export interface CreateApiOptions {
  client: RelayClient;
  /** The keys callers authenticate with, each mapped to the tenant it speaks for. */
  apiKeys: ApiKeyTenants;
  /** The largest request body accepted. @default 1_048_576 (1 MiB) */
  maxBodyBytes?: number;
  /** How often an event stream asks the run for new events. @default 250 */
  ssePollIntervalMs?: number;
  /** How often an idle event stream sends a comment line to keep proxies from closing it. @default 15_000 */
  sseHeartbeatIntervalMs?: number;
  /** Where unexpected errors are logged; callers only ever see a bare 500. @default console */
  logger?: Pick<Console, 'error'>;
}

/** What the authentication middleware leaves for the handlers. */
export interface ApiEnv {
  Variables: { caller: ApiKeyTenant };
}

const security: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

const runIdRequest = { params: runIdParamsSchema };

/** Builds the HTTP API over a `RelayClient`: every route but `/healthz` needs an API key and sees only its tenant's runs. */
export function createApi(options: CreateApiOptions): OpenAPIHono<ApiEnv> {
  const { client } = options;
  const logger = options.logger ?? console;
  const verifyApiKey = createApiKeyVerifier(options.apiKeys);
  const app = new OpenAPIHono<ApiEnv>({ defaultHook: refuseInvalidRequest });

  app.onError((error, c) => {
    const httpError = toHttpError(error);
    // A run waiting for a worker is an expected state, not a fault: one line, no stack.
    const logged = httpError.code === 'run_unavailable' ? httpError.detail : error;
    if (httpError.status >= 500) logger.error(`Relay-E: ${c.req.method} ${c.req.path} failed`, logged);
    return httpError.getResponse();
  });

  app.notFound((c) => {
    const allowed = app.routes
      .filter((route) => route.method !== 'ALL' && routePattern(route.path).test(c.req.path))
      .map((route) => route.method);
    if (allowed.length > 0) {
      const allow = [...new Set(allowed)].join(', ');
      return new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed here; use ${allow}`, {
        headers: { allow },
      }).getResponse();
    }
    return new HttpError(404, 'not_found', `No route for ${c.req.method} ${c.req.path}`).getResponse();
  });

  app.get('/healthz', (c) => c.json({ status: 'ok' }));
  app.route('/', createInbox({ client, verifyApiKey, logger }));

  app.use('/v1/*', async (c, next) => {
    const caller = verifyApiKey(readApiKey(c.req.header('authorization'), c.req.header('x-api-key')) ?? '');
    if (!caller) {
      throw new HttpError(401, 'unauthorized', 'Send a valid API key as `Authorization: Bearer <key>` or `x-api-key`', {
        headers: { 'www-authenticate': 'Bearer' },
      });
    }
    c.set('caller', caller);
    await next();
  });
  app.use('/v1/*', readJsonBody(options.maxBodyBytes ?? 1_048_576));

  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
  });

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/runs',
      summary: 'Start a run for the caller’s tenant',
      security,
      request: { body: { required: true, content: { 'application/json': { schema: startRunRequestSchema } } } },
      responses: {
        201: { description: 'Started', content: { 'application/json': { schema: startRunResponseSchema } } },
        ...problems(400, 401, 409, 413, 422),
      },
    }),
    async (c) => {
      const { runId: requestedId, ...body } = c.req.valid('json');
      // The schema types a transcript's tool results loosely; startRun checks the whole input again.
      const input = { ...(body as Omit<AgentRunInput, 'tenantId'>), tenantId: c.get('caller').tenantId };
      try {
        const { runId } = await client.startRun({ ...input, ...(requestedId ? { runId: requestedId } : {}) });
        c.header('location', `/v1/runs/${encodeURIComponent(runId)}`);
        return c.json({ runId }, 201);
      } catch (error) {
        if (error instanceof WorkflowExecutionAlreadyStartedError) {
          throw new HttpError(409, 'run_already_exists', `A run with id '${requestedId}' already exists`);
        }
        throw error;
      }
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/runs/{id}',
      summary: 'Read a run’s snapshot',
      security,
      request: runIdRequest,
      responses: {
        200: { description: 'The snapshot', content: { 'application/json': { schema: runSnapshotSchema } } },
        ...problems(401, 404, 422, 503),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      return c.json(await client.getRun(id, { tenantId: c.get('caller').tenantId }), 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/runs/{id}/events',
      summary: 'Follow a run’s events as server-sent events, resumable with Last-Event-ID',
      description:
        'Each event is `id: <seq>`, `event: <type>`, `data: <RunEvent JSON>`. The stream ends after ' +
        '`run_completed`, `run_failed` or `run_cancelled`; comment lines keep an idle stream open.',
      security,
      request: { ...runIdRequest, query: runEventsQuerySchema, headers: runEventsHeadersSchema },
      responses: {
        200: {
          description: 'The event stream',
          content: { 'text/event-stream': { schema: runEventSchema } },
        },
        ...problems(401, 404, 422, 503),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const lastEventId = c.req.valid('header')['last-event-id'];
      await client.getRun(id, { tenantId: c.get('caller').tenantId });
      return streamRunEvents(c, {
        client,
        runId: id,
        after: lastEventId !== undefined ? Number(lastEventId) : (c.req.valid('query').after ?? 0),
        pollIntervalMs: options.ssePollIntervalMs ?? 250,
        heartbeatIntervalMs: options.sseHeartbeatIntervalMs ?? 15_000,
        logger,
      });
    },
  );

  app.openapi(
    decisionRoute('approve', approveRequestSchema, 'Approve a pending tool call, optionally with edited input'),
    async (c) => {
      const { id } = c.req.valid('param');
      const { toolCallId, ...decision } = c.req.valid('json');
      const outcome = await decideOnOpenRun(client, id, c.get('caller'), (scope) =>
        client.approve(id, toolCallId, { ...decision, ...scope }),
      );
      return c.json(outcome, 200);
    },
  );

  app.openapi(
    decisionRoute('reject', rejectRequestSchema, 'Reject a pending tool call; the model is told it did not run'),
    async (c) => {
      const { id } = c.req.valid('param');
      const { toolCallId, ...decision } = c.req.valid('json');
      const outcome = await decideOnOpenRun(client, id, c.get('caller'), (scope) =>
        client.reject(id, toolCallId, { ...decision, ...scope }),
      );
      return c.json(outcome, 200);
    },
  );

  app.openapi(
    createRoute({
      method: 'post',
      path: '/v1/runs/{id}/cancel',
      summary: 'Cancel a run; a run that already ended is left as it is',
      security,
      request: runIdRequest,
      responses: {
        200: {
          description: 'The run had already ended',
          content: { 'application/json': { schema: cancelResponseSchema } },
        },
        202: {
          description: 'Cancellation requested',
          content: { 'application/json': { schema: cancelResponseSchema } },
        },
        ...problems(401, 404, 413, 422),
      },
    }),
    async (c) => {
      const { id } = c.req.valid('param');
      const tenantId = c.get('caller').tenantId;
      // A run waiting for a worker to recover it cannot say its status, but it can be cancelled.
      const snapshot = await client.getRun(id, { tenantId }).catch((error: unknown) => {
        if (RelayError.isInstance(error) && error.code === 'run_unavailable') return undefined;
        throw error;
      });
      if (snapshot && isTerminal(snapshot.status)) return c.json({ runId: id, status: snapshot.status }, 200);
      await client.cancel(id, { tenantId });
      return c.json({ runId: id, status: 'cancelling' as const }, 202);
    },
  );

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/approvals',
      summary: 'List the tool calls of the caller’s tenant that wait for a human',
      security,
      request: { query: approvalsQuerySchema },
      responses: {
        200: { description: 'Pending approvals', content: { 'application/json': { schema: approvalsResponseSchema } } },
        ...problems(401, 422),
      },
    }),
    async (c) => {
      const { limit } = c.req.valid('query');
      const approvals = await client.listPendingApprovals({
        tenantId: c.get('caller').tenantId,
        ...(limit !== undefined ? { limit } : {}),
      });
      return c.json({ approvals }, 200);
    },
  );

  let openApiDocument: ReturnType<typeof app.getOpenAPI31Document> | undefined;
  app.get('/v1/openapi.json', (c) => {
    openApiDocument ??= app.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'Relay-E API',
        version: '1',
        description: 'Durable tool-calling agent runs on Temporal. Errors are `application/problem+json`.',
      },
      security,
    });
    return c.json(openApiDocument);
  });

  return app;
}

/** Turns a request that fails its schema into a 422 naming every issue and its path. */
const refuseInvalidRequest: Hook<unknown, ApiEnv, string, unknown> = (result) => {
  if (result.success) return;
  // Body paths read as JavaScript (`messages[0].role`); a header or query parameter is named as sent.
  const formatPath = result.target === 'json' ? formatIssuePath : (path: PropertyKey[]) => path.map(String).join('.');
  const issues = result.error.issues.flatMap((issue) => toIssues(issue, formatPath));
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
  throw new HttpError(422, 'invalid_input', `Invalid ${describeTarget(result.target)}: ${summary}`, { issues });
};

/** Fields a caller might send that the API key decides instead. */
const callerFields: Readonly<Record<string, string>> = {
  tenantId: 'The tenant comes from the API key, not the body',
  approver: 'The approver is the authenticated caller, not the body',
};

function toIssues(
  issue: { code: string; path: PropertyKey[]; message: string; keys?: string[] },
  formatPath: (path: PropertyKey[]) => string,
): ToolInputIssue[] {
  if (issue.code === 'unrecognized_keys' && issue.keys) {
    return issue.keys.map((key) => ({
      path: formatPath([...issue.path, key]),
      message: callerFields[key] ?? 'Unknown field',
      code: issue.code,
    }));
  }
  return [{ path: formatPath(issue.path), message: issue.message, code: issue.code }];
}

function describeTarget(target: string): string {
  return target === 'json' ? 'body' : target === 'param' ? 'path' : target;
}

function readApiKey(authorization: string | undefined, apiKeyHeader: string | undefined): string | undefined {
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(authorization ?? '')?.[1];
  return bearer ?? apiKeyHeader?.trim();
}

function decisionRoute<Schema extends typeof approveRequestSchema | typeof rejectRequestSchema>(
  decision: 'approve' | 'reject',
  schema: Schema,
  summary: string,
) {
  return createRoute({
    method: 'post',
    path: `/v1/runs/{id}/${decision}`,
    summary,
    security,
    request: { ...runIdRequest, body: { required: true, content: { 'application/json': { schema } } } },
    responses: {
      200: { description: 'Accepted by the run', content: { 'application/json': { schema: approvalOutcomeSchema } } },
      ...problems(400, 401, 404, 409, 413, 422, 503),
    },
  });
}

/**
 * Sends a decision in the caller's name. A run that has already ended cannot take updates and Temporal reports
 * it as not found, so a run that still exists for the caller answers 409 (nothing awaits a decision), not 404.
 */
async function decideOnOpenRun(
  client: RelayClient,
  runId: string,
  caller: ApiKeyTenant,
  decide: (scope: { tenantId: string; approver: string }) => Promise<ApprovalOutcome>,
): Promise<ApprovalOutcome> {
  try {
    return await decide({ tenantId: caller.tenantId, approver: approverOf(caller) });
  } catch (error) {
    if (!RelayError.isInstance(error) || error.code !== 'run_not_found') throw error;
    const { status } = await client.getRun(runId, { tenantId: caller.tenantId });
    throw new HttpError(
      409,
      'approval_not_pending',
      `Run '${runId}' has ended (${status}); no tool call awaits a decision`,
    );
  }
}

function approverOf(caller: ApiKeyTenant): string {
  return caller.name ?? `tenant:${caller.tenantId}`;
}

function isTerminal(status: RunStatus): status is Exclude<RunStatus, 'running' | 'awaiting_approval'> {
  return status !== 'running' && status !== 'awaiting_approval';
}

function problems(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: 'A problem', content: { 'application/problem+json': { schema: problemSchema } } },
    ]),
  );
}

function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
