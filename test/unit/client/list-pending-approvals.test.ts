import type { Client } from '@temporalio/client';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { listPendingApprovals } from '../../../src/client/list-pending-approvals.js';
import type { RunSnapshot } from '../../../src/shared/run-types.js';
import { fakeVisibility, rawRun, unavailable } from './fake-visibility.js';
import type { ListingRequest } from './fake-visibility.js';

const clients: Client[] = [];
const unhandled: unknown[] = [];
const onUnhandled = (reason: unknown): void => {
  unhandled.push(reason);
};

function visibility(...args: Parameters<typeof fakeVisibility>): Client {
  const client = fakeVisibility(...args);
  clients.push(client);
  return client;
}

beforeEach(() => {
  unhandled.length = 0;
  process.on('unhandledRejection', onUnhandled);
});

afterEach(async () => {
  process.off('unhandledRejection', onUnhandled);
  await Promise.all(clients.splice(0).map((client) => client.connection.close()));
});

/** A waiting run whose memo keeps its call, its input padded to about `inputBytes`. */
function waitingRun(index: number, inputBytes = 0) {
  const approval = {
    toolCallId: `call-${index}`,
    toolName: 'transfer_funds',
    input: { note: 'x'.repeat(inputBytes) },
    requestedAt: '2026-01-01T00:00:00.000Z',
    expiresAt: '2026-01-02T00:00:00.000Z',
  };
  return rawRun(index, {
    open: true,
    memo: { relayPendingApprovals: { model: 'scripted:test', approvals: [approval] } },
  });
}

/** A waiting run whose memo does not keep its calls: the listing asks the run for its snapshot. */
function unrecordedRun(index: number) {
  return rawRun(index, { open: true });
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 50));

describe('listPendingApprovals', () => {
  it('lists the calls of more waiting runs than one gRPC message holds, in smaller requests', async () => {
    const requests: ListingRequest[] = [];
    // 300 runs each keeping nearly 16 KiB of waiting calls: about 4.8 MB in all.
    const client = visibility(
      Array.from({ length: 300 }, (_, index) => waitingRun(index, 15_500)),
      { requests },
    );
    const listing = await listPendingApprovals(client, { tenantId: 'acme', limit: 1_000 }, () => {
      throw new Error('no run is asked: their memos keep their calls');
    });
    expect(listing.approvals.map((approval) => approval.runId)).toEqual(
      Array.from({ length: 300 }, (_, index) => `run-${index}`),
    );
    expect(listing).toMatchObject({ unanswered: [], hasMore: false });
    expect(requests.every((request) => request.pageSize <= 128)).toBe(true);

    const limited = await listPendingApprovals(client, { tenantId: 'acme', limit: 250 }, () => {
      throw new Error('no run is asked');
    });
    expect(limited.approvals).toHaveLength(250);
    expect(limited.hasMore).toBe(true);
  });

  it('reports a run that failed to answer while the listing was still read, and leaves no rejection unhandled', async () => {
    // One run a page, the next page slow: the first run's read fails while the second page is on its way.
    const client = visibility([unrecordedRun(0), waitingRun(1)], { maxPerPage: 1, delayMs: 20 });
    const failure = unavailable('snapshot of run-0');
    const asked: string[] = [];
    const readSnapshot = async (runId: string): Promise<RunSnapshot> => {
      asked.push(runId);
      throw failure;
    };
    await expect(listPendingApprovals(client, { tenantId: 'acme' }, readSnapshot)).rejects.toBe(failure);
    await settle();
    expect(asked).toEqual(['run-0']);
    expect(unhandled).toEqual([]);
  });

  it('reports a listing page that fails while a run is asked, and leaves the run’s failure unhandled nowhere', async () => {
    const pageFailure = unavailable('listing page 2');
    const client = visibility([unrecordedRun(0), unrecordedRun(1)], {
      maxPerPage: 1,
      delayMs: 20,
      failAt: { start: 1, error: pageFailure },
    });
    const readSnapshot = async (runId: string): Promise<RunSnapshot> => {
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw unavailable(`snapshot of ${runId}`);
    };
    const failure: unknown = await listPendingApprovals(client, { tenantId: 'acme' }, readSnapshot).catch(
      (error: unknown) => error,
    );
    // The listing's own failure, as gRPC gave it (the SDK's `workflow.list()` wrapped it as the cause of its own).
    expect([failure, (failure as Error).cause]).toContain(pageFailure);
    await settle();
    expect(unhandled).toEqual([]);
  });
});
