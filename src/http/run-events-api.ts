import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import { runEventSchema, runEventsHeadersSchema, runEventsQuerySchema, runIdParamsSchema } from './api-schemas.js';
import type { CreateApiOptions } from './create-api.js';
import { createResourceApi } from './create-resource-api.js';
import type { ApiEnv } from './create-resource-api.js';
import { apiKeySecurity, problemResponses } from './problem-responses.js';
import type { RunEventHub } from './run-event-hub.js';
import { defaultSseHeartbeatIntervalMs, streamRunEvents } from './stream-run-events.js';

export type RunEventsApiOptions = Pick<CreateApiOptions, 'sseHeartbeatIntervalMs' | 'logger'> & {
  /** The process's followers of runs, which the inbox's run pages share. */
  followers: RunEventHub;
};

/**
 * `GET /v1/runs/:id/events`: a run's events as server-sent events, resumable with `Last-Event-ID`; every follower
 * of a run in this process shares one poller of it. A HEAD answers the GET's headers and follows nothing.
 */
export function createRunEventsApi(options: RunEventsApiOptions): OpenAPIHono<ApiEnv> {
  const app = createResourceApi();
  const { followers } = options;

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/runs/{id}/events',
      operationId: 'followRunEvents',
      summary: 'Follow a run’s events as server-sent events, resumable with Last-Event-ID',
      description:
        'Each event is `id: <seq>`, `event: <type>`, `data: <RunEvent JSON>`. The stream ends after ' +
        '`run_completed`, `run_failed` or `run_cancelled`; comment lines keep an idle stream open. A stream that ' +
        'fails after it started ends with `event: stream_failed`, whose data is `{ type, problem, retryAfter? }` ' +
        '(the problem document a request would have got); resume from the last id. A run that cannot answer (no ' +
        'worker, or a workflow task its workers fail) is followed all the same: `event: run_unavailable` says why, ' +
        'with data `{ type, problem, retryAfter? }`, once each time it stops answering, and `event: run_available` ' +
        'when it answers again; neither has an `id`.',
      security: apiKeySecurity,
      request: { params: runIdParamsSchema, query: runEventsQuerySchema, headers: runEventsHeadersSchema },
      responses: {
        200: {
          description: 'The event stream',
          content: { 'text/event-stream': { schema: runEventSchema } },
        },
        ...problemResponses('unauthorized', 'run_not_found', 'invalid_input'),
      },
    }),
    async (c) => {
      const lastEventId = c.req.valid('header')['last-event-id'];
      return streamRunEvents(c, {
        followers,
        runId: c.req.valid('param').id,
        tenantId: c.get('caller').tenantId,
        after: lastEventId !== undefined ? Number(lastEventId) : (c.req.valid('query').after ?? 0),
        heartbeatIntervalMs: options.sseHeartbeatIntervalMs ?? defaultSseHeartbeatIntervalMs,
        logger: options.logger ?? console,
      });
    },
  );

  return app;
}
