import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { askWhileWorkersPoll, noWorkerListed } from '../../../src/client/ask-while-workers-poll.js';
import type { RunAccess } from '../../../src/client/run-access.js';

// The wait of a question to a run against a client whose task queue listing the test chooses: a stand-in for
// Temporal's DescribeTaskQueue, as in the other unit tests of the client. Real Temporal answers in the workflow and
// cluster suites (run-unavailable.test.ts, cluster-smoke.test.ts).

type Listing = { pollers: unknown[] } | Error;

/** A client whose task queue lists `listing`, keeping the abort signal of each call made in a `withAbortSignal` scope. */
function clientListing(listing: Listing) {
  const storage = new AsyncLocalStorage<{ abortSignal?: AbortSignal }>();
  const listed: string[] = [];
  const temporal = {
    options: { namespace: 'default' },
    connection: { callContextStorage: storage },
    withAbortSignal: <R>(abortSignal: AbortSignal, fn: () => Promise<R>) =>
      storage.run({ ...storage.getStore(), abortSignal }, fn),
    workflowService: {
      describeTaskQueue: async (request: { taskQueue: { name: string } }) => {
        listed.push(request.taskQueue.name);
        if (listing instanceof Error) throw listing;
        return listing;
      },
    },
  };
  const access = { temporal, taskQueue: 'q' } as unknown as RunAccess;
  /** A question that answers after `ms` (never when undefined), and fails when its call's signal aborts. */
  const question = (ms?: number) => () =>
    new Promise<string>((resolve, reject) => {
      const signal = storage.getStore()?.abortSignal;
      signal?.addEventListener('abort', () => reject(new Error('cancelled')), { once: true });
      if (ms !== undefined) setTimeout(() => resolve('answered'), ms);
    });
  return { access, storage, listed, question };
}

const ask = (access: RunAccess, question: () => Promise<string>) =>
  askWhileWorkersPoll(access, 'q', question, () => noWorkerListed('run_1', 'q'));

describe('a question to a run', () => {
  it('answered within a second costs no look at the task queue', async () => {
    const { access, listed, question } = clientListing({ pollers: [] });
    await expect(ask(access, question(10))).resolves.toBe('answered');
    await sleep(1_100);
    expect(listed).toEqual([]);
  });

  it('waits for its answer while the task queue lists a worker, or cannot be described', async () => {
    for (const listing of [{ pollers: [{ identity: 'worker' }] }, new Error('PermissionDenied')]) {
      const { access, listed, question } = clientListing(listing);
      await expect(ask(access, question(1_500))).resolves.toBe('answered');
      expect(listed).toEqual(['q']);
    }
  });

  it('fails with run_unavailable once the task queue lists no worker, and its call is cancelled', async () => {
    const { access, question } = clientListing({ pollers: [] });
    let cancelled = false;
    const waiting = () => question()().catch((error: Error) => ((cancelled = true), Promise.reject(error)));
    const asked = Date.now();
    await expect(ask(access, waiting)).rejects.toMatchObject({
      code: 'run_unavailable',
      message:
        "Run 'run_1' cannot answer right now: no worker has polled its task queue recently. Is a Relay-E worker running on task queue 'q'?",
    });
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(cancelled).toBe(true);
  });

  it("keeps the caller's own abort signal for the call", async () => {
    const { access, storage, question } = clientListing({ pollers: [{ identity: 'worker' }] });
    const callers = new AbortController();
    const asked = storage.run({ abortSignal: callers.signal }, () => ask(access, question()));
    callers.abort();
    await expect(asked).rejects.toThrow('cancelled');
  });
});
