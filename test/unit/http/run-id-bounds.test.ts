import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import type { MockInstance } from 'vitest';
import { createApi } from '../../../src/http/create-api.js';
import { RelayError } from '../../../src/shared/errors.js';
import { maxRunIdLength } from '../../../src/shared/run-ids.js';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';

/** Every read of a run is stubbed to answer as Temporal does for an id it does not know; none may be reached. */
const client = useUnconnectedClient();
const key = 'key-alice-0123456789';
const ref = `sha256:${'0'.repeat(64)}`;
let api: ReturnType<typeof createApi>;
let inbox: { cookie: string; csrf: string };
let runReads: MockInstance[] = [];

beforeAll(async () => {
  api = createApi({ client: client(), apiKeys: new Map([[key, { tenantId: 'acme', name: 'alice' }]]) });
  const signedIn = await api.request('/inbox/session', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: `apiKey=${key}`,
  });
  const cookie = signedIn.headers.get('set-cookie')?.split(';')[0] ?? '';
  const page = await (await api.request('/', { headers: { cookie } })).text();
  inbox = { cookie, csrf: /name="relay-csrf" content="([^"]+)"/.exec(page)?.[1] ?? '' };
  expect(inbox.csrf).not.toBe('');
});

/** Stubs every client method a run route calls, each answering `run_not_found`, and returns the stubs. */
function stubRunReads(): MockInstance[] {
  const notFound = (runId: string) => Promise.reject(new RelayError('run_not_found', `Run '${runId}' not found`));
  const methods = ['getRun', 'events', 'inspect', 'approve', 'reject', 'cancel', 'toolCatalog', 'assertRunExists'];
  runReads = methods.map((method) =>
    vi
      .spyOn(client() as unknown as Record<string, (runId: string) => Promise<never>>, method)
      .mockImplementation(notFound),
  );
  return runReads;
}

afterEach(() => {
  for (const stub of runReads) stub.mockRestore();
  runReads = [];
});

/** Every API and inbox request that names a run, each with its headers and body. */
function requestsNaming(id: string): Array<[string, RequestInit]> {
  const path = encodeURIComponent(id);
  const apiKey = { authorization: `Bearer ${key}` };
  const apiJson = { ...apiKey, 'content-type': 'application/json' };
  const inboxGet = { cookie: inbox.cookie };
  const inboxPost = { cookie: inbox.cookie, 'x-relay-csrf': inbox.csrf, 'content-type': 'application/json' };
  const decision = JSON.stringify({ toolCallId: 'call_1_0', reason: 'no' });
  return [
    [`/v1/runs/${path}`, { headers: apiKey }],
    [`/v1/runs/${path}/events`, { headers: apiKey }],
    [`/v1/runs/${path}/approve`, { method: 'POST', headers: apiJson, body: decision }],
    [`/v1/runs/${path}/reject`, { method: 'POST', headers: apiJson, body: decision }],
    [`/v1/runs/${path}/cancel`, { method: 'POST', headers: apiKey }],
    [`/v1/runs/${path}/stored/${ref}`, { headers: apiKey }],
    [`/inbox/runs/${path}`, { headers: inboxGet }],
    [`/inbox/runs/${path}/state`, { headers: inboxGet }],
    [`/inbox/runs/${path}/events`, { headers: inboxGet }],
    [`/inbox/runs/${path}/events`, { method: 'HEAD', headers: inboxGet }],
    [`/inbox/runs/${path}/check`, { method: 'POST', headers: inboxPost, body: decision }],
    [`/inbox/runs/${path}/approve`, { method: 'POST', headers: inboxPost, body: decision }],
    [`/inbox/runs/${path}/reject`, { method: 'POST', headers: inboxPost, body: decision }],
    [`/inbox/runs/${path}/cancel`, { method: 'POST', headers: inboxPost }],
    [`/inbox/runs?id=${path}`, { headers: inboxGet }],
  ];
}

describe('a run id in a path', () => {
  it.each([
    ['one character longer than any run’s', maxRunIdLength + 1],
    ['of a megabyte', 1_048_576],
  ])(
    'is refused when %s with 422 invalid_input naming it, by the API and the inbox alike, before any run is read',
    async (_length, length) => {
      const reads = stubRunReads();
      for (const [path, init] of requestsNaming('r'.repeat(length))) {
        const route = `${init.method ?? 'GET'} ${path.slice(0, 40)}`;
        const response = await api.request(path, init);
        expect(response.status, route).toBe(422);
        expect(response.headers.get('content-type'), route).toBe('application/problem+json');
        if (init.method === 'HEAD') continue;
        const problem = (await response.json()) as { code: string; detail: string; issues: unknown[] };
        expect(problem, route).toMatchObject({
          code: 'invalid_input',
          issues: [expect.objectContaining({ path: 'id' })],
        });
        expect(problem.detail, route).toContain(`<=${maxRunIdLength} characters`);
      }
      for (const read of reads) expect(read).not.toHaveBeenCalled();
    },
  );

  it('is refused when the inbox’s run form sends none, rather than sent round to a page of no run', async () => {
    const response = await api.request('/inbox/runs?id=', { headers: { cookie: inbox.cookie } });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({
      code: 'invalid_input',
      issues: [expect.objectContaining({ path: 'id' })],
    });
  });

  it('is read when it is as long as a run’s id can be, by the API and the inbox alike', async () => {
    const [getRun] = stubRunReads();
    const id = 'r'.repeat(maxRunIdLength);
    for (const path of [`/v1/runs/${id}`, `/inbox/runs/${id}/state`]) {
      const headers = path.startsWith('/v1') ? { authorization: `Bearer ${key}` } : { cookie: inbox.cookie };
      const response = await api.request(path, { headers });
      expect(response.status, path).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'run_not_found' });
    }
    expect(getRun).toHaveBeenCalledTimes(2);
    expect(getRun).toHaveBeenCalledWith(id, { tenantId: 'acme' });
  });
});
