import { afterAll, describe, expect, it, vi } from 'vitest';
import { FreshReads } from '../../src/http/inbox/fresh-reads.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import {
  payCallId,
  readServerSentEvents,
  signInToInbox,
  streamedOversizedBody,
  useHttpTestApi,
} from './http-test-kit.js';

// Two API servers over one worker stand for two API processes behind a load balancer.
const { tenantA, tenantB, keys, apiKeys, api } = useHttpTestApi();
const servers: ApiServer[] = [];

// The other API processes close before the hook closes the first one: vitest runs afterAll hooks in reverse.
afterAll(async () => {
  await Promise.all(servers.map((server) => server.close()));
});

async function anotherApiProcess(keysOfIt = apiKeys, options: { maxBodyBytes?: number } = {}): Promise<string> {
  const server = await startApiServer({ client: api.worker.client, apiKeys: keysOfIt, ...options });
  servers.push(server);
  return server.url;
}

/** The CSRF token the inbox page at `url` gives a signed-in browser, or undefined on the sign-in page. */
async function csrfTokenOnPage(url: string, cookie: string): Promise<string | undefined> {
  const page = await (await fetch(`${url}/`, { headers: { cookie } })).text();
  return /<meta name="relay-csrf" content="([^"]+)"/.exec(page)?.[1];
}

describe('inbox sessions across API processes', () => {
  it('a sign-in on one process decides on another, and survives a restart of the first', async () => {
    const runId = await startPayment();
    const first = await anotherApiProcess();
    const second = await anotherApiProcess();
    const cookie = await signInToInbox(first, keys.alice);
    const csrf = await csrfTokenOnPage(first, cookie);
    expect(csrf).toBeDefined();
    expect(await csrfTokenOnPage(second, cookie)).toBe(csrf);

    // The list follows Temporal's visibility, which lags the run by a moment.
    await expect.poll(() => pendingRunIds(second, cookie), { timeout: 10_000 }).toContain(runId);

    await servers.shift()?.close();
    const restarted = await anotherApiProcess();
    const approved = await fetch(`${restarted}/inbox/runs/${runId}/approve`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-relay-csrf': csrf ?? '' },
      body: JSON.stringify({ toolCallId: payCallId }),
    });
    expect(approved.status).toBe(200);
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    const events = await api.worker.client.events(runId);
    expect(events.find((event) => event.type === 'tool_approved')).toMatchObject({ approver: 'alice' });
  });

  it('refuses a change without the session’s CSRF token on any process', async () => {
    const cookie = await signInToInbox(await anotherApiProcess(), keys.alice);
    const otherCookie = await signInToInbox(api.url, keys.unnamedA);
    const wrongToken = await csrfTokenOnPage(api.url, otherCookie);
    for (const headers of [{ cookie }, { cookie, 'x-relay-csrf': wrongToken ?? 'x' }]) {
      const response = await fetch(`${api.url}/inbox/runs/run_none/cancel`, { method: 'POST', headers });
      expect(response.status).toBe(403);
    }
  });

  it('keeps sessions where a key was added, ends them where their own key was rotated, and signs out', async () => {
    const cookie = await signInToInbox(api.url, keys.alice);
    const withAnotherKey = await anotherApiProcess(new Map([...apiKeys, ['key-of-a-new-tenant', { tenantId: 'new' }]]));
    expect((await fetch(`${withAnotherKey}/inbox/approvals`, { headers: { cookie } })).status).toBe(200);
    const aliceRotated = new Map([...apiKeys].filter(([key]) => key !== keys.alice));
    aliceRotated.set(`${keys.alice}-new`, { tenantId: tenantA });
    const rotated = await anotherApiProcess(aliceRotated);
    expect((await fetch(`${rotated}/inbox/approvals`, { headers: { cookie } })).status).toBe(401);
    expect(await csrfTokenOnPage(rotated, cookie)).toBeUndefined();

    const signedOut = await fetch(`${api.url}/inbox/session/end`, {
      method: 'POST',
      headers: { cookie },
      redirect: 'manual',
    });
    expect(signedOut.status).toBe(303);
    expect(signedOut.headers.get('set-cookie')).toMatch(/^relay_e_inbox=;.*Max-Age=0/);
  });

  it('reads a tenant’s live list once for all its people on a process, and another tenant’s for itself', async () => {
    const runId = await startPayment();
    const url = await anotherApiProcess();
    const tenantAPeople = await Promise.all(Array.from({ length: 6 }, () => signInToInbox(url, keys.alice)));
    const bob = await signInToInbox(url, keys.bob);
    await expect.poll(() => pendingRunIds(url, tenantAPeople[0] ?? ''), { timeout: 10_000 }).toContain(runId);
    const listed = vi.spyOn(api.worker.client, 'listPendingApprovals');
    const left = new AbortController();
    try {
      const firstLists = await Promise.all(
        [...tenantAPeople, bob].map((cookie) => firstLiveList(url, cookie, left.signal)),
      );
      expect(firstLists.slice(0, 6).every((list) => list.includes(runId))).toBe(true);
      expect(firstLists[6]).not.toContain(runId);
      const readsFor = (tenantId: string) =>
        listed.mock.calls.filter(([options]) => options?.tenantId === tenantId).length;
      // Six people, one read (two if their streams opened across half an interval); one each before.
      expect(readsFor(tenantA)).toBeLessThanOrEqual(2);
      expect(readsFor(tenantB)).toBeGreaterThanOrEqual(1);
    } finally {
      left.abort();
      listed.mockRestore();
    }
  });

  it('reads a run’s state once for the pages that ask together, each answer started after its page asked', async () => {
    const runId = await startPayment();
    const url = await anotherApiProcess();
    const pages = await Promise.all(Array.from({ length: 6 }, () => signInToInbox(url, keys.alice)));
    const bob = await signInToInbox(url, keys.bob);
    const original = api.worker.client.getRun.bind(api.worker.client);
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const getRun = vi.spyOn(api.worker.client, 'getRun').mockImplementation(async (...args) => {
      await held;
      return original(...args);
    });
    // Where each page's request reaches the shared read: the pages that asked, whether or not a read started for them.
    const asked = vi.spyOn(FreshReads.prototype, 'read');
    const askedBy = (tenantId: string) =>
      asked.mock.calls.filter(([key]) => key === JSON.stringify([tenantId, runId])).length;
    try {
      const states = pages.map((cookie) => fetch(`${url}/inbox/runs/${runId}/state`, { headers: { cookie } }));
      const foreign = fetch(`${url}/inbox/runs/${runId}/state`, { headers: { cookie: bob } });
      // The first read is held until every page has asked, so the others wait for it and share the read after it.
      await vi.waitFor(() => expect([askedBy(tenantA), askedBy(tenantB)]).toEqual([6, 1]), { timeout: 10_000 });
      expect(getRun.mock.calls.map(([, scope]) => scope?.tenantId).sort()).toEqual([tenantA, tenantB].sort());
      release();
      for (const response of await Promise.all(states)) {
        expect(response.status).toBe(200);
        expect(((await response.json()) as { snapshot: { runId: string } }).snapshot.runId).toBe(runId);
      }
      expect((await foreign).status).toBe(404);
      const readsFor = (tenantId: string) => getRun.mock.calls.filter(([, scope]) => scope?.tenantId === tenantId);
      // Six pages, two reads: the held one, and one started after the other five asked, which they share. The other
      // tenant's page got a read of its own.
      expect(readsFor(tenantA).length).toBe(2);
      expect(readsFor(tenantB).length).toBe(1);
    } finally {
      asked.mockRestore();
      getRun.mockRestore();
    }
  });

  it('refuses a key that is not configured, with no cookie', async () => {
    const response = await fetch(`${api.url}/inbox/session`, {
      method: 'POST',
      body: new URLSearchParams({ apiKey: 'not-a-key' }),
      redirect: 'manual',
    });
    expect(response.status).toBe(401);
    expect(response.headers.get('set-cookie')).toBeNull();
  });

  it('refuses a sign-in body over the body limit before reading it whole, declared or streamed', async () => {
    const url = await anotherApiProcess(apiKeys, { maxBodyBytes: 4_096 });
    const declared = await fetch(`${url}/inbox/session`, {
      method: 'POST',
      body: new URLSearchParams({ apiKey: 'x'.repeat(8_192) }),
      redirect: 'manual',
    });
    expect(declared.status).toBe(413);
    expect(await declared.json()).toMatchObject({ code: 'payload_too_large' });

    const { body, chunksRead } = streamedOversizedBody(new TextEncoder().encode(`apiKey=${'x'.repeat(16 * 1024)}`));
    const streamed = await fetch(`${url}/inbox/session`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body,
      duplex: 'half',
      redirect: 'manual',
    });
    expect(streamed.status).toBe(413);
    expect(chunksRead()).toBeLessThan(1_000);

    // A sign-in within the limit still signs in.
    expect(await signInToInbox(url, keys.alice)).toMatch(/^relay_e_inbox=/);
  });

  it('answers a decision whose body is not JSON with 400 invalid_json, and one over the limit with 413', async () => {
    const url = await anotherApiProcess(apiKeys, { maxBodyBytes: 4_096 });
    const cookie = await signInToInbox(url, keys.alice);
    const headers = {
      cookie,
      'content-type': 'application/json',
      'x-relay-csrf': (await csrfTokenOnPage(url, cookie)) ?? '',
    };

    const malformed = await fetch(`${url}/inbox/runs/run_none/approve`, {
      method: 'POST',
      headers,
      body: '{"toolCallId": "call_1_0",',
    });
    expect(malformed.status).toBe(400);
    expect(await malformed.json()).toMatchObject({ code: 'invalid_json' });

    const oversized = await fetch(`${url}/inbox/runs/run_none/approve`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ toolCallId: payCallId, input: { note: 'x'.repeat(8_192) } }),
    });
    expect(oversized.status).toBe(413);
    expect(await oversized.json()).toMatchObject({ code: 'payload_too_large' });
  });
});

describe('decisions and cancels from the inbox', () => {
  async function signedInHeaders(): Promise<Record<string, string>> {
    const cookie = await signInToInbox(api.url, keys.alice);
    return {
      cookie,
      'content-type': 'application/json',
      'x-relay-csrf': (await csrfTokenOnPage(api.url, cookie)) ?? '',
    };
  }

  it('refuses a decision reason longer than the run keeps (1,000 characters), and records one of 1,000 whole', async () => {
    const runId = await startPayment();
    const headers = await signedInHeaders();
    const reject = (reason: string) =>
      fetch(`${api.url}/inbox/runs/${runId}/reject`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ toolCallId: payCallId, reason }),
      });
    const tooLong = await reject('x'.repeat(1_001));
    expect(tooLong.status).toBe(422);
    expect(await tooLong.json()).toMatchObject({ code: 'invalid_input', issues: [{ path: 'reason' }] });
    const reason = 'y'.repeat(1_000);
    expect((await reject(reason)).status).toBe(200);
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    const events = await api.worker.client.events(runId);
    expect(events.find((event) => event.type === 'tool_rejected')).toMatchObject({ reason });
  });

  it('answers a cancel of a run that has ended as the API does, with the status it ended with', async () => {
    const started = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      json: { model: 'scripted:test', prompt: 'hello' },
    });
    const { runId } = (await started.json()) as { runId: string };
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    const fromInbox = await fetch(`${api.url}/inbox/runs/${runId}/cancel`, {
      method: 'POST',
      headers: await signedInHeaders(),
    });
    const fromApi = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
    expect([fromInbox.status, await fromInbox.json()]).toEqual([200, { runId, status: 'completed' }]);
    expect([fromApi.status, await fromApi.json()]).toEqual([200, { runId, status: 'completed' }]);
  });

  it('records a cancel in Temporal under the signed-in key’s name', async () => {
    const runId = await startPayment();
    const cancelled = await fetch(`${api.url}/inbox/runs/${runId}/cancel`, {
      method: 'POST',
      headers: await signedInHeaders(),
    });
    expect(cancelled.status).toBe(202);
    const history = await api.worker.client.temporal.workflow.getHandle(runId).fetchHistory();
    const requests = (history.events ?? []).flatMap(
      (event) => event.workflowExecutionCancelRequestedEventAttributes ?? [],
    );
    expect(requests).toEqual([expect.objectContaining({ identity: 'relay-e: alice' })]);
  });
});

/** The run ids of the first list the live stream at `url` sends. */
async function firstLiveList(url: string, cookie: string, signal: AbortSignal): Promise<string[]> {
  const response = await fetch(`${url}/inbox/approvals/stream`, { headers: { cookie }, signal });
  for await (const message of readServerSentEvents(response)) {
    if ('comment' in message) continue;
    const { approvals } = JSON.parse(message.data) as { approvals: Array<{ runId: string }> };
    return approvals.map((approval) => approval.runId);
  }
  throw new Error('The live list ended before its first list');
}

async function pendingRunIds(url: string, cookie: string): Promise<string[]> {
  const response = await fetch(`${url}/inbox/approvals`, { headers: { cookie } });
  expect(response.status).toBe(200);
  const { approvals } = (await response.json()) as { approvals: Array<{ runId: string }> };
  return approvals.map((approval) => approval.runId);
}

async function startPayment(): Promise<string> {
  const started = await api.request('/v1/runs', {
    method: 'POST',
    key: keys.alice,
    json: { model: 'scripted:test', prompt: 'pay B', approvalTimeout: '1h' },
  });
  expect(started.status).toBe(201);
  const { runId } = (await started.json()) as { runId: string };
  await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
  return runId;
}
