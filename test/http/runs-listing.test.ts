import { beforeAll, describe, expect, it, vi } from 'vitest';
import type { RunListing, RunPage } from '../../src/client/list-runs.js';
import { useHttpTestApi } from './http-test-kit.js';

const { keys, api } = useHttpTestApi();
/** Tenant A's runs in the order they were started: three left waiting, one completed, one cancelled. */
const runs = { waiting: [] as string[], completed: '', cancelled: '' };
let tenantBRun: string;

async function startRun(key: string, prompt: string): Promise<string> {
  const response = await api.request('/v1/runs', {
    method: 'POST',
    key,
    json: { model: 'scripted:test', prompt, approvalTimeout: '1h' },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { runId: string }).runId;
}

async function listRuns(key: string, query = ''): Promise<RunPage> {
  const response = await api.request(`/v1/runs${query}`, { key });
  expect(response.status, await response.clone().text()).toBe(200);
  return (await response.json()) as RunPage;
}

/** Visibility lags the runs: asks again until the listing shows what `isCaughtUp` expects, for at most 20 s. */
async function waitForListing(key: string, isCaughtUp: (runs: RunListing[]) => boolean): Promise<RunListing[]> {
  const deadline = Date.now() + 20_000;
  let listed: RunListing[] = [];
  while (Date.now() < deadline) {
    listed = (await listRuns(key, '?limit=100')).runs;
    if (isCaughtUp(listed)) return listed;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`Visibility did not catch up in 20 s; last listing: ${JSON.stringify(listed)}`);
}

beforeAll(async () => {
  runs.completed = await startRun(keys.alice, 'add');
  await api.waitForRun(runs.completed, keys.alice, (run) => run.status === 'completed');
  runs.cancelled = await startRun(keys.alice, 'pay C');
  await api.waitForRun(runs.cancelled, keys.alice, (run) => run.status === 'awaiting_approval');
  await api.request(`/v1/runs/${runs.cancelled}/cancel`, { method: 'POST', key: keys.alice });
  await api.waitForRun(runs.cancelled, keys.alice, (run) => run.status === 'cancelled');
  for (const prompt of ['pay B1', 'pay B2', 'pay B3']) {
    const runId = await startRun(keys.alice, prompt);
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'awaiting_approval');
    runs.waiting.push(runId);
  }
  tenantBRun = await startRun(keys.bob, 'pay B');
  await api.waitForRun(tenantBRun, keys.bob, (run) => run.status === 'awaiting_approval');
  const expected: Record<string, string> = { [runs.completed]: 'completed', [runs.cancelled]: 'cancelled' };
  for (const runId of runs.waiting) expected[runId] = 'awaiting_approval';
  await waitForListing(keys.alice, (listed) =>
    Object.entries(expected).every(([runId, status]) =>
      listed.some((run) => run.runId === runId && run.status === status),
    ),
  );
  await waitForListing(keys.bob, (listed) => listed.some((run) => run.runId === tenantBRun));
});

describe('GET /v1/runs', () => {
  it('lists only the caller’s tenant’s runs: open runs newest first, then closed runs newest closed first', async () => {
    const { runs: listed, nextCursor } = await listRuns(keys.alice);
    expect(listed.map((run) => run.runId)).toEqual([...runs.waiting].reverse().concat(runs.cancelled, runs.completed));
    expect(nextCursor).toBeUndefined();
    expect(listed[0]).toMatchObject({
      status: 'awaiting_approval',
      pendingApprovalCount: 1,
      model: 'scripted:test',
      prompt: 'pay B3',
    });
    expect(listed.at(-1)).toMatchObject({ status: 'completed', pendingApprovalCount: 0 });
    expect(Date.parse(listed.at(-1)?.closedAt ?? '')).toBeGreaterThanOrEqual(
      Date.parse(listed.at(-1)?.startedAt ?? ''),
    );
    expect((await listRuns(keys.bob)).runs.map((run) => run.runId)).toEqual([tenantBRun]);
  });

  it('filters by status and by whether a tool call waits for a human', async () => {
    const idsOf = async (query: string) => (await listRuns(keys.alice, query)).runs.map((run) => run.runId);
    expect(await idsOf('?status=completed')).toEqual([runs.completed]);
    expect(await idsOf('?status=cancelled')).toEqual([runs.cancelled]);
    expect(await idsOf('?status=running')).toEqual([]);
    expect(await idsOf('?status=awaiting_approval')).toEqual([...runs.waiting].reverse());
    expect(await idsOf('?pendingApprovals=true')).toEqual([...runs.waiting].reverse());
    expect(await idsOf('?pendingApprovals=false')).toEqual([runs.cancelled, runs.completed]);
    expect(await idsOf('?status=completed&pendingApprovals=true')).toEqual([]);
  });

  it('pages with the opaque cursor it returns, every run once and in the same order', async () => {
    const everything = (await listRuns(keys.alice)).runs.map((run) => run.runId);
    const paged: string[] = [];
    let cursor: string | undefined;
    let pages = 0;
    do {
      const page = await listRuns(keys.alice, `?limit=2${cursor ? `&cursor=${cursor}` : ''}`);
      expect(page.runs.length).toBeLessThanOrEqual(2);
      paged.push(...page.runs.map((run) => run.runId));
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor !== undefined && pages < 10);
    expect(paged).toEqual(everything);
    expect(pages).toBeGreaterThanOrEqual(3);
  });

  it('refuses a bad filter, limit or cursor with 422 naming the parameter, and a caller without a key with 401', async () => {
    for (const [query, parameter] of [
      ['?status=sleeping', 'status'],
      ['?pendingApprovals=yes', 'pendingApprovals'],
      ['?limit=0', 'limit'],
      ['?limit=101', 'limit'],
      ['?cursor=not%20base64', 'cursor'],
      ['?cursor=bm90LWEtdG9rZW4', 'cursor'],
    ] as const) {
      const response = await api.request(`/v1/runs${query}`, { key: keys.alice });
      expect(response.status, query).toBe(422);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(await response.json(), query).toMatchObject({
        code: 'invalid_input',
        issues: [expect.objectContaining({ path: parameter })],
      });
    }
    expect((await api.request('/v1/runs')).status).toBe(401);
  });

  it('refuses a cursor sent by another tenant, with other filters, or edited', async () => {
    const { nextCursor } = await listRuns(keys.alice, '?limit=1');
    expect(nextCursor).toEqual(expect.any(String));
    const cursor = encodeURIComponent(nextCursor ?? '');
    const edited = encodeURIComponent(`${nextCursor?.startsWith('A') ? 'B' : 'A'}${nextCursor?.slice(1)}`);
    for (const [key, query] of [
      [keys.bob, `?limit=1&cursor=${cursor}`],
      [keys.alice, `?limit=1&status=completed&cursor=${cursor}`],
      [keys.alice, `?limit=1&cursor=${edited}`],
    ] as const) {
      const response = await api.request(`/v1/runs${query}`, { key });
      expect(response.status, query).toBe(422);
      expect(await response.json()).toMatchObject({ issues: [expect.objectContaining({ path: 'cursor' })] });
    }
    expect((await listRuns(keys.alice, `?limit=1&cursor=${cursor}`)).runs).toHaveLength(1);
  });

  it('asks visibility nothing for a refused cursor, and asks it for the same cursor sent as issued', async () => {
    const { nextCursor } = await listRuns(keys.alice, '?limit=1');
    const cursor = encodeURIComponent(nextCursor ?? '');
    const visibility = vi.spyOn(api.worker.client.temporal.workflowService, 'listWorkflowExecutions');
    try {
      expect((await api.request(`/v1/runs?limit=1&cursor=${cursor}`, { key: keys.bob })).status).toBe(422);
      expect(visibility).not.toHaveBeenCalled();
      expect((await listRuns(keys.alice, `?limit=1&cursor=${cursor}`)).runs).toHaveLength(1);
      expect(visibility).toHaveBeenCalled();
    } finally {
      visibility.mockRestore();
    }
  });
});
