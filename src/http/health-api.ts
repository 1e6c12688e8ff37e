import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { ApiEnv } from './create-resource-api.js';

/** `GET /healthz`: answers while the process serves requests, with no key and without asking Temporal. */
export function createHealthApi(): OpenAPIHono<ApiEnv> {
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
  return app;
}
