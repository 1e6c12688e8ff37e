import { describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/shared/run-types.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { httpTestModel, payCallId, promptOf, streamedOversizedBody, useHttpTestApi } from './http-test-kit.js';

const { tenantA, tenantB, keys, apiKeys, kit, api } = useHttpTestApi({ maxBodyBytes: 64 * 1024 });
// A tenant id as long as a key may give (128 characters): its chosen run ids make the longest ids the API creates.
// The key joins the map before the API starts with it in beforeAll.
const longTenantKey = `${keys.alice}-long-tenant`;
apiKeys.set(longTenantKey, { tenantId: `${tenantA}-`.padEnd(128, 'x') });

async function startRun(key: string, body: Record<string, unknown>): Promise<string> {
  const response = await api.request('/v1/runs', { method: 'POST', key, json: { model: 'scripted:test', ...body } });
  expect(response.status).toBe(201);
  const { runId } = (await response.json()) as { runId: string };
  expect(response.headers.get('location')).toBe(`/v1/runs/${runId}`);
  return runId;
}

async function startPaymentAwaitingApproval(key = keys.alice): Promise<string> {
  const runId = await startRun(key, { prompt: 'pay B', approvalTimeout: '1h' });
  await api.waitForRun(runId, key, (run) => run.status === 'awaiting_approval');
  return runId;
}

async function eventsOf(runId: string): Promise<RunEvent[]> {
  return api.worker.client.events(runId);
}

describe('runs over HTTP', () => {
  it('starts a run in the key’s tenant, and the approval it waits for is recorded as the caller’s', async () => {
    const runId = await startRun(keys.alice, { prompt: 'pay B', approvalTimeout: '1h' });
    const waiting = await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    expect(waiting).toMatchObject({ runId, tenantId: tenantA, pendingApprovals: [{ toolCallId: payCallId }] });
    expect(api.ledger.transfers).toHaveLength(0);

    const response = await api.request(`/v1/runs/${runId}/approve`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId, reason: 'invoice 42' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual({
      toolCallId: payCallId,
      toolName: 'transfer_funds',
      decision: 'approve',
      input: { from: 'A', to: 'B', amount: 100 },
    });
    const done = await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    expect(done).toMatchObject({ stopReason: 'final_answer', output: 'done', pendingApprovals: [] });
    expect((await eventsOf(runId)).find((event) => event.type === 'tool_approved')).toMatchObject({
      approver: 'alice',
      reason: 'invoice 42',
      edited: false,
    });
    expect(api.ledger.transfers).toHaveLength(1);
  });

  it('rejects a call without running it and records tenant:<id> for a key without a name', async () => {
    const runId = await startPaymentAwaitingApproval(keys.unnamedA);
    const transfersBefore = api.ledger.transfers.length;
    const response = await api.request(`/v1/runs/${runId}/reject`, {
      method: 'POST',
      key: keys.unnamedA,
      json: { toolCallId: payCallId, reason: 'wrong account' },
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ toolCallId: payCallId, decision: 'reject' });
    await api.waitForRun(runId, keys.unnamedA, (run) => run.status === 'completed');
    expect((await eventsOf(runId)).find((event) => event.type === 'tool_rejected')).toMatchObject({
      approver: `tenant:${tenantA}`,
      reason: 'wrong account',
    });
    expect(api.ledger.transfers).toHaveLength(transfersBefore);
  });

  it('runs the edited input an approver sends instead of the proposed one', async () => {
    const runId = await startPaymentAwaitingApproval();
    const response = await api.request(`/v1/runs/${runId}/approve`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId, input: { from: 'A', to: 'B', amount: 40 } },
    });
    expect(await response.json()).toMatchObject({ input: { amount: 40 } });
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    expect(api.ledger.transfers.at(-1)).toMatchObject({ amount: 40 });
  });

  it('cancels a waiting run, and cancelling it again reports the status it ended with', async () => {
    const runId = await startPaymentAwaitingApproval();
    const first = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
    expect(first.status).toBe(202);
    expect(await first.json()).toEqual({ runId, status: 'cancelling' });
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'cancelled');
    const again = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
    expect(again.status).toBe(200);
    expect(await again.json()).toEqual({ runId, status: 'cancelled' });
  });

  it('serves every route on a run with the longest id it creates: the longest tenant id and chosen id', async () => {
    const started = await api.request('/v1/runs', {
      method: 'POST',
      key: longTenantKey,
      json: { model: 'scripted:test', prompt: 'pay B', approvalTimeout: '1h', runId: 'r'.repeat(200) },
    });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };
    expect(runId).toHaveLength(128 + 1 + 200);
    const read = await api.request(started.headers.get('location') ?? '', { key: longTenantKey });
    expect(read.status).toBe(200);
    await api.waitForRun(runId, longTenantKey, (run) => run.status === 'awaiting_approval');
    const disconnect = new AbortController();
    const events = await api.request(`/v1/runs/${runId}/events`, { key: longTenantKey, signal: disconnect.signal });
    disconnect.abort();
    expect(events.status).toBe(200);
    const rejected = await api.request(`/v1/runs/${runId}/reject`, {
      method: 'POST',
      key: longTenantKey,
      json: { toolCallId: payCallId, reason: 'no' },
    });
    expect(rejected.status).toBe(200);
    await api.waitForRun(runId, longTenantKey, (run) => run.status === 'completed');
    const cancelled = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: longTenantKey });
    expect([cancelled.status, await cancelled.json()]).toEqual([200, { runId, status: 'completed' }]);
  });

  it('refuses to start a second run with an id that is taken', async () => {
    const runId = `http-fixed-${tenantA}`;
    await startRun(keys.alice, { prompt: 'hello', runId });
    const response = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      json: { model: 'scripted:test', prompt: 'hello', runId },
    });
    expect(response.status).toBe(409);
    expect(await response.json()).toMatchObject({ code: 'run_already_exists' });
  });

  it('lists only the caller’s tenant’s pending approvals', async () => {
    const [runOfA, runOfB] = await Promise.all([
      startPaymentAwaitingApproval(keys.alice),
      startPaymentAwaitingApproval(keys.bob),
    ]);
    const listed = async (key: string): Promise<Array<{ runId: string; toolCallId: string }>> => {
      const response = await api.request('/v1/approvals', { key });
      expect(response.status).toBe(200);
      return ((await response.json()) as { approvals: Array<{ runId: string; toolCallId: string }> }).approvals;
    };
    // Visibility trails the run by a moment; wait until both runs are indexed.
    const deadline = Date.now() + 20_000;
    let ofA = await listed(keys.alice);
    let ofB = await listed(keys.bob);
    while (Date.now() < deadline && !(ofA.some((a) => a.runId === runOfA) && ofB.some((b) => b.runId === runOfB))) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      [ofA, ofB] = await Promise.all([listed(keys.alice), listed(keys.bob)]);
    }
    expect(ofA).toContainEqual(
      expect.objectContaining({
        runId: runOfA,
        toolCallId: payCallId,
        toolName: 'transfer_funds',
        model: 'scripted:test',
      }),
    );
    expect(ofA.map((approval) => approval.runId)).not.toContain(runOfB);
    expect(ofB.map((approval) => approval.runId)).toEqual([runOfB]);
    await Promise.all([
      api.request(`/v1/runs/${runOfA}/cancel`, { method: 'POST', key: keys.alice }),
      api.request(`/v1/runs/${runOfB}/cancel`, { method: 'POST', key: keys.bob }),
    ]);
  });

  it('says when more runs wait than the limit let it read, instead of leaving them out silently', async () => {
    const started = await Promise.all([
      startPaymentAwaitingApproval(keys.alice),
      startPaymentAwaitingApproval(keys.alice),
    ]);
    type Listing = { approvals: Array<{ runId: string }>; unanswered: unknown[]; hasMore: boolean };
    const listed = async (limit: number): Promise<Listing> => {
      const response = await api.request(`/v1/approvals?limit=${limit}`, { key: keys.alice });
      expect(response.status).toBe(200);
      return (await response.json()) as Listing;
    };
    // Visibility trails the runs by a moment; other tests' runs of this tenant may wait too.
    await expect
      .poll(async () => (await listed(1_000)).approvals.map((approval) => approval.runId), { timeout: 20_000 })
      .toEqual(expect.arrayContaining(started));
    const all = await listed(1_000);
    const waitingRuns = new Set(all.approvals.map((approval) => approval.runId)).size;
    expect(all.hasMore).toBe(false);
    expect(await listed(waitingRuns)).toMatchObject({ hasMore: false });
    const cut = await listed(waitingRuns - 1);
    expect(cut.hasMore).toBe(true);
    expect(new Set(cut.approvals.map((approval) => approval.runId)).size).toBe(waitingRuns - 1);
    for (const runId of started) await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
  });

  it('lists the calls of a waiting run no worker serves, and names one it would have to ask', async () => {
    // Two runs of tenant B whose only worker is gone: one keeps its waiting call in its memo, the other waits on an
    // input too long to keep there, so listing it takes a query no worker answers (it would wait half a minute).
    const longFrom = 'A'.repeat(20_000);
    const retired = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: {
        scripted: scriptedModel((call) =>
          call.step === 1 && promptOf(call) === 'pay long'
            ? { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: longFrom, to: 'B', amount: 1 } }] }
            : httpTestModel(call),
        ),
      },
    });
    const kept = await retired.client.startRun({ tenantId: tenantB, model: 'scripted:test', prompt: 'pay B' });
    const stuck = await retired.client.startRun({ tenantId: tenantB, model: 'scripted:test', prompt: 'pay long' });
    const waiting = await api.waitForRun(kept.runId, keys.bob, (run) => run.status === 'awaiting_approval');
    await api.waitForRun(stuck.runId, keys.bob, (run) => run.status === 'awaiting_approval');
    await retired.stop();
    // The API of the retired worker's project, on its task queue: an API lists the runs on its own queue only.
    const retiredApi = await startApiServer({ client: retired.client, apiKeys });
    try {
      type Listing = { approvals: Array<{ runId: string }>; unanswered: Array<{ runId: string; error: string }> };
      const listed = async (): Promise<Listing> => {
        const response = await fetch(`${retiredApi.url}/v1/approvals`, {
          headers: { authorization: `Bearer ${keys.bob}` },
        });
        expect(response.status).toBe(200);
        return (await response.json()) as Listing;
      };
      // Visibility trails the runs by a moment.
      await expect
        .poll(async () => (await listed()).approvals.map((approval) => approval.runId), { timeout: 30_000 })
        .toEqual([kept.runId]);
      const listing = await listed();
      expect(listing.approvals.filter((approval) => approval.runId === kept.runId)).toEqual([
        { ...waiting.pendingApprovals[0], runId: kept.runId, model: 'scripted:test' },
      ]);
      expect(listing.approvals.map((approval) => approval.runId)).not.toContain(stuck.runId);
      expect(listing.unanswered).toEqual([{ runId: stuck.runId, error: expect.any(String) as unknown }]);
      // A while after its last poll the server stops waiting for the retired queue's worker and refuses the query a
      // second before its deadline ("no poller seen"): the list names the run all the same.
      await expect
        .poll(async () => (await listed()).unanswered, { timeout: 60_000, interval: 1_000 })
        .toEqual([{ runId: stuck.runId, error: expect.stringContaining('no worker has polled') as unknown }]);
    } finally {
      await retiredApi.close();
    }
    for (const { runId } of [kept, stuck]) await kit.temporal.workflow.getHandle(runId).terminate('test done');
  }, 120_000);
});

describe('tenancy and authentication', () => {
  const routes = (runId: string): Array<[string, string, unknown?]> => [
    ['GET', `/v1/runs/${runId}`],
    ['GET', `/v1/runs/${runId}/events`],
    ['POST', `/v1/runs/${runId}/approve`, { toolCallId: payCallId }],
    ['POST', `/v1/runs/${runId}/reject`, { toolCallId: payCallId }],
    ['POST', `/v1/runs/${runId}/cancel`],
  ];

  it('answers every route on another tenant’s run exactly as for a run that does not exist, and changes nothing', async () => {
    const runId = await startPaymentAwaitingApproval(keys.alice);
    const missing = `run_missing_${tenantA}`;
    for (const [[method, path, json], [, missingPath, missingJson]] of routes(runId).map(
      (route, index) => [route, routes(missing)[index]!] as const,
    )) {
      const foreign = await api.request(path, { method, key: keys.bob, json });
      const unknown = await api.request(missingPath, { method, key: keys.bob, json: missingJson });
      expect([foreign.status, unknown.status], `${method} ${path}`).toEqual([404, 404]);
      const [foreignBody, unknownBody] = (await Promise.all([foreign.json(), unknown.json()])) as Array<{
        detail: string;
      }>;
      expect(foreign.headers.get('content-type')).toBe('application/problem+json');
      expect({ ...foreignBody, detail: foreignBody?.detail.replace(runId, '<id>') }).toEqual({
        ...unknownBody,
        detail: unknownBody?.detail.replace(missing, '<id>'),
      });
      expect(foreignBody).toMatchObject({ status: 404, code: 'run_not_found' });
    }
    const still = await api.waitForRun(runId, keys.alice, () => true);
    expect(still.status).toBe('awaiting_approval');
    await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
  });

  it('answers 401 to every route without a key or with an unknown one, and serves /healthz and the OpenAPI document without one', async () => {
    const paths: Array<[string, string]> = [
      ['POST', '/v1/runs'],
      ['GET', '/v1/runs'],
      ['GET', '/v1/approvals'],
      ...routes('run_x').map(([method, path]) => [method, path] as [string, string]),
    ];
    for (const [method, path] of paths) {
      const anonymous = await api.request(path, { method });
      const wrongKey = await api.request(path, { method, key: 'not-a-key' });
      const wrongHeader = await api.request(path, { method, headers: { 'x-api-key': `${keys.alice}x` } });
      expect([anonymous.status, wrongKey.status, wrongHeader.status], `${method} ${path}`).toEqual([401, 401, 401]);
      expect(await anonymous.json()).toMatchObject({ code: 'unauthorized', status: 401 });
    }
    const byHeader = await api.request('/v1/approvals', { headers: { 'x-api-key': keys.bob } });
    expect(byHeader.status).toBe(200);
    const health = await api.request('/healthz');
    expect([health.status, await health.json()]).toEqual([200, { status: 'ok' }]);
    expect((await api.request('/v1/openapi.json')).status).toBe(200);
  });
});

describe('problems', () => {
  async function problemOf(response: Response) {
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    return (await response.json()) as {
      status: number;
      code: string;
      title: string;
      detail: string;
      type: string;
      issues?: Array<{ path: string; message: string }>;
    };
  }

  it('answers 400 invalid_json to a body that is not JSON', async () => {
    const response = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      headers: { 'content-type': 'application/json' },
      body: '{"model": "scripted:test",',
    });
    expect(response.status).toBe(400);
    expect(await problemOf(response)).toMatchObject({
      status: 400,
      code: 'invalid_json',
      type: 'urn:relay-e:problem:invalid_json',
    });
  });

  it('answers 422 invalid_input naming the path of every schema violation', async () => {
    const response = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      json: { model: 'scripted:test', maxSteps: 'ten', messages: [{ role: 'robot', content: 'hi' }] },
    });
    expect(response.status).toBe(422);
    const problem = await problemOf(response);
    expect(problem.code).toBe('invalid_input');
    expect(problem.issues?.map((issue) => issue.path)).toEqual(
      expect.arrayContaining(['maxSteps', 'messages[0].role']),
    );
  });

  it('refuses a tenantId in the body, since the tenant comes from the key', async () => {
    const response = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      json: { model: 'scripted:test', prompt: 'hello', tenantId: tenantB },
    });
    expect(response.status).toBe(422);
    expect((await problemOf(response)).issues).toEqual([
      { path: 'tenantId', message: 'The tenant comes from the API key, not the body', code: 'unrecognized_keys' },
    ]);
  });

  it('refuses an approver in a decision, since the approver is the caller', async () => {
    const response = await api.request('/v1/runs/any/approve', {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId, approver: 'mallory' },
    });
    expect(response.status).toBe(422);
    expect((await problemOf(response)).issues).toEqual([expect.objectContaining({ path: 'approver' })]);
  });

  it('answers 413 to an oversized body whether or not it declares its length', async () => {
    const big = JSON.stringify({ model: 'scripted:test', prompt: 'x'.repeat(100 * 1024) });
    const declared = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      headers: { 'content-type': 'application/json' },
      body: big,
    });
    expect(declared.status).toBe(413);
    expect((await problemOf(declared)).code).toBe('payload_too_large');

    const { body, chunksRead } = streamedOversizedBody(new TextEncoder().encode('x'.repeat(16 * 1024)));
    const streamed = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      headers: { 'content-type': 'application/json' },
      body,
      duplex: 'half',
    });
    expect(streamed.status).toBe(413);
    expect((await problemOf(streamed)).code).toBe('payload_too_large');
    expect(chunksRead()).toBeLessThan(1_000);
  });

  it('answers 404 run_not_found for a run that does not exist', async () => {
    const response = await api.request('/v1/runs/run_does_not_exist', { key: keys.alice });
    expect(response.status).toBe(404);
    expect(await problemOf(response)).toMatchObject({ code: 'run_not_found', title: 'Run not found' });
  });

  it('answers 409 approval_not_pending to a decision on a call already decided or never proposed', async () => {
    const runId = await startPaymentAwaitingApproval();
    const decide = (toolCallId: string) =>
      api.request(`/v1/runs/${runId}/reject`, { method: 'POST', key: keys.alice, json: { toolCallId } });
    const unknown = await decide('no_such_call');
    expect(unknown.status).toBe(409);
    expect((await problemOf(unknown)).code).toBe('approval_not_pending');
    expect((await decide(payCallId)).status).toBe(200);
    const twice = await decide(payCallId);
    expect(twice.status).toBe(409);
    expect((await problemOf(twice)).code).toBe('approval_not_pending');
  });

  it('answers 422 approval_input_invalid to edited input that fails the tool’s schema, and the call stays pending', async () => {
    const runId = await startPaymentAwaitingApproval();
    const response = await api.request(`/v1/runs/${runId}/approve`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId, input: { from: 'A', to: 'B', amount: -5 } },
    });
    expect(response.status).toBe(422);
    const problem = await problemOf(response);
    expect(problem.code).toBe('approval_input_invalid');
    expect(problem.issues?.map((issue) => issue.path)).toEqual(['amount']);
    const still = await api.waitForRun(runId, keys.alice, () => true);
    expect(still.pendingApprovals.map((approval) => approval.toolCallId)).toEqual([payCallId]);
    await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
  });

  it('refuses a decision reason longer than the run keeps (1,000 characters), and records one of 1,000 whole', async () => {
    const runId = await startPaymentAwaitingApproval();
    for (const decision of ['approve', 'reject']) {
      const tooLong = await api.request(`/v1/runs/${runId}/${decision}`, {
        method: 'POST',
        key: keys.alice,
        json: { toolCallId: payCallId, reason: 'x'.repeat(1_001) },
      });
      expect(tooLong.status, decision).toBe(422);
      const problem = await problemOf(tooLong);
      expect([problem.code, problem.issues?.map((issue) => issue.path)]).toEqual(['invalid_input', ['reason']]);
    }
    const reason = 'y'.repeat(1_000);
    const rejected = await api.request(`/v1/runs/${runId}/reject`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId, reason },
    });
    expect(rejected.status).toBe(200);
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'completed');
    expect((await eventsOf(runId)).find((event) => event.type === 'tool_rejected')).toMatchObject({ reason });
  });

  it('answers 404 to an unknown route and 405 with Allow to a known route with the wrong method', async () => {
    const unknown = await api.request('/v1/nothing-here', { key: keys.alice });
    expect(unknown.status).toBe(404);
    expect((await problemOf(unknown)).code).toBe('not_found');
    const wrongMethod = await api.request('/v1/runs/abc', { method: 'DELETE', key: keys.alice });
    expect(wrongMethod.status).toBe(405);
    expect(wrongMethod.headers.get('allow')).toBe('GET');
    expect((await problemOf(wrongMethod)).code).toBe('method_not_allowed');
  });
});

describe('GET /v1/openapi.json', () => {
  it('describes every route, its schemas and the API-key security schemes as OpenAPI 3.1', async () => {
    const response = await api.request('/v1/openapi.json');
    expect(response.status).toBe(200);
    const document = (await response.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { securitySchemes: Record<string, unknown>; schemas: Record<string, unknown> };
    };
    expect(document.openapi).toBe('3.1.0');
    expect(Object.fromEntries(Object.entries(document.paths).map(([path, item]) => [path, Object.keys(item)]))).toEqual(
      {
        '/healthz': ['get'],
        '/readyz': ['get'],
        '/v1/openapi.json': ['get'],
        '/v1/reference': ['get'],
        '/v1/runs': ['post', 'get'],
        '/v1/runs/{id}': ['get'],
        '/v1/runs/{id}/events': ['get'],
        '/v1/runs/{id}/approve': ['post'],
        '/v1/runs/{id}/reject': ['post'],
        '/v1/runs/{id}/cancel': ['post'],
        '/v1/approvals': ['get'],
        '/v1/tools': ['get'],
        '/v1/runs/{id}/stored/{ref}': ['get'],
      },
    );
    expect(Object.keys(document.components.securitySchemes).sort()).toEqual(['apiKeyHeader', 'bearerAuth']);
    const startRequest = document.components.schemas['StartRunRequest'] as { properties: Record<string, unknown> };
    expect(Object.keys(startRequest.properties)).toEqual(expect.arrayContaining(['model', 'prompt', 'runId']));
    expect(JSON.stringify(document.components.schemas['StartRunRequest'])).not.toContain('tenantId');
  });

  it('documents the 422 of every route whose path parameter is validated', async () => {
    const document = (await (await api.request('/v1/openapi.json', { key: keys.alice })).json()) as {
      paths: Record<string, Record<string, { parameters?: Array<{ in: string }>; responses: Record<string, unknown> }>>;
    };
    const operations = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.entries(item).map(([method, operation]) => ({ route: `${method} ${path}`, operation })),
    );
    const withPathParameters = operations.filter(({ operation }) =>
      (operation.parameters ?? []).some((parameter) => parameter.in === 'path'),
    );
    expect(withPathParameters).toHaveLength(6);
    for (const { route, operation } of withPathParameters)
      expect(Object.keys(operation.responses), route).toContain('422');
    // One past the longest id the API creates: a 128-character tenant id, `~`, a 200-character chosen id.
    const longId = 'x'.repeat(128 + 1 + 200 + 1);
    for (const path of [`/v1/runs/${longId}`, `/v1/runs/${longId}/events`]) {
      const response = await api.request(path, { key: keys.alice });
      expect(response.status, path).toBe(422);
    }
    const cancel = await api.request(`/v1/runs/${longId}/cancel`, { method: 'POST', key: keys.alice });
    expect(cancel.status).toBe(422);
  });
});
