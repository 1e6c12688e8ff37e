import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { createTestTenants, payCallId, readServerSentEvents, startHttpTestApi } from './http-test-kit.js';

// Runs here are started on the kit's client, whose task queue no worker polls.
const { tenantA, tenantB, keys, apiKeys } = createTestTenants();
const kit = useRelayTestKit();
let server: ApiServer;

beforeAll(async () => {
  server = await startApiServer({ client: kit.client, apiKeys });
});

afterAll(async () => {
  await server?.close();
});

function request(path: string, key: string, method = 'GET', json?: unknown): Promise<Response> {
  return fetch(`${server.url}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(json !== undefined ? { 'content-type': 'application/json' } : {}) },
    ...(json !== undefined ? { body: JSON.stringify(json) } : {}),
  });
}

async function startUnservedRun(tenantId: string): Promise<string> {
  const { runId } = await kit.client.startRun({
    tenantId,
    model: 'scripted:test',
    prompt: 'pay B',
    runId: randomUUID(),
  });
  return runId;
}

describe('a decision on a run no worker serves', () => {
  it('answers another tenant run_not_found, as for a missing run', async () => {
    const runId = await startUnservedRun(tenantB);
    await expect(kit.client.approve(runId, payCallId, { tenantId: tenantA })).rejects.toMatchObject({
      code: 'run_not_found',
    });
    await expect(kit.client.reject(runId, payCallId, { tenantId: tenantA })).rejects.toMatchObject({
      code: 'run_not_found',
    });
    const response = await request(`/v1/runs/${runId}/approve`, keys.alice, 'POST', { toolCallId: payCallId });
    expect(response.status).toBe(404);
    expect(await response.json()).toMatchObject({ code: 'run_not_found' });
  });
});

describe('a run Temporal terminated before its first workflow task', () => {
  it('reads as failed, and cancelling it answers 200 with that status', async () => {
    const runId = await startUnservedRun(tenantA);
    await kit.temporal.workflow.getHandle(runId).terminate('operator stopped it');

    const read = await request(`/v1/runs/${runId}`, keys.alice);
    expect(read.status).toBe(200);
    const snapshot = (await read.json()) as RunSnapshot;
    expect(snapshot).toMatchObject({ runId, tenantId: tenantA, status: 'failed', pendingApprovals: [] });
    expect(snapshot.error).toMatch(/terminated/);

    const cancel = await request(`/v1/runs/${runId}/cancel`, keys.alice, 'POST');
    expect(cancel.status).toBe(200);
    expect(await cancel.json()).toEqual({ runId, status: 'failed' });

    // The run never ran, so it has no events, and its stream ends at once.
    expect(await kit.client.events(runId, { tenantId: tenantA })).toEqual([]);
    const stream = await request(`/v1/runs/${runId}/events`, keys.alice);
    expect(stream.status).toBe(200);
    const messages = [];
    for await (const message of readServerSentEvents(stream)) messages.push(message);
    expect(messages.filter((message) => !('comment' in message))).toEqual([]);
  });

  it('is still another tenant’s run: 404 for them', async () => {
    const runId = await startUnservedRun(tenantA);
    await kit.temporal.workflow.getHandle(runId).terminate('operator stopped it');
    expect((await request(`/v1/runs/${runId}`, keys.bob)).status).toBe(404);
    expect((await request(`/v1/runs/${runId}/cancel`, keys.bob, 'POST')).status).toBe(404);
  });
});

describe('a run terminated after its tasks ran, with no worker up', () => {
  it('reads as failed, and cancelling it answers 200, not 202 cancelling', async () => {
    const api = await startHttpTestApi(kit, { apiKeys });
    try {
      const started = await api.request('/v1/runs', {
        method: 'POST',
        key: keys.alice,
        json: { model: 'scripted:test', prompt: 'pay B', approvalTimeout: '1h' },
      });
      const { runId } = (await started.json()) as { runId: string };
      await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
      await api.worker.stop();
      await kit.temporal.workflow.getHandle(runId).terminate('operator stopped it');

      const cancel = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice });
      expect(await cancel.json()).toEqual({ runId, status: 'failed' });
      expect(cancel.status).toBe(200);
      const read = await api.request(`/v1/runs/${runId}`, { key: keys.alice });
      expect(read.status).toBe(200);
      expect(await read.json()).toMatchObject({ runId, status: 'failed', pendingApprovals: [] });
    } finally {
      await api.close();
    }
  });
});
