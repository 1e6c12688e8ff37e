import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { ApiEnv } from './create-resource-api.js';
import { problemResponses } from './problem-responses.js';
import type { TemporalReadiness } from './temporal-readiness.js';

const readinessRoute = createRoute({
  method: 'get',
  path: '/readyz',
  operationId: 'checkReadiness',
  summary: 'Readiness of this API: whether Temporal answers it (for a load balancer’s health check); no key needed',
  security: [],
  responses: {
    200: {
      description:
        'Temporal described the API’s namespace within 2 s (each answer serves the probes of the next second)',
      content: { 'application/json': { schema: z.object({ status: z.literal('ready') }) } },
    },
    ...problemResponses(),
  },
});

/**
 * `GET /healthz`: answers while the process serves requests, with no key and without asking Temporal (liveness).
 * `GET /readyz`: answers 200 while the API's Temporal connection can describe its namespace, else 503
 * `temporal_unavailable` saying why, with no key (readiness, for a load balancer's health check).
 */
export function createHealthApi(readiness: TemporalReadiness): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>();
  app.openapi(
    createRoute({
      method: 'get',
      path: '/healthz',
      operationId: 'checkHealth',
      summary: 'Liveness of this API process; no key needed',
      security: [],
      responses: {
        200: {
          description: 'Serving',
          content: { 'application/json': { schema: z.object({ status: z.literal('ok') }) } },
        },
      },
    }),
    (c) => c.json({ status: 'ok' as const }, 200),
  );
  // Documented, and served by a plain handler: the typed one takes JSON answers only, not a problem+json 503.
  app.openAPIRegistry.registerPath(readinessRoute);
  app.get('/readyz', async (c) => {
    const unavailable = await readiness.check();
    // Answered, not thrown: the error handler would log every probe of a load balancer while Temporal is down.
    return unavailable ? unavailable.getResponse() : c.json({ status: 'ready' as const }, 200);
  });
  return app;
}
