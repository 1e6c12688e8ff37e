import { setTimeout as sleep } from 'node:timers/promises';
import { QueryNotRegisteredError } from '@temporalio/client';
import type { Connection } from '@temporalio/client';
import { optionalTsToMs } from '@temporalio/common/lib/time.js';
import protos from '@temporalio/proto';
import { eventPageQuery } from '../../workflows/messages.js';
import { RelayError } from '../shared/errors.js';
import { grpcMessageOf } from './grpc-message.js';
import type { RunAccess } from './run-access.js';

// The package is CommonJS: its namespaces are read from the default export.
const { PendingWorkflowTaskState, TaskQueueKind, TaskQueueType } = protos.temporal.api.enums.v1;
type PollerInfo = protos.temporal.api.taskqueue.v1.IPollerInfo;

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

/** The run a question is for, and how the workers that answer for it are looked for. */
export interface AnsweringWorkers {
  /** The task queue whose workers answer for the run. */
  taskQueue: string;
  runId: string;
  /**
   * Whether the run may be probed with a short query (see {@link failOnceNoWorkerPolls}): for a read. Not for an
   * update: the workflow task it schedules holds every query to the run until a worker takes that task.
   */
  probe: boolean;
}

/**
 * Asks a run (`ask`: a query or an update, which the server holds until a worker takes it: about half a minute for a
 * query when none does) and stops waiting as soon as no worker is there to answer, failing with `whenNoWorker()`:
 * when the run's task queue lists no worker (Temporal lists every worker that polled it in the last few minutes,
 * `matching.PollerHistoryTTL`, five by default), or, while it still lists one, when its listing shows no new poll for
 * a while or the server tells a probe of the run (a read's) that no worker polled lately (see
 * {@link failOnceNoWorkerPolls}). The call still waiting is cancelled rather than left for the server to time out (an
 * update the server admitted stays with the run, as it does when a deadline ends the wait). When the task queue cannot
 * be described (a process warning says so), or a probe gets no clear answer, the question keeps its own wait: its
 * answer, or its failure, is what the caller gets.
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
 * Rejects with `whenNoWorker()` when, after {@link workerListingDelayMs}, the task queue lists no worker, or no worker
 * polls it any more; else never settles. The listing keeps a worker that stopped for minutes, so the task queue and the
 * run are looked at again every {@link checkEveryMs}:
 *
 * - While a workflow task of the run waits for a worker to start it (an update schedules one), no worker polls once the
 *   newest poll the listing shows has not moved for {@link quietPollsMs}: a live worker would have started the task,
 *   or polled for more.
 * - While none waits, a read probes the run: the server tells a query that no poller takes, a second before its
 *   deadline, that none polled the queue lately (in the last 20 s, `matching.queryPollerUnavailableWindow`). A probe
 *   answered says a worker is there: no more looks. Never while a task waits: the server then holds a query for that
 *   task rather than offer it to the task queue's pollers, and keeps one such query a run
 *   (`history.MaxBufferedQueryCount`), which a probe would take from a reader. A question no task waits for is not
 *   judged by the listing: a worker may be answering it slowly without polling.
 */
async function failOnceNoWorkerPolls(
  access: RunAccess,
  workers: AnsweringWorkers,
  stop: AbortSignal,
  whenNoWorker: () => Error,
): Promise<never> {
  await sleep(workerListingDelayMs, undefined, { signal: stop }).catch(() => undefined);
  const polls = new PollsSeen();
  while (!stop.aborted) {
    const looked = Date.now();
    const listing = await listWorkers(access, workers.taskQueue, stop);
    if (listing?.length === 0) throw whenNoWorker();
    const task = await workflowTaskOf(access, workers.runId, stop);
    if (task !== 'scheduled') polls.forget();
    else if (listing !== undefined && polls.quietFor(listing, quietPollsMs)) throw whenNoWorker();
    if (workers.probe && task === 'none') {
      const found = await probe(access, workers.runId, stop);
      if (found === 'no_worker') throw whenNoWorker();
      if (found === 'answered') break;
    }
    await sleep(looked + checkEveryMs - Date.now(), undefined, { signal: stop }).catch(() => undefined);
  }
  return new Promise<never>(() => undefined);
}

/**
 * Whether a workflow task of the run waits for a worker to start it (`scheduled`), is being run (`started`), or none is
 * pending (`none`); undefined when the run could not be described, or the look was stopped.
 */
async function workflowTaskOf(
  access: RunAccess,
  runId: string,
  stop: AbortSignal,
): Promise<'scheduled' | 'started' | 'none' | undefined> {
  try {
    const { raw } = await access.temporal.withAbortSignal(stop, () =>
      access.temporal.workflow.getHandle(runId).describe(),
    );
    const task = raw.pendingWorkflowTask;
    if (!task) return 'none';
    return task.state === PendingWorkflowTaskState.PENDING_WORKFLOW_TASK_STATE_STARTED ? 'started' : 'scheduled';
  } catch {
    return undefined;
  }
}

/**
 * How long the newest poll a task queue's listing shows may stay unchanged while a question waits before no worker is
 * taken to poll it: the window Temporal judges the same way by (`matching.queryPollerUnavailableWindow`). Measured on
 * this process's clock between listings, so a server clock set otherwise does not matter.
 */
const quietPollsMs = 20_000;

/** How often a question still waiting while its task queue lists a worker looks at the listing and the run again. */
const checkEveryMs = 3_000;

/**
 * The newest poll the listings of a task queue showed (Temporal stamps a worker's entry as each of its polls starts
 * and ends), and when this process first saw it.
 */
class PollsSeen {
  private newest = -1;
  private seenAt = 0;

  /** Starts over: the polls seen before do not count. */
  forget(): void {
    this.newest = -1;
  }

  /** Whether no listing since `ms` ago, this one included, showed a poll newer than the one seen then. */
  quietFor(pollers: PollerInfo[], ms: number): boolean {
    const newest = Math.max(0, ...pollers.map((poller) => optionalTsToMs(poller.lastAccessTime) ?? 0));
    if (newest > this.newest) {
      this.newest = newest;
      this.seenAt = Date.now();
    }
    return Date.now() - this.seenAt >= ms;
  }
}

/** How long a probe of a run waits: the server says no worker polled lately a second before this. */
const probeDeadlineMs = 3_000;

/**
 * Asks the run for an empty page of its events, with a deadline of {@link probeDeadlineMs}: `answered` when a worker
 * answered (or refused) it, `no_worker` when the server says no worker polled the run's task queue lately, `unclear`
 * otherwise (the deadline passed while a worker polled lately, the run's task failing, the call stopped).
 */
async function probe(
  access: RunAccess,
  runId: string,
  stop: AbortSignal,
): Promise<'answered' | 'no_worker' | 'unclear'> {
  const handle = access.temporal.workflow.getHandle(runId);
  try {
    await access.temporal.withAbortSignal(stop, () =>
      access.temporal.withDeadline(Date.now() + probeDeadlineMs, () =>
        handle.query(eventPageQuery, { after: Number.MAX_SAFE_INTEGER, limit: 1 }),
      ),
    );
    return 'answered';
  } catch (error) {
    if (isNoRecentPoller(error)) return 'no_worker';
    // How the client reports a query the worker failed (INVALID_ARGUMENT): a worker was there to fail it.
    return error instanceof QueryNotRegisteredError ? 'answered' : 'unclear';
  }
}

/**
 * The workers Temporal lists for the task queue's workflow tasks (every one that polled it in the last few minutes);
 * undefined when it could not be asked (said as a process warning, see {@link warnListingFailed}) or the ask was
 * stopped, so that only a listing cuts a question short.
 */
async function listWorkers(access: RunAccess, taskQueue: string, stop: AbortSignal): Promise<PollerInfo[] | undefined> {
  const request = {
    namespace: access.temporal.options.namespace,
    taskQueue: { name: taskQueue, kind: TaskQueueKind.TASK_QUEUE_KIND_NORMAL },
    taskQueueType: TaskQueueType.TASK_QUEUE_TYPE_WORKFLOW,
  };
  try {
    const listing = await access.temporal.withAbortSignal(stop, () =>
      access.temporal.workflowService.describeTaskQueue(request),
    );
    return listing.pollers;
  } catch (error) {
    if (!stop.aborted) warnListingFailed(taskQueue, error);
    return undefined;
  }
}

/** The listing failures already said, by task queue and failure: each is said once a process. */
const listingFailuresSaid = new Set<string>();

/**
 * Says, as a process warning (a `RelayEWarning`, once a process for each task queue and failure), that
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
