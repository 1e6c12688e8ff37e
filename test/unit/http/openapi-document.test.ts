import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Validator } from '@seriousme/openapi-schema-validator';
import { beforeAll, describe, expect, it } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';
import { createApi } from '../../../src/http/create-api.js';

/** The document and the reference page need no Temporal: a client that never connects serves them. */
const client = useUnconnectedClient();
let api: ReturnType<typeof createApi>;

type Schema = { $ref?: string; properties?: Record<string, Schema>; items?: Schema; allOf?: Schema[] };
type Content = Record<string, { schema?: Schema; examples?: Record<string, { value: unknown }> }>;
type Link = { operationId: string; parameters?: Record<string, string>; requestBody?: Record<string, string> };
type Operation = {
  operationId?: string;
  security?: unknown[];
  requestBody?: { content: Content };
  responses: Record<string, { content?: Content; links?: Record<string, Link>; headers?: Record<string, unknown> }>;
};
type Document = {
  openapi: string;
  servers?: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
  components?: { schemas?: Record<string, Schema> };
};

beforeAll(async () => {
  api = createApi({
    client: client(),
    apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]),
    publicUrl: 'https://relay.example',
  });
});

/** The paragraph of docs/runs-and-approvals.md that lists every event type, from `Events:` to `Each has`. */
function eventLogParagraph(): string {
  const doc = readFileSync(path.join(import.meta.dirname, '../../../docs/runs-and-approvals.md'), 'utf8');
  const start = doc.indexOf('Events: `run_started`');
  return doc.slice(start, doc.indexOf('Each\nhas `seq`', start));
}

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
    // The web inbox's pages, its form posts and the browser's icon are for people, not for API clients: the document
    // leaves them out.
    const forPeople = (path: string) => path.startsWith('/inbox') || path === '/' || path === '/favicon.ico';
    const served = api.routes
      .filter((route) => route.method !== 'ALL' && !forPeople(route.path))
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

  it('documents the problems of a body every /v1 POST parses, and a run no worker can serve', async () => {
    const operations = operationsOf(await readDocument());
    const codesOf = (operation: Operation) =>
      Object.values(operation.responses).flatMap((response) =>
        Object.keys(response.content?.['application/problem+json']?.examples ?? {}),
      );
    const posts = operations.filter(({ route }) => route.startsWith('POST /v1/'));
    expect(posts.length).toBeGreaterThan(3);
    for (const { route, operation } of posts) expect(codesOf(operation), route).toContain('invalid_json');
    const start = operations.find(({ route }) => route === 'POST /v1/runs');
    expect(codesOf(start!.operation)).toEqual(expect.arrayContaining(['unknown_tool', 'model_not_configured']));
  });

  it('bounds a decision’s reason by what a run keeps, and a run id by the longest the API creates', async () => {
    const document = await readDocument();
    for (const name of ['ApproveRequest', 'RejectRequest']) {
      expect(document.components?.schemas?.[name]?.properties?.['reason'], name).toMatchObject({ maxLength: 1_000 });
    }
    const getRun = document.paths['/v1/runs/{id}']?.['get'] as {
      parameters?: Array<{ name: string; schema: unknown }>;
    };
    // A 128-character tenant id, `~`, a 200-character chosen id.
    expect(getRun.parameters?.find((parameter) => parameter.name === 'id')?.schema).toMatchObject({ maxLength: 329 });
  });

  it('names in the RunEvent schema every event type the event log documents, and only those', async () => {
    const documented =
      eventLogParagraph()
        .match(/`[a-z_]+`/g)
        ?.map((name) => name.slice(1, -1)) ?? [];
    const { RunEvent } = (await readDocument()).components?.schemas ?? {};
    const named = (RunEvent?.properties?.['type'] as { enum?: string[] } | undefined)?.enum ?? [];
    expect([...named].sort()).toEqual([...new Set(documented)].sort());
    expect(named).toContain('tool_cancelled');
  });

  it('declares the headers the API sends: Retry-After on every 503, Location on a started run', async () => {
    const operations = operationsOf(await readDocument());
    const unavailable = operations.filter(({ operation }) => operation.responses['503']?.content);
    expect(unavailable.length).toBeGreaterThan(5);
    for (const { route, operation } of unavailable) {
      expect(operation.responses['503']?.headers, route).toHaveProperty('Retry-After');
    }
    const started = operations.find(({ operation }) => operation.operationId === 'startRun');
    expect(started?.operation.responses['201']?.headers).toHaveProperty('Location');
  });

  it('documents approval_input_invalid on an approval, which can carry an edit, and not on a rejection', async () => {
    const operations = operationsOf(await readDocument());
    const codesOf = (operationId: string) => {
      const answer = operations.find(({ operation }) => operation.operationId === operationId)?.operation;
      return Object.keys(answer?.responses['422']?.content?.['application/problem+json']?.examples ?? {});
    };
    expect(codesOf('approveToolCall')).toContain('approval_input_invalid');
    expect(codesOf('rejectToolCall')).not.toContain('approval_input_invalid');
    expect(codesOf('rejectToolCall')).toContain('invalid_input');
  });

  it('says in its description which routes need no key, as the routes do', async () => {
    const { info } = (await readDocument()) as Document & { info: { description: string } };
    expect(info.description).toContain('`/healthz` and `/readyz`');
  });

  it('marks only the document, its page, /healthz and /readyz as open to callers without a key', async () => {
    const open = operationsOf(await readDocument())
      .filter(({ operation }) => operation.security?.length === 0)
      .map(({ route }) => route);
    expect(open.sort()).toEqual(['GET /healthz', 'GET /readyz', 'GET /v1/openapi.json', 'GET /v1/reference']);
  });

  it('documents a 503 temporal_unavailable on every route that asks Temporal, /readyz included', async () => {
    const temporalFree = ['GET /healthz', 'GET /v1/openapi.json', 'GET /v1/reference'];
    const asksTemporal = operationsOf(await readDocument()).filter(({ route }) => !temporalFree.includes(route));
    const undocumented = asksTemporal.filter(
      ({ operation }) =>
        !operation.responses['503']?.content?.['application/problem+json']?.examples?.['temporal_unavailable'],
    );

    expect(asksTemporal.map(({ route }) => route)).toContain('GET /readyz');
    expect(undocumented.map(({ route }) => route)).toEqual([]);
  });

  it('links each answer that names a run or a waiting call to the operations that take it, through fields that exist', async () => {
    const document = await readDocument();
    const operations = operationsOf(document);
    const links = operations.flatMap(({ route, operation }) =>
      Object.entries(operation.responses).flatMap(([status, response]) =>
        Object.values(response.links ?? {}).map((link) => ({ from: { route, status, operation }, link })),
      ),
    );
    expect(links.map(({ from, link }) => `${from.route} ${from.status} → ${link.operationId}`).sort()).toEqual([
      'GET /v1/approvals 200 → approveToolCall',
      'GET /v1/approvals 200 → rejectToolCall',
      'GET /v1/runs 200 → cancelRun',
      'GET /v1/runs 200 → followRunEvents',
      'GET /v1/runs 200 → getRun',
      'GET /v1/runs/{id} 200 → approveToolCall',
      'GET /v1/runs/{id} 200 → rejectToolCall',
      'POST /v1/runs 201 → cancelRun',
      'POST /v1/runs 201 → followRunEvents',
      'POST /v1/runs 201 → getRun',
    ]);
    for (const { from, link } of links) {
      const target = operations.find(({ operation }) => operation.operationId === link.operationId);
      expect(target, link.operationId).toBeDefined();
      expect(Object.keys(link.parameters ?? {})).toEqual(
        [...(target?.route.matchAll(/\{(\w+)\}/g) ?? [])].map((m) => m[1]),
      );
      const targetBody = target?.operation.requestBody?.content['application/json']?.schema;
      for (const field of Object.keys(link.requestBody ?? {})) {
        expect(schemaAt(document, targetBody, [field]), `${link.operationId} body ${field}`).toBeDefined();
      }
      // Every expression reads a field the answer (or the request's path) has.
      const answer = from.operation.responses[from.status]?.content?.['application/json']?.schema;
      for (const expression of [...Object.values(link.parameters ?? {}), ...Object.values(link.requestBody ?? {})]) {
        if (expression.startsWith('$request.path.')) {
          expect(from.route).toContain(`{${expression.slice('$request.path.'.length)}}`);
          continue;
        }
        const pointer = /^\$response\.body#\/(.+)$/.exec(expression)?.[1];
        expect(pointer, expression).toBeDefined();
        expect(schemaAt(document, answer, pointer?.split('/') ?? []), `${from.route} ${expression}`).toBeDefined();
      }
    }
  });
});

/** The schema a JSON pointer's segments reach from `schema` (array indexes step into `items`), following refs. */
function schemaAt(document: Document, schema: Schema | undefined, segments: readonly string[]): Schema | undefined {
  const resolved = schema?.$ref ? document.components?.schemas?.[schema.$ref.split('/').at(-1) ?? ''] : schema;
  const [first, ...rest] = segments;
  if (first === undefined || resolved === undefined) return resolved;
  const next = /^\d+$/.test(first) ? resolved.items : resolved.properties?.[first];
  if (next) return schemaAt(document, next, rest);
  // An extended schema is the `allOf` of its base and its added fields.
  return resolved.allOf?.map((part) => schemaAt(document, part, segments)).find((found) => found !== undefined);
}

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
