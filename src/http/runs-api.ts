import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { getRunNamingTaskFailure } from '../client/workflow-task-failure.js';
import type { AgentRunInput } from '../shared/run-types.js';
import { callerName } from './api-keys.js';
import {
  cancelRequestSchema,
  cancelResponseSchema,
  listRunsQuerySchema,
  runIdParamsSchema,
  runPageSchema,
  runSnapshotSchema,
  startRunRequestSchema,
  startRunResponseSchema,
} from './api-schemas.js';
import { cancelStatusOf, cancelUnlessEnded } from './cancel-run.js';
import type { CreateApiOptions } from './create-api.js';
import { createResourceApi } from './create-resource-api.js';
import { createCursorSeal } from './cursor-seal.js';
import type { ApiEnv } from './create-resource-api.js';
import { decisionLinks, runLinks } from './openapi-links.js';
import { apiKeySecurity, problemResponses } from './problem-responses.js';

const startRunRoute = createRoute({
  method: 'post',
  path: '/v1/runs',
  operationId: 'startRun',
  summary: 'Start a run for the caller’s tenant',
  security: apiKeySecurity,
  request: { body: { required: true, content: { 'application/json': { schema: startRunRequestSchema } } } },
  responses: {
    201: {
      description: 'Started',
      headers: { Location: { description: 'The run’s own route: `/v1/runs/{id}`.', schema: { type: 'string' } } },
      content: { 'application/json': { schema: startRunResponseSchema } },
      links: runLinks('$response.body#/runId'),
    },
    ...problemResponses(
      'invalid_json',
      'unauthorized',
      'run_already_exists',
      'payload_too_large',
      'invalid_input',
      'unknown_tool',
      'model_not_configured',
    ),
  },
});

const listRunsRoute = createRoute({
  method: 'get',
  path: '/v1/runs',
  operationId: 'listRuns',
  summary: 'List the caller’s tenant’s runs, open runs first, newest first, a page at a time',
  description:
    'Only the runs on the API’s task queue, where `startRun` starts them: a run of the tenant on another task queue ' +
    '(another project sharing the Temporal namespace) is not listed, though `getRun` and the other run routes still ' +
    'read it by its id.',
  security: apiKeySecurity,
  request: { query: listRunsQuerySchema },
  responses: {
    200: {
      description: 'A page of runs',
      content: { 'application/json': { schema: runPageSchema } },
      links: runLinks('$response.body#/runs/0/runId'),
    },
    ...problemResponses('unauthorized', 'invalid_input'),
  },
});

const getRunRoute = createRoute({
  method: 'get',
  path: '/v1/runs/{id}',
  operationId: 'getRun',
  summary: 'Read a run’s snapshot',
  security: apiKeySecurity,
  request: { params: runIdParamsSchema },
  responses: {
    200: {
      description: 'The snapshot',
      content: { 'application/json': { schema: runSnapshotSchema } },
      links: decisionLinks('$request.path.id', '$response.body#/pendingApprovals/0/toolCallId'),
    },
    ...problemResponses('unauthorized', 'run_not_found', 'invalid_input', 'run_unavailable'),
  },
});

const cancelRunRoute = createRoute({
  method: 'post',
  path: '/v1/runs/{id}/cancel',
  operationId: 'cancelRun',
  summary: 'Cancel a run; a run that already ended is left as it is',
  security: apiKeySecurity,
  request: {
    params: runIdParamsSchema,
    body: { required: false, content: { 'application/json': { schema: cancelRequestSchema } } },
  },
  responses: {
    200: {
      description: 'The run had already ended',
      content: { 'application/json': { schema: cancelResponseSchema } },
    },
    202: {
      description: 'Cancellation requested',
      content: { 'application/json': { schema: cancelResponseSchema } },
    },
    ...problemResponses('invalid_json', 'unauthorized', 'run_not_found', 'payload_too_large', 'invalid_input'),
  },
});

/**
 * `/v1/runs`: start a run in the caller's tenant on the client's task queue, list the tenant's runs on that queue, read
 * one's snapshot, cancel it.
 */
export function createRunsApi({ client, apiKeys }: Pick<CreateApiOptions, 'client' | 'apiKeys'>): OpenAPIHono<ApiEnv> {
  const app = createResourceApi();
  const cursors = createCursorSeal(apiKeys);

  app.openapi(startRunRoute, async (c) => {
    const { runId: requestedId, ...body } = c.req.valid('json');
    // The schema types a transcript's tool results loosely; startRun checks the whole input again.
    const input = { ...(body as Omit<AgentRunInput, 'tenantId'>), tenantId: c.get('caller').tenantId };
    const { runId } = await client.startRun({ ...input, ...(requestedId ? { runId: requestedId } : {}) });
    c.header('location', `/v1/runs/${encodeURIComponent(runId)}`);
    return c.json({ runId }, 201);
  });

  app.openapi(listRunsRoute, async (c) => {
    const { status, pendingApprovals, limit, cursor } = c.req.valid('query');
    const tenantId = c.get('caller').tenantId;
    // The client lists its own task queue's runs: a cursor an API on another queue issued under the same keys is not.
    const scope = JSON.stringify([tenantId, client.taskQueue, status, pendingApprovals]);
    const page = await client.listRuns({
      tenantId,
      ...(status !== undefined ? { status } : {}),
      ...(pendingApprovals !== undefined ? { pendingApprovals: pendingApprovals === 'true' } : {}),
      ...(limit !== undefined ? { limit } : {}),
      ...(cursor !== undefined ? { cursor: cursors.open(cursor, scope) } : {}),
    });
    const nextCursor = page.nextCursor !== undefined ? cursors.seal(page.nextCursor, scope) : undefined;
    return c.json({ runs: page.runs, ...(nextCursor !== undefined ? { nextCursor } : {}) }, 200);
  });

  app.openapi(getRunRoute, async (c) => {
    const { id } = c.req.valid('param');
    const scope = { tenantId: c.get('caller').tenantId };
    return c.json(await getRunNamingTaskFailure(client, id, scope), 200);
  });

  app.openapi(cancelRunRoute, async (c) => {
    const caller = c.get('caller');
    const { reason } = c.req.valid('json');
    // Recorded in the caller's name, as a decision records its approver.
    const outcome = await cancelUnlessEnded(client, c.req.valid('param').id, caller.tenantId, {
      by: callerName(caller),
      ...(reason !== undefined ? { reason } : {}),
    });
    return c.json(outcome, cancelStatusOf(outcome));
  });

  return app;
}
