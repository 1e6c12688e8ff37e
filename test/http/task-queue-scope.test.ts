import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { PendingApprovals } from '../../src/client/list-pending-approvals.js';
import type { RunPage } from '../../src/client/list-runs.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { httpTestModel, payCallId, signInToInbox, useHttpTestApi } from './http-test-kit.js';

// Two projects share the namespace and the tenant, each with its own task queue, worker and API.
const { tenantA, keys, apiKeys, kit, api } = useHttpTestApi();
let otherProject: RunningWorker;
let otherApi: ApiServer;
/** The tenant's runs on the API's task queue (one waiting, one completed), and one waiting on the other project's. */
const runs = { waiting: '', completed: '', elsewhere: '' };

async function startRun(prompt: string): Promise<string> {
  const response = await api.request('/v1/runs', {
    method: 'POST',
    key: keys.alice,
    json: { model: 'scripted:test', prompt, approvalTimeout: '1h' },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { runId: string }).runId;
}

async function getJson<T>(url: string, headers: Record<string, string>): Promise<T> {
  const response = await fetch(url, { headers });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as T;
}

const withKey = { authorization: `Bearer ${keys.alice}` };
const listedRunIds = async (url: string) =>
  (await getJson<RunPage>(`${url}/v1/runs`, withKey)).runs.map((run) => run.runId);
const waitingRunIds = async (url: string) =>
  (await getJson<PendingApprovals>(`${url}/v1/approvals`, withKey)).approvals.map((approval) => approval.runId);

/** Asks `read` again until it answers `expected`, for at most 20 s: visibility trails the runs by a moment. */
async function visibilityShows(expected: string, read: () => Promise<string>): Promise<void> {
  const deadline = Date.now() + 20_000;
  let last = await read();
  while (last !== expected && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    last = await read();
  }
  expect(last, 'visibility did not catch up in 20 s').toBe(expected);
}

beforeAll(async () => {
  otherProject = await kit.startWorker({
    tools: createTestTools(createLedger()),
    models: { scripted: scriptedModel(httpTestModel) },
  });
  otherApi = await startApiServer({ client: otherProject.client, apiKeys });
  runs.completed = await startRun('add');
  runs.waiting = await startRun('pay here');
  const prompt = 'pay elsewhere';
  const model = 'scripted:test';
  runs.elsewhere = (
    await otherProject.client.startRun({ tenantId: tenantA, model, prompt, approvalTimeout: '1h' })
  ).runId;
  await api.waitForRun(runs.completed, keys.alice, (run) => run.status === 'completed');
  for (const runId of [runs.waiting, runs.elsewhere]) {
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
  }
  // Visibility lags the runs: every listing below reads it once it shows all three, each on its own task queue.
  const onQueue = (taskQueue: string) => ({ tenantId: tenantA, taskQueue });
  const ids = (listed: ReadonlyArray<{ runId: string }>) => listed.map(({ runId }) => runId).join();
  await visibilityShows(runs.waiting, async () =>
    ids((await kit.client.listPendingApprovals(onQueue(api.worker.taskQueue))).approvals),
  );
  await visibilityShows(runs.elsewhere, async () =>
    ids((await kit.client.listPendingApprovals(onQueue(otherProject.taskQueue))).approvals),
  );
  await visibilityShows([runs.waiting, runs.completed].join(), async () =>
    ids((await kit.client.listRuns(onQueue(api.worker.taskQueue))).runs),
  );
});

afterAll(async () => {
  await otherApi?.close();
});

describe('an API sharing its namespace and tenant with another project', () => {
  it('lists only the runs on its own task queue with GET /v1/runs', async () => {
    expect(await listedRunIds(api.url)).toEqual([runs.waiting, runs.completed]);
    expect(await listedRunIds(otherApi.url)).toEqual([runs.elsewhere]);
  });

  it('lists only the calls waiting on its own task queue with GET /v1/approvals', async () => {
    expect(await waitingRunIds(api.url)).toEqual([runs.waiting]);
    expect(await waitingRunIds(otherApi.url)).toEqual([runs.elsewhere]);
  });

  it('lists only the calls waiting on its own task queue in the inbox', async () => {
    const cookie = await signInToInbox(api.url, keys.alice);
    const listing = await getJson<PendingApprovals>(`${api.url}/inbox/approvals`, { cookie });
    expect(listing.approvals.map((approval) => approval.runId)).toEqual([runs.waiting]);
  });

  it('refuses a cursor the other project’s API issued under the same keys', async () => {
    const { nextCursor } = await getJson<RunPage>(`${api.url}/v1/runs?limit=1`, withKey);
    expect(nextCursor).toEqual(expect.any(String));
    const response = await fetch(`${otherApi.url}/v1/runs?limit=1&cursor=${nextCursor ?? ''}`, { headers: withKey });
    expect(response.status).toBe(422);
    expect(await response.json()).toMatchObject({ issues: [expect.objectContaining({ path: 'cursor' })] });
  });

  it('has a RelayClient list its own task queue’s runs unless told another, or every queue’s with null', async () => {
    const { client } = api.worker;
    const idsOf = async (taskQueue?: string | null) =>
      (await client.listRuns({ tenantId: tenantA, ...(taskQueue !== undefined ? { taskQueue } : {}) })).runs
        .map((run) => run.runId)
        .sort();
    expect(await idsOf()).toEqual([runs.waiting, runs.completed].sort());
    expect(await idsOf(otherProject.taskQueue)).toEqual([runs.elsewhere]);
    expect(await idsOf(null)).toEqual([runs.waiting, runs.completed, runs.elsewhere].sort());
    const waitingOn = async (taskQueue?: string | null) =>
      (
        await client.listPendingApprovals({ tenantId: tenantA, ...(taskQueue !== undefined ? { taskQueue } : {}) })
      ).approvals
        .map((approval) => approval.runId)
        .sort();
    expect(await waitingOn()).toEqual([runs.waiting]);
    expect(await waitingOn(null)).toEqual([runs.waiting, runs.elsewhere].sort());
  });

  it('still reads and decides, by its id, the tenant’s run on the other task queue', async () => {
    const read = await api.request(`/v1/runs/${runs.elsewhere}`, { key: keys.alice });
    expect(read.status).toBe(200);
    expect(await read.json()).toMatchObject({ runId: runs.elsewhere, status: 'awaiting_approval' });
    const approved = await api.request(`/v1/runs/${runs.elsewhere}/approve`, {
      method: 'POST',
      key: keys.alice,
      json: { toolCallId: payCallId },
    });
    expect(approved.status).toBe(200);
    await api.waitForRun(runs.elsewhere, keys.alice, (run) => run.status === 'completed');
  });
});
