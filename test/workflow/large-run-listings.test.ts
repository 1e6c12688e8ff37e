import { randomBytes, randomUUID } from 'node:crypto';
import type { WorkflowHandle } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunListing } from '../../src/client/list-runs.js';
import { closedRunMemoKey } from '../../src/shared/closed-run-record.js';
import { pendingApprovalsMemoKey } from '../../src/shared/pending-approvals-memo.js';
import type { PendingApprovalsMemo } from '../../src/shared/pending-approvals-memo.js';
import { relaySearchAttributes } from '../../src/shared/search-attributes.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';

// Listings of more runs than one gRPC message (4 MiB) holds, on a real dev server: a closed run's memo carries its
// record (deflated: about 86 KB at its cap) and a waiting run's memo its waiting calls (up to 16 KiB). The runs are
// `agentRun` executions started with such memos on a task queue no worker polls (the listings read only visibility),
// the closed ones terminated: a few seconds, where running enough agent runs to their caps would take minutes.

const kit = useRelayTestKit();
const tenantId = `large-listings-${randomUUID()}`;
const closedCount = 70;
const waitingCount = 280;
/** Incompressible, as deflated bytes are: 70 of them are about 6 MB. */
const recordBytes = 88_000;
/** The waiting calls' JSON stays just under the 16 KiB a memo keeps: 280 of them are about 4.6 MB. */
const callInputBytes = 15_900;
const waiting: Array<WorkflowHandle> = [];

/** Runs `task` for each of `count` indexes, at most `concurrency` at a time. */
async function inBatches(count: number, concurrency: number, task: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const lanes = Array.from({ length: concurrency }, async () => {
    while (next < count) await task(next++);
  });
  await Promise.all(lanes);
}

function waitingMemo(index: number): PendingApprovalsMemo {
  return {
    model: 'scripted:test',
    approvals: [
      {
        toolCallId: `call-${index}`,
        toolName: 'transfer_funds',
        input: { note: 'x'.repeat(callInputBytes) },
        step: 1,
        requestedAt: new Date().toISOString(),
        expiresAt: new Date(Date.now() + 3_600_000).toISOString(),
      },
    ],
  };
}

/** No worker polls it; the listings name it, since a client lists its own task queue's runs by default. */
const taskQueue = uniqueTaskQueue('no-worker');

beforeAll(async () => {
  const start = (kind: string, index: number, extra: { memo: Record<string, unknown>; waiting: boolean }) =>
    kit.temporal.workflow.start('agentRun', {
      taskQueue,
      workflowId: `${kind}-${index}-${randomUUID()}`,
      args: [],
      memo: { model: 'scripted:test', prompt: `${kind} ${index}`, ...extra.memo },
      typedSearchAttributes: [
        { key: relaySearchAttributes.tenant, value: tenantId },
        { key: relaySearchAttributes.status, value: extra.waiting ? 'awaiting_approval' : 'running' },
        { key: relaySearchAttributes.pendingApprovals, value: extra.waiting ? 1 : 0 },
      ],
    });
  await inBatches(closedCount, 10, async (index) => {
    const memo = { [closedRunMemoKey]: new Uint8Array(randomBytes(recordBytes)) };
    const handle = await start('closed', index, { memo, waiting: false });
    await handle.terminate('a closed run with a record at its cap');
  });
  await inBatches(waitingCount, 10, async (index) => {
    const memo = { [pendingApprovalsMemoKey]: waitingMemo(index) };
    waiting.push(await start('waiting', index, { memo, waiting: true }));
  });
  const query = `${relaySearchAttributes.tenant.name} = '${tenantId}'`;
  const deadline = Date.now() + 20_000;
  while ((await kit.temporal.workflow.count(`${query} AND ExecutionStatus != 'Running'`)).count < closedCount) {
    if (Date.now() > deadline) throw new Error('Visibility did not list the closed runs within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  while ((await kit.temporal.workflow.count(query)).count < closedCount + waitingCount) {
    if (Date.now() > deadline) throw new Error('Visibility did not list the waiting runs within 20 s');
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
});

afterAll(async () => {
  await inBatches(waiting.length, 10, async (index) => {
    await waiting[index]?.terminate('test over').catch(() => undefined);
  });
});

/** The tenant's runs as pages of `limit` list them, followed by cursor. */
async function listAll(limit: number): Promise<{ runs: RunListing[]; pages: number }> {
  const runs: RunListing[] = [];
  let pages = 0;
  let cursor: string | undefined;
  do {
    const page = await kit.client.listRuns({ tenantId, taskQueue, limit, ...(cursor !== undefined ? { cursor } : {}) });
    runs.push(...page.runs);
    pages += 1;
    cursor = page.nextCursor;
  } while (cursor !== undefined);
  return { runs, pages };
}

describe('listing more runs than one gRPC message holds', () => {
  it('lists 70 closed runs with records at the cap and 280 waiting runs in one page, as pages of 20 list them', async () => {
    const byTwenty = await listAll(20);
    expect(byTwenty.runs).toHaveLength(closedCount + waitingCount);

    // Over 10 MB of memos: gRPC refused one message for 60 closed runs with records at the cap.
    const whole = await kit.client.listRuns({ tenantId, taskQueue, limit: 1_000 });
    expect(whole.nextCursor).toBeUndefined();
    expect(whole.runs.map((run) => run.runId)).toEqual(byTwenty.runs.map((run) => run.runId));
    expect(whole.runs.slice(0, waitingCount).every((run) => run.status === 'awaiting_approval')).toBe(true);
    expect(whole.runs.slice(waitingCount).every((run) => run.status === 'failed')).toBe(true);

    // The closed runs alone, in pages of 60 followed by cursor: the same runs in the same order.
    const closed = await kit.client.listRuns({ tenantId, taskQueue, status: 'failed', limit: 60 });
    expect(closed.runs).toHaveLength(60);
    const rest = await kit.client.listRuns({
      tenantId,
      taskQueue,
      status: 'failed',
      limit: 60,
      cursor: closed.nextCursor ?? '',
    });
    expect([...closed.runs, ...rest.runs].map((run) => run.runId)).toEqual(
      whole.runs.slice(waitingCount).map((run) => run.runId),
    );
  });

  it('lists the calls of 280 runs that each keep nearly 16 KiB of them', async () => {
    const listing = await kit.client.listPendingApprovals({ tenantId, taskQueue, limit: 1_000 });
    expect(listing.unanswered).toEqual([]);
    expect(listing.hasMore).toBe(false);
    expect(listing.approvals).toHaveLength(waitingCount);
    expect(new Set(listing.approvals.map((approval) => approval.runId))).toEqual(
      new Set(waiting.map((handle) => handle.workflowId)),
    );

    const first = await kit.client.listPendingApprovals({ tenantId, taskQueue, limit: 270 });
    expect(first.approvals).toHaveLength(270);
    expect(first.hasMore).toBe(true);
  });
});
