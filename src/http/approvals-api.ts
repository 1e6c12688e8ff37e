import { createRoute } from '@hono/zod-openapi';
import type { z } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { ApprovalOutcome } from '../shared/run-types.js';
import { callerName } from './api-keys.js';
import type { ApiKeyTenant } from './api-keys.js';
import {
  approvalOutcomeSchema,
  approvalsQuerySchema,
  approvalsResponseSchema,
  approveRequestSchema,
  rejectRequestSchema,
  runIdParamsSchema,
} from './api-schemas.js';
import { createResourceApi } from './create-resource-api.js';
import type { ApiEnv } from './create-resource-api.js';
import { HttpError } from './http-error.js';
import { decisionLinks } from './openapi-links.js';
import { apiKeySecurity, problemResponses } from './problem-responses.js';

/**
 * Decisions on pending tool calls (`/v1/runs/:id/approve`, `/reject`) and the tenant's list of them on the client's
 * task queue (`/v1/approvals`).
 */
export function createApprovalsApi({ client }: { client: RelayClient }): OpenAPIHono<ApiEnv> {
  const app = createResourceApi();
  const decide = decideOnOpenRun.bind(undefined, client);

  app.openapi(approveRoute, async (c) => {
    const outcome = await decide('approve', c.req.valid('param').id, c.get('caller'), c.req.valid('json'));
    return c.json(outcome, 200);
  });

  app.openapi(rejectRoute, async (c) => {
    const outcome = await decide('reject', c.req.valid('param').id, c.get('caller'), c.req.valid('json'));
    return c.json(outcome, 200);
  });

  app.openapi(listApprovalsRoute, async (c) => {
    const { limit } = c.req.valid('query');
    const listing = await client.listPendingApprovals({
      tenantId: c.get('caller').tenantId,
      ...(limit !== undefined ? { limit } : {}),
    });
    return c.json(listing, 200);
  });

  return app;
}

const approveRoute = decisionRoute(
  'approve',
  approveRequestSchema,
  'Approve a pending tool call, optionally with edited input',
);
const rejectRoute = decisionRoute(
  'reject',
  rejectRequestSchema,
  'Reject a pending tool call; the model is told it did not run',
);

const listApprovalsRoute = createRoute({
  method: 'get',
  path: '/v1/approvals',
  operationId: 'listPendingApprovals',
  summary: 'List the tool calls of the caller’s tenant that wait for a human',
  description:
    'Read from Temporal visibility: each waiting run keeps its waiting calls in its memo, so no worker is asked. ' +
    'Visibility trails a run by a moment, so a call decided just now can still be listed for that moment. Only the ' +
    'runs on the API’s task queue are listed: a call of a run on another task queue is still decided by its run id.',
  security: apiKeySecurity,
  request: { query: approvalsQuerySchema },
  responses: {
    200: {
      description: 'Pending approvals',
      content: { 'application/json': { schema: approvalsResponseSchema } },
      links: decisionLinks('$response.body#/approvals/0/runId', '$response.body#/approvals/0/toolCallId'),
    },
    ...problemResponses('unauthorized', 'invalid_input'),
  },
});

function decisionRoute<Schema extends typeof approveRequestSchema | typeof rejectRequestSchema>(
  decision: 'approve' | 'reject',
  schema: Schema,
  summary: string,
) {
  return createRoute({
    method: 'post',
    path: `/v1/runs/{id}/${decision}`,
    operationId: `${decision}ToolCall`,
    summary,
    security: apiKeySecurity,
    request: { params: runIdParamsSchema, body: { required: true, content: { 'application/json': { schema } } } },
    responses: {
      200: { description: 'Accepted by the run', content: { 'application/json': { schema: approvalOutcomeSchema } } },
      ...problemResponses(
        'invalid_json',
        'unauthorized',
        'run_not_found',
        'approver_not_allowed',
        'approval_not_pending',
        'payload_too_large',
        'invalid_input',
        // Only an approval carries an edited input its tool can refuse.
        ...(decision === 'approve' ? (['approval_input_invalid'] as const) : []),
        'run_unavailable',
      ),
    },
  });
}

/**
 * Sends a decision in the caller's name. A run that has already ended cannot take updates and Temporal reports
 * it as not found, so a run that still exists for the caller answers 409 (nothing awaits a decision), not 404.
 */
async function decideOnOpenRun(
  client: RelayClient,
  decision: 'approve' | 'reject',
  runId: string,
  caller: ApiKeyTenant,
  { toolCallId, ...fields }: z.infer<typeof approveRequestSchema> | z.infer<typeof rejectRequestSchema>,
): Promise<ApprovalOutcome> {
  // A reject request has no `input`: its schema is strict, so nothing the caller sent is dropped here.
  const options = { ...fields, tenantId: caller.tenantId, approver: callerName(caller) };
  try {
    return await (decision === 'approve'
      ? client.approve(runId, toolCallId, options)
      : client.reject(runId, toolCallId, options));
  } catch (error) {
    if (!RelayError.hasCode(error, 'run_not_found')) throw error;
    const { status } = await client.getRun(runId, { tenantId: caller.tenantId });
    throw new HttpError(
      409,
      'approval_not_pending',
      `Run '${runId}' has ended (${status}); no tool call awaits a decision`,
    );
  }
}
