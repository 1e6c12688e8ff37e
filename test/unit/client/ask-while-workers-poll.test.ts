import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { askWhileWorkersPoll, noWorkerPolling } from '../../../src/client/ask-while-workers-poll.js';
import type { RunAccess } from '../../../src/client/run-access.js';

// The wait of a question to a run against a client whose task queue listing, and whose answers to the probes of the
// run, the test chooses: a stand-in for Temporal's DescribeTaskQueue and QueryWorkflow, as in the other unit tests of
// the client. Real Temporal answers in the workflow and cluster suites (run-unavailable.test.ts, cluster-smoke.test.ts).

type Listing = { pollers: unknown[] } | Error;

/** What a probe of the run gets: an answer, the server's "no poller seen lately", or its deadline passing. */
type ProbeAnswer = 'answered' | 'no_poller' | 'deadline';

/** A gRPC error as the client sees one. */
function grpcError(code: number, message: string): Error {
  return Object.assign(new Error(`${code} ${message}`), { code, details: message, metadata: {} });
}

/**
 * A client whose task queue lists `listing` and whose probes get `probes` in turn (then answers), keeping the abort
 * signal of each call made in a `withAbortSignal` scope.
 */
function clientListing(listing: Listing, probes: ProbeAnswer[] = [], { taskWaiting = false } = {}) {
  const storage = new AsyncLocalStorage<{ abortSignal?: AbortSignal; deadline?: number }>();
  const listed: string[] = [];
  const described: string[] = [];
  const probed: string[] = [];
  const temporal = {
    options: { namespace: 'default' },
    connection: { callContextStorage: storage },
    withAbortSignal: <R>(abortSignal: AbortSignal, fn: () => Promise<R>) =>
      storage.run({ ...storage.getStore(), abortSignal }, fn),
    withDeadline: <R>(deadline: number, fn: () => Promise<R>) => storage.run({ ...storage.getStore(), deadline }, fn),
    workflowService: {
      describeTaskQueue: async (request: { taskQueue: { name: string } }) => {
        listed.push(request.taskQueue.name);
        if (listing instanceof Error) throw listing;
        return listing;
      },
    },
    workflow: {
      getHandle: (runId: string) => ({
        describe: async () => {
          described.push(runId);
          return { raw: { pendingWorkflowTask: taskWaiting ? { attempt: 1 } : null } };
        },
        query: async () => {
          probed.push(runId);
          const answer = probes.shift() ?? 'answered';
          if (answer === 'answered') return { events: [], nextAfter: 0, hasMore: false };
          // The server answers "no poller" a second before the deadline, and the deadline ends the call otherwise.
          const deadline = storage.getStore()?.deadline ?? Infinity;
          await sleep(Math.max(0, deadline - Date.now() - (answer === 'no_poller' ? 1_000 : 0)));
          if (answer === 'no_poller') {
            throw grpcError(9, 'no poller seen for task queue recently, worker may be down');
          }
          throw grpcError(4, 'Deadline exceeded');
        },
      }),
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
  return { access, storage, listed, described, probed, question };
}

const ask = (access: RunAccess, question: () => Promise<string>) =>
  askWhileWorkersPoll(access, { taskQueue: 'q', probeRunId: 'run_1' }, question, () => noWorkerPolling('run_1', 'q'));

const noWorkerMessage =
  "Run 'run_1' cannot answer right now: no worker has polled its task queue recently. Is a Relay-E worker running on task queue 'q'?";

describe('a question to a run', () => {
  it('answered within a second costs no look at the task queue, nor a probe of the run', async () => {
    const { access, listed, probed, question } = clientListing({ pollers: [] });
    await expect(ask(access, question(10))).resolves.toBe('answered');
    await sleep(1_100);
    expect(listed).toEqual([]);
    expect(probed).toEqual([]);
  });

  it('waits for its answer while the task queue lists a worker and a probe of the run is answered', async () => {
    const { access, listed, probed, question } = clientListing({ pollers: [{ identity: 'worker' }] });
    // A probe answered says a worker is there: the question waits on, probed no more (the next would go at 4 s).
    await expect(ask(access, question(4_500))).resolves.toBe('answered');
    expect(listed).toEqual(['q']);
    expect(probed).toEqual(['run_1']);
  }, 20_000);

  it('waits for its answer while the task queue cannot be described, as long as probes are answered, and says once that it cannot', async () => {
    const warnings: Error[] = [];
    const warned = (warning: Error) => warnings.push(warning);
    process.on('warning', warned);
    try {
      const { access, listed, probed, question } = clientListing(
        grpcError(7, 'PERMISSION_DENIED: Request unauthorized.'),
      );
      await expect(ask(access, question(1_500))).resolves.toBe('answered');
      await expect(ask(access, question(1_500))).resolves.toBe('answered');
      expect(listed).toEqual(['q', 'q']);
      expect(probed).toEqual(['run_1', 'run_1']);
      await sleep(10);
      expect(warnings).toEqual([
        expect.objectContaining({
          name: 'RelayEWarning',
          code: 'RELAY_E_WORKER_LISTING_FAILED',
          message: expect.stringMatching(
            /^Temporal could not list the workers of task queue 'q' \(7 PERMISSION_DENIED: Request unauthorized\.\): /,
          ) as unknown,
        }),
      ]);
    } finally {
      process.off('warning', warned);
    }
  }, 10_000);

  it('fails with run_unavailable when the task queue lists a worker but a probe is told none polled lately', async () => {
    const { access, probed, question } = clientListing({ pollers: [{ identity: 'stopped worker' }] }, ['no_poller']);
    const asked = Date.now();
    await expect(ask(access, question())).rejects.toMatchObject({ code: 'run_unavailable', message: noWorkerMessage });
    expect(Date.now() - asked).toBeLessThan(5_000);
    expect(probed).toEqual(['run_1']);
  });

  it('does not probe a run whose workflow task waits for a worker, nor for an update', async () => {
    // The server would hold the probe for that task, taking the one query it keeps a run from a reader.
    const waiting = clientListing({ pollers: [{ identity: 'worker' }] }, [], { taskWaiting: true });
    await expect(ask(waiting.access, waiting.question(4_500))).resolves.toBe('answered');
    expect(waiting.described).toEqual(['run_1', 'run_1']);
    expect(waiting.probed).toEqual([]);
    // An update schedules such a task itself: its question names no run to probe.
    const update = clientListing({ pollers: [{ identity: 'worker' }] });
    const asked = askWhileWorkersPoll(update.access, { taskQueue: 'q' }, update.question(1_500), () =>
      noWorkerPolling('run_1', 'q'),
    );
    await expect(asked).resolves.toBe('answered');
    expect([update.listed, update.described, update.probed]).toEqual([['q'], [], []]);
  }, 20_000);

  it('probes again while a probe gets no clear answer (a worker polled lately, or its deadline passed)', async () => {
    const { access, probed, question } = clientListing({ pollers: [{ identity: 'worker' }] }, [
      'deadline',
      'no_poller',
    ]);
    await expect(ask(access, question())).rejects.toMatchObject({ code: 'run_unavailable', message: noWorkerMessage });
    expect(probed).toEqual(['run_1', 'run_1']);
  }, 20_000);

  it('fails with run_unavailable once the task queue lists no worker, and its call is cancelled', async () => {
    const { access, question } = clientListing({ pollers: [] });
    let cancelled = false;
    const waiting = () => question()().catch((error: Error) => ((cancelled = true), Promise.reject(error)));
    const asked = Date.now();
    await expect(ask(access, waiting)).rejects.toMatchObject({ code: 'run_unavailable', message: noWorkerMessage });
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
