import { readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { createApi } from '../../../src/http/create-api.js';
import { httpOnlyErrorCodes, toHttpError } from '../../../src/http/http-error.js';
import { RelayError, errorCodes } from '../../../src/shared/errors.js';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';

const httpApiDoc = readFileSync(path.join(import.meta.dirname, '../../../docs/http-api.md'), 'utf8');
/** The rows of the error table in docs/http-api.md: code and status. */
const documented = new Map(
  [...httpApiDoc.matchAll(/^\| `([a-z_]+)` +\| (\d{3}) +\|/gm)].map(([, code, status]) => [code, Number(status)]),
);
const client = useUnconnectedClient();

/** Every problem example the served OpenAPI document gives, as code and status. */
async function servedExamples(): Promise<Map<string, number>> {
  const api = createApi({ client: client(), apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]) });
  const document = (await (await api.request('/v1/openapi.json')).json()) as {
    paths: Record<string, Record<string, { responses: Record<string, { content?: Record<string, unknown> }> }>>;
  };
  const examples = new Map<string, number>();
  for (const operation of Object.values(document.paths).flatMap((item) => Object.values(item))) {
    for (const [status, response] of Object.entries(operation.responses)) {
      const problem = response.content?.['application/problem+json'] as
        { examples?: Record<string, unknown> } | undefined;
      for (const code of Object.keys(problem?.examples ?? {})) examples.set(code, Number(status));
    }
  }
  return examples;
}

describe('the error table in docs/http-api.md', () => {
  it('names every code the engine and the HTTP layer can answer, and no other', () => {
    expect([...documented.keys()].sort()).toEqual([...errorCodes, ...httpOnlyErrorCodes].sort());
  });

  it('gives each engine code the status the API answers it with', () => {
    // A stored payload's own route answers a missing one 404; a run that needs one fails as the operator's matter.
    const byRoute = new Set(['payload_not_found']);
    for (const code of errorCodes.filter((code) => !byRoute.has(code))) {
      const status = toHttpError(new RelayError(code, 'x')).status;
      expect({ code, status: documented.get(code) }).toEqual({ code, status });
    }
  });

  it('gives each code the served document has an example of that example’s status', async () => {
    const examples = await servedExamples();
    expect(examples.size).toBeGreaterThan(10);
    for (const [code, status] of examples) expect({ code, status: documented.get(code) }).toEqual({ code, status });
  });
});
