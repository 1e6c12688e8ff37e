import { OpenAPIHono, createRoute, z } from '@hono/zod-openapi';
import type { CreateApiOptions } from './create-api.js';
import type { ApiEnv } from './create-resource-api.js';
import { apiKeySecurity } from './problem-responses.js';
import { renderApiReference } from './render-api-reference.js';

/**
 * `GET /v1/openapi.json` and `GET /v1/reference`: the OpenAPI 3.1 document of every route `api` serves, and a page
 * that shows it to people; both readable without a key, so a browser and a code generator can read them.
 */
export function createOpenApiApi(
  api: OpenAPIHono<ApiEnv>,
  { publicUrl = '/' }: Pick<CreateApiOptions, 'publicUrl'>,
): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>();
  app.openAPIRegistry.registerComponent('securitySchemes', 'bearerAuth', { type: 'http', scheme: 'bearer' });
  app.openAPIRegistry.registerComponent('securitySchemes', 'apiKeyHeader', {
    type: 'apiKey',
    in: 'header',
    name: 'x-api-key',
  });
  // Built on the first read, when every route of `api` is registered.
  let document: OpenApiDocument | undefined;
  const documentOf = () => (document ??= openApiDocumentOf(api, publicUrl));

  app.openapi(openApiDocumentRoute, (c) => c.json(documentOf(), 200));
  app.openapi(apiReferenceRoute, (c) => {
    c.header('content-security-policy', "default-src 'none'; style-src 'unsafe-inline'");
    return c.html(renderApiReference(documentOf()), 200);
  });
  return app;
}

type OpenApiDocument = ReturnType<OpenAPIHono<ApiEnv>['getOpenAPI31Document']>;

function openApiDocumentOf(api: OpenAPIHono<ApiEnv>, publicUrl: string): OpenApiDocument {
  return api.getOpenAPI31Document({
    openapi: '3.1.0',
    info: {
      title: 'Relay-E API',
      version: '1',
      description:
        'Durable tool-calling agent runs on Temporal. Every route but this document, its reference page, ' +
        '`/healthz` and `/readyz` needs an API key, and sees only its tenant’s runs. Errors are ' +
        '`application/problem+json`.',
    },
    servers: [{ url: publicUrl, description: 'Where this API is served' }],
    security: apiKeySecurity,
  });
}

const openApiDocumentRoute = createRoute({
  method: 'get',
  path: '/v1/openapi.json',
  operationId: 'getOpenApiDocument',
  summary: 'This document, OpenAPI 3.1; no key needed',
  security: [],
  responses: {
    200: {
      description: 'The OpenAPI document',
      content: { 'application/json': { schema: z.looseObject({ openapi: z.string() }) } },
    },
  },
});

const apiReferenceRoute = createRoute({
  method: 'get',
  path: '/v1/reference',
  operationId: 'getApiReference',
  summary: 'This document as a page for people, with no script or stylesheet from elsewhere; no key needed',
  security: [],
  responses: {
    200: { description: 'The API reference page', content: { 'text/html': { schema: z.string() } } },
  },
});
