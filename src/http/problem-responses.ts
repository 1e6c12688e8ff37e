import { problemSchema } from './api-schemas.js';

/** The security requirement of every route that needs an API key: a bearer token or an `x-api-key` header. */
export const apiKeySecurity: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** The OpenAPI responses of the problems a route may answer with. */
export function problemResponses(...statuses: number[]) {
  return Object.fromEntries(
    statuses.map((status) => [
      status,
      { description: 'A problem', content: { 'application/problem+json': { schema: problemSchema } } },
    ]),
  );
}
