import { setTimeout as sleep } from 'node:timers/promises';
import { QueryNotRegisteredError } from '@temporalio/client';
import type { Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { eventPageQuery } from '../../workflows/messages.js';
import { RelayError } from '../shared/errors.js';
import { grpcMessageOf } from './grpc-message.js';
import type { RunAccess } from './run-access.js';

// The package is CommonJS: its namespaces are read from the default export.
const { TaskQueueKind, TaskQueueType } = protos.temporal.api.enums.v1;

/**
 * How long a question to a run waits for its answer before the run's task queue is asked whether any worker polls
 * it: long enough that a served run answers first and costs nothing more.
 */
const workerListingDelayMs = 1_000;

/** Why a run cannot answer when no worker polls its task queue, as a read of it says. */
export function noWorkerPollsWhy(taskQueue: string): string {
  return `no worker has polled its task queue recently. Is a Relay-E worker running on task queue '${taskQueue}'?`;
}

/**
 * Whether Temporal gave a query up because no worker polled the run's task queue lately: what it answers a second
 * before the query's deadline, rather than letting it run out (`matching.queryPollerUnavailableWindow`, 20 s by
 * default).
 */
export function isNoRecentPoller(error: unknown): boolean {
  return /no poller seen for task queue recently/i.test(grpcMessageOf(error));
}

/** The `run_unavailable` a read of a run gets when no worker polls its task queue. */
export function noWorkerPolling(runId: string, taskQueue: string): RelayError {
  return new RelayError('run_unavailable', `Run '${runId}' cannot answer right now: ${noWorkerPollsWhy(taskQueue)}`);
}

/** Where the workers that answer a question are looked for. */
export interface AnsweringWorkers {
  /** The task queue whose workers answer for the run. */
  taskQueue: string;
  /**
   * The run to probe while the task queue lists a worker (see {@link failOnceNoWorkerPolls}): a read's. Not for an
   * update: the workflow task it schedules holds every query to the run until a worker takes that task.
   */
  probeRunId?: string;
}

/**
 * Asks a run (`ask`: a query or an update, which the server holds until a worker takes it: about half a minute for a
 * query when none does) and stops waiting as soon as no worker is there to answer, failing with `whenNoWorker()`:
 * when the run's task queue lists no worker (Temporal lists every worker that polled it in the last few minutes,
 * `matching.PollerHistoryTTL`, five by default), or, while it still lists one, when the server tells a probe of the
 * run (a read's) that no worker polled lately (see {@link failOnceNoWorkerPolls}). The call still waiting is cancelled rather than
 * left for the server to time out (an update the server admitted stays with the run, as it does when a deadline ends
 * the wait). When the task queue cannot be described (a process warning says so), or a probe gets no clear answer, the question keeps its own
 * wait: its answer, or its failure, is what the caller gets.
 */
export async function askWhileWorkersPoll<T>(
  access: RunAccess,
  workers: AnsweringWorkers,
  ask: () => Promise<T>,
  whenNoWorker: () => Error,
): Promise<T> {
  const settled = new AbortController();
  const signal = withCallersSignal(access, settled.signal);
  try {
    return await Promise.race([
      access.temporal.withAbortSignal(signal, ask),
      failOnceNoWorkerPolls(access, workers, signal, whenNoWorker),
    ]);
  } finally {
    settled.abort();
  }
}

/**
 * `signal`, and the caller's own when it gave one with `withAbortSignal`: the SDK keeps one signal a scope, so a scope
 * opened here would otherwise take the caller's away.
 */
function withCallersSignal(access: RunAccess, signal: AbortSignal): AbortSignal {
  const connection = access.temporal.connection as Partial<Pick<Connection, 'callContextStorage'>>;
  const callers = connection.callContextStorage?.getStore()?.abortSignal;
  return callers === undefined ? signal : AbortSignal.any([callers, signal]);
}

/**
 * Rejects with `whenNoWorker()` when, after {@link workerListingDelayMs}, the task queue lists no worker, or a probe
 * of the run then finds that none polled lately; else never settles. The listing keeps a worker that stopped for
 * minutes; the server knows sooner: a query that no poller takes is told, a second before its deadline, that none
 * polled the queue lately (in the last 20 s, `matching.queryPollerUnavailableWindow`). So a short query probes the run
 * every {@link probeEveryMs} until one is answered (a worker is there: no more probes) or told so. Only while the run
 * has no workflow task waiting for a worker: the server then holds a query for that task rather than offer it to the
 * task queue's pollers, and keeps one such query a run (`history.MaxBufferedQueryCount`), which a probe would take
 * from a reader.
 */
async function failOnceNoWorkerPolls(
  access: RunAccess,
  { taskQueue, probeRunId }: AnsweringWorkers,
  stop: AbortSignal,
  whenNoWorker: () => Error,
): Promise<never> {
  await sleep(workerListingDelayMs, undefined, { signal: stop }).catch(() => undefined);
  if (!stop.aborted && !(await listsWorker(access, taskQueue, stop))) throw whenNoWorker();
  while (probeRunId !== undefined && !stop.aborted) {
    const probed = Date.now();
    const found = await probe(access, probeRunId, stop);
    if (found === 'no_worker') throw whenNoWorker();
    if (found === 'answered') break;
    await sleep(probed + probeEveryMs - Date.now(), undefined, { signal: stop }).catch(() => undefined);
  }
  return new Promise<never>(() => undefined);
}

/** How long a probe of a run waits: the server says no worker polled lately a second before this. */
const probeDeadlineMs = 3_000;

/** How often a question still waiting while its task queue lists a worker probes the run. */
const probeEveryMs = 3_000;

/**
 * Asks the run for an empty page of its events, with a deadline of {@link probeDeadlineMs}, once a description finds
 * no workflow task of it waiting: `answered` when a worker answered (or refused) it, `no_worker` when the server says
 * no worker polled the run's task queue lately, `unclear` otherwise (a task waiting, the deadline passed while a worker
 * polled lately, the run's task failing, the call stopped).
 */
async function probe(
  access: RunAccess,
  runId: string,
  stop: AbortSignal,
): Promise<'answered' | 'no_worker' | 'unclear'> {
  const handle = access.temporal.workflow.getHandle(runId);
  try {
    return await access.temporal.withAbortSignal(stop, async () => {
      const { raw } = await handle.describe();
      if (raw.pendingWorkflowTask) return 'unclear';
      await access.temporal.withDeadline(Date.now() + probeDeadlineMs, () =>
        handle.query(eventPageQuery, { after: Number.MAX_SAFE_INTEGER, limit: 1 }),
      );
      return 'answered';
    });
  } catch (error) {
    if (isNoRecentPoller(error)) return 'no_worker';
    // How the client reports a query the worker failed (INVALID_ARGUMENT): a worker was there to fail it.
    return error instanceof QueryNotRegisteredError ? 'answered' : 'unclear';
  }
}

/**
 * Whether Temporal lists a worker that polled the task queue for workflow tasks lately; true when it could not be
 * asked (said as a process warning, see {@link warnListingFailed}) or the ask was stopped, so that only a listing with
 * nobody in it cuts a question short.
 */
async function listsWorker(access: RunAccess, taskQueue: string, stop: AbortSignal): Promise<boolean> {
  const request = {
    namespace: access.temporal.options.namespace,
    taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  };
  try {
    const listing = await access.temporal.withAbortSignal(stop, () =>
      access.temporal.workflowService.describeTaskQueue(request),
    );
    return listing.pollers.length > 0;
  } catch (error) {
    if (!stop.aborted) warnListingFailed(taskQueue, error);
    return true;
  }
}

/** The listing failures already said, by task queue and failure: each is said once a process. */
const listingFailuresSaid = new Set<string>();

/**
 * Says, as a process warning (`RELAY_E_WORKER_LISTING_FAILED`, once a process for each task queue and failure), that
 * Temporal could not list a task queue's workers: until it can, a question to a run no worker serves waits for
 * Temporal's own timeout rather than being told so. A key or role without `DescribeTaskQueue` is one such failure.
 */
function warnListingFailed(taskQueue: string, error: unknown): void {
  const failure = error instanceof Error ? error.message : String(error);
  // A gRPC failure by its status: its message may carry what differs each time (a request's id).
  const status: unknown = typeof error === 'object' && error !== null && 'code' in error ? error.code : undefined;
  const key = JSON.stringify([taskQueue, typeof status === 'number' ? status : failure]);
  if (listingFailuresSaid.has(key)) return;
  listingFailuresSaid.add(key);
  process.emitWarning(
    `Temporal could not list the workers of task queue '${taskQueue}' (${failure}): while it cannot, a question ` +
      'to a run that no worker serves waits for its timeout before it says so.',
    { type: 'RelayEWarning', code: 'RELAY_E_WORKER_LISTING_FAILED' },
  );
}
