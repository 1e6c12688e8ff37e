import { Validator } from '@seriousme/openapi-schema-validator';
import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../../src/client/relay-client.js';
import { createApi } from '../../../src/http/create-api.js';

/** The document and the reference page need no Temporal: a client that never connects serves them. */
let client: RelayClient;
let api: ReturnType<typeof createApi>;

type Operation = {
  operationId?: string;
  security?: unknown[];
  responses: Record<string, { content?: Record<string, { examples?: Record<string, { value: unknown }> }> }>;
};
type Document = {
  openapi: string;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
};

beforeAll(async () => {
  client = await RelayClient.connect({ connection: Connection.lazy({ address: '127.0.0.1:1' }), taskQueue: 'none' });
  api = createApi({ client, apiKeys: new Map([['key-a', { tenantId: 'a' }]]), publicUrl: 'https://relay.example' });
});

afterAll(async () => {
  await client?.close();
});

async function readDocument(): Promise<Document> {
  const response = await api.request('/v1/openapi.json');
  expect(response.status).toBe(200);
  return (await response.json()) as Document;
}

function operationsOf(document: Document) {
  return Object.entries(document.paths).flatMap(([path, item]) =>
    Object.entries(item).map(([method, operation]) => ({ route: `${method.toUpperCase()} ${path}`, operation })),
  );
}

describe('GET /v1/openapi.json', () => {
  it('is served without a key and is a valid OpenAPI 3.1 document', async () => {
    const document = await readDocument();
    const result = await new Validator().validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect([result.valid, document.openapi]).toEqual([true, '3.1.0']);
    expect(document.servers).toEqual([expect.objectContaining({ url: 'https://relay.example' })]);
    const { openapi: _version, ...withoutVersion } = document;
    expect((await new Validator().validate(withoutVersion)).valid).toBe(false);
  });

  it('documents every route the API serves, each with its own operationId', async () => {
    const document = await readDocument();
    const operations = operationsOf(document);
    // The web inbox's pages and its form posts are for people, not for API clients: the document leaves them out.
    const served = api.routes
      .filter((route) => route.method !== 'ALL' && !route.path.startsWith('/inbox') && route.path !== '/')
      .map((route) => `${route.method} ${route.path.replace(/:(\w+)/g, '{$1}')}`);
    expect(operations.map(({ route }) => route).sort()).toEqual([...new Set(served)].sort());
    const withoutId = operations.filter(({ operation }) => !operation.operationId).map(({ route }) => route);
    expect(withoutId).toEqual([]);
    const ids = operations.map(({ operation }) => operation.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it('gives every error response a problem+json example whose status and code are the response’s', async () => {
    const examples = operationsOf(await readDocument()).flatMap(({ route, operation }) =>
      Object.entries(operation.responses)
        .filter(([status]) => Number(status) >= 400)
        .map(([status, response]) => ({
          route,
          status: Number(status),
          examples: Object.entries(response.content?.['application/problem+json']?.examples ?? {}),
        })),
    );
    expect(examples.length).toBeGreaterThan(20);
    for (const { route, status, examples: named } of examples) {
      expect(named.length, `${route} ${status}`).toBeGreaterThan(0);
      for (const [code, { value }] of named) {
        expect(value, `${route} ${status} ${code}`).toMatchObject({
          type: `urn:relay-e:problem:${code}`,
          status,
          code,
          title: expect.any(String) as unknown,
          detail: expect.any(String) as unknown,
        });
      }
    }
  });

  it('marks only the document, its page and /healthz as open to callers without a key', async () => {
    const open = operationsOf(await readDocument())
      .filter(({ operation }) => operation.security?.length === 0)
      .map(({ route }) => route);
    expect(open.sort()).toEqual(['GET /healthz', 'GET /v1/openapi.json', 'GET /v1/reference']);
  });
});

describe('GET /v1/reference', () => {
  it('shows every operation to a browser without a key, with nothing loaded from elsewhere', async () => {
    const response = await api.request('/v1/reference');
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toContain('text/html');
    expect(response.headers.get('content-security-policy')).toContain("default-src 'none'");
    const page = await response.text();
    for (const { operation } of operationsOf(await readDocument()))
      expect(page).toContain(`id="${operation.operationId}"`);
    expect(page).not.toMatch(/<script|<link|src=/i);
    expect(page).toContain('<a href="#schema-RunSnapshot">');
    expect(page).toContain('urn:relay-e:problem:run_not_found');
  });
});
