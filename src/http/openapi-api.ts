import { OpenAPIHono } from '@hono/zod-openapi';
import type { ApiEnv } from './create-resource-api.js';
import { apiKeySecurity } from './problem-responses.js';

/** `GET /v1/openapi.json`: the OpenAPI 3.1 document of every route `api` serves, built once on first request. */
export function createOpenApiApi(api: OpenAPIHono<ApiEnv>): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>();
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
  });

  let document: ReturnType<typeof api.getOpenAPI31Document> | undefined;
  app.get('/v1/openapi.json', (c) => {
    document ??= api.getOpenAPI31Document({
      openapi: '3.1.0',
      info: {
        title: 'Relay-E API',
        version: '1',
        description: 'Durable tool-calling agent runs on Temporal. Errors are `application/problem+json`.',
      },
      security: apiKeySecurity,
    });
    return c.json(document);
  });

  return app;
}
