import { AsyncLocalStorage } from 'node:async_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { msNumberToTs } from '@temporalio/common/lib/time.js';
import { askWhileWorkersPoll, noWorkerPolling } from '../../../src/client/ask-while-workers-poll.js';
import type { RunAccess } from '../../../src/client/run-access.js';

// The wait of a question to a run against a client whose task queue listing, and whose answers to the probes of the
// run, the test chooses: a stand-in for Temporal's DescribeTaskQueue and QueryWorkflow, as in the other unit tests of
// the client. Real Temporal answers in the workflow and cluster suites (run-unavailable.test.ts, cluster-smoke.test.ts).

type Listing = { pollers: unknown[] } | Error;

/** A listing's worker whose newest poll started or ended at `at` (epoch ms), as Temporal stamps it. */
function pollerAt(at: number) {
  return { identity: 'worker', lastAccessTime: msNumberToTs(at) };
}

/** What a probe of the run gets: an answer, the server's "no poller seen lately", or its deadline passing. */
type ProbeAnswer = 'answered' | 'no_poller' | 'deadline';

/** A gRPC error as the client sees one. */
function grpcError(code: number, message: string): Error {
  return Object.assign(new Error(`${code} ${message}`), { code, details: message, metadata: {} });
}

/**
 * A client whose task queue lists `listing` (or what it gives at each look) and whose probes get `probes` in turn
 * (then answers), keeping the abort signal of each call made in a `withAbortSignal` scope.
 */
function clientListing(
  listing: Listing | (() => Listing),
  probes: ProbeAnswer[] = [],
  { task = 'none' }: { task?: 'none' | 'scheduled' | 'started' } = {},
) {
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
        const shown = typeof listing === 'function' ? listing() : listing;
        if (shown instanceof Error) throw shown;
        return shown;
      },
    },
    workflow: {
      getHandle: (runId: string) => ({
        describe: async () => {
          described.push(runId);
          // PENDING_WORKFLOW_TASK_STATE_SCHEDULED is 1, STARTED 2.
          const pendingWorkflowTask = task === 'none' ? null : { attempt: 1, state: task === 'scheduled' ? 1 : 2 };
          return { raw: { pendingWorkflowTask } };
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
  askWhileWorkersPoll(access, { taskQueue: 'q', runId: 'run_1', probe: true }, question, () =>
    noWorkerPolling('run_1', 'q'),
  );

/** A question sent as a decision is: by update, which the run is never probed for. */
const decision = (access: RunAccess, question: () => Promise<string>) =>
  askWhileWorkersPoll(access, { taskQueue: 'q', runId: 'run_1', probe: false }, question, () =>
    noWorkerPolling('run_1', 'q'),
  );

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
    const waiting = clientListing({ pollers: [{ identity: 'worker' }] }, [], { task: 'scheduled' });
    await expect(ask(waiting.access, waiting.question(4_500))).resolves.toBe('answered');
    expect(waiting.described).toEqual(['run_1', 'run_1']);
    expect(waiting.probed).toEqual([]);
    // An update schedules such a task itself; a question marked not to probe never does, task or not.
    const update = clientListing({ pollers: [{ identity: 'worker' }] });
    await expect(decision(update.access, update.question(4_500))).resolves.toBe('answered');
    expect([update.listed, update.described, update.probed]).toEqual([['q', 'q'], ['run_1', 'run_1'], []]);
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

  describe.concurrent('while the task queue lists a worker', () => {
    it('fails with run_unavailable once the listing shows no new poll for 20 s while the run’s task waits', async ({
      expect,
    }) => {
      // A worker that stopped a minute ago: Temporal lists it for minutes more, its last poll never newer, and the
      // task the update scheduled waits for a worker to start it.
      const stopped = clientListing({ pollers: [pollerAt(Date.now() - 60_000)] }, [], { task: 'scheduled' });
      const asked = Date.now();
      await expect(decision(stopped.access, stopped.question())).rejects.toMatchObject({
        code: 'run_unavailable',
        message: noWorkerMessage,
      });
      // The first look at 1 s, then one every 3 s until the poll it showed has stood for 20 s.
      expect(Date.now() - asked).toBeGreaterThanOrEqual(21_000);
      expect(Date.now() - asked).toBeLessThan(25_000);
      expect(stopped.listed.length).toBeGreaterThanOrEqual(7);
      expect(stopped.probed).toEqual([]);
    }, 30_000);

    it('keeps a question waiting while the listing shows newer polls (a busy worker), however old they look', async ({
      expect,
    }) => {
      // Stamped by a server clock two minutes behind this process's: only a poll newer than the last one seen counts.
      const busy = clientListing(() => ({ pollers: [pollerAt(Date.now() - 120_000)] }), [], { task: 'scheduled' });
      await expect(decision(busy.access, busy.question(23_000))).resolves.toBe('answered');
      expect(busy.listed.length).toBeGreaterThanOrEqual(7);
    }, 30_000);

    it('keeps a question waiting while no task of the run waits, or a worker runs it, however quiet the listing', async ({
      expect,
    }) => {
      // A worker answering slowly (an update whose handler waits on an activity, a query's long replay) need not poll.
      const answering = clientListing({ pollers: [pollerAt(Date.now() - 60_000)] }, [], { task: 'none' });
      const running = clientListing({ pollers: [pollerAt(Date.now() - 60_000)] }, [], { task: 'started' });
      await expect(
        Promise.all([
          decision(answering.access, answering.question(23_000)),
          decision(running.access, running.question(23_000)),
        ]),
      ).resolves.toEqual(['answered', 'answered']);
      expect(answering.listed.length).toBeGreaterThanOrEqual(7);
    }, 30_000);
  });

  it("keeps the caller's own abort signal for the call", async () => {
    const { access, storage, question } = clientListing({ pollers: [{ identity: 'worker' }] });
    const callers = new AbortController();
    const asked = storage.run({ abortSignal: callers.signal }, () => ask(access, question()));
    callers.abort();
    await expect(asked).rejects.toThrow('cancelled');
  });
});
