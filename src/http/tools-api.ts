import { createRoute } from '@hono/zod-openapi';
import type { OpenAPIHono } from '@hono/zod-openapi';
import type { RelayClient } from '../client/relay-client.js';
import { toToolListing } from '../tool/tool-listing.js';
import { toolsResponseSchema } from './api-schemas.js';
import { createResourceApi } from './create-resource-api.js';
import type { ApiEnv } from './create-resource-api.js';
import { HttpError } from './http-error.js';
import { apiKeySecurity, problemResponses } from './problem-responses.js';

/** Workers announce themselves when they start, so a caller that asks again shortly may find one. */
const catalogRetryAfterSeconds = 5;

/**
 * `GET /v1/tools`: the tools the running workers of the API's task queue serve, each with its source (worker code
 * or MCP server), approval policy and input schema, as they announce them; no worker, no list (503).
 */
export function createToolsApi({ client }: { client: RelayClient }): OpenAPIHono<ApiEnv> {
  const app = createResourceApi();

  app.openapi(
    createRoute({
      method: 'get',
      path: '/v1/tools',
      operationId: 'listTools',
      summary: 'List the tools the running workers serve, with source, approval policy and input schema',
      security: apiKeySecurity,
      responses: {
        200: { description: 'The tools', content: { 'application/json': { schema: toolsResponseSchema } } },
        ...problemResponses('unauthorized', 'catalog_unavailable'),
      },
    }),
    async (c) => {
      const catalog = await client.getWorkerCatalog();
      // An empty list would read as "the workers serve no tools"; without an announcement nothing is known.
      if (catalog === undefined) {
        throw new HttpError(
          503,
          'catalog_unavailable',
          `No worker on task queue '${client.taskQueue}' has announced its tools: start one (relay-e worker, relay-e dev)`,
          { headers: { 'retry-after': String(catalogRetryAfterSeconds) } },
        );
      }
      const { tools, leftOut = [], workers } = catalog;
      return c.json({ tools: tools.map(toToolListing), leftOut, workers }, 200);
    },
  );

  return app;
}
