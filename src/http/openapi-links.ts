import type { RouteConfig } from '@hono/zod-openapi';

/**
 * OpenAPI links: where an answer names what the next call needs (a run id, a waiting call's id). Client generators
 * and stateful API testers follow them from a started or listed run to its snapshot, events, decisions and cancel.
 */
type Links = NonNullable<Exclude<RouteConfig['responses'][string], { $ref: string }>['links']>;

/** From an answer that names a run (`runIdExpression`, an OpenAPI runtime expression): read, follow, cancel it. */
export function runLinks(runIdExpression: string): Links {
  const parameters = { id: runIdExpression };
  return {
    GetRun: { operationId: 'getRun', parameters, description: 'The run’s snapshot' },
    FollowRunEvents: { operationId: 'followRunEvents', parameters, description: 'The run’s events, as they come' },
    CancelRun: { operationId: 'cancelRun', parameters, description: 'Cancel the run' },
  };
}

/** From an answer that names a run and the first call waiting for a human in it: approve or reject that call. */
export function decisionLinks(runIdExpression: string, toolCallIdExpression: string): Links {
  const link = (operationId: string, description: string) => ({
    operationId,
    parameters: { id: runIdExpression },
    requestBody: { toolCallId: toolCallIdExpression },
    description,
  });
  return {
    ApproveToolCall: link('approveToolCall', 'Approve the first waiting call'),
    RejectToolCall: link('rejectToolCall', 'Reject the first waiting call'),
  };
}
