import { setTimeout as sleep } from 'node:timers/promises';
import type { Connection } from '@temporalio/client';
import protos from '@temporalio/proto';
import { RelayError } from '../shared/errors.js';
import type { RunAccess } from './run-access.js';

// The package is CommonJS: its namespaces are read from the default export.
const { TaskQueueKind, TaskQueueType } = protos.temporal.api.enums.v1;

/**
 * How long a question to a run waits for its answer before the run's task queue is asked whether any worker polls
 * it: long enough that a served run answers first and costs nothing more.
 */
const workerListingDelayMs = 1_000;

/** Why a run cannot answer when its task queue lists no worker, as a read of it says. */
export function noWorkerPollsWhy(taskQueue: string): string {
  return `no worker has polled its task queue recently. Is a Relay-E worker running on task queue '${taskQueue}'?`;
}

/** The `run_unavailable` a read of a run gets when its task queue lists no worker. */
export function noWorkerListed(runId: string, taskQueue: string): RelayError {
  return new RelayError('run_unavailable', `Run '${runId}' cannot answer right now: ${noWorkerPollsWhy(taskQueue)}`);
}

/**
 * Asks a run (`ask`: a query or an update, which the server holds until a worker takes it: about half a minute for a
 * query when none does) and stops waiting as soon as the run's task queue lists no worker, failing with
 * `whenNoWorker()`: Temporal lists every worker that polled the queue in the last few minutes
 * (`matching.PollerHistoryTTL`, five by default), so none listed means none is there to answer. The call still waiting
 * is cancelled rather than left for the server to time out (an update the server admitted stays with the run, as it
 * does when a deadline ends the wait). When the task queue cannot be described, the question keeps its own wait: its
 * answer, or its failure, is what the caller gets.
 */
export async function askWhileWorkersPoll<T>(
  access: RunAccess,
  taskQueue: string,
  ask: () => Promise<T>,
  whenNoWorker: () => Error,
): Promise<T> {
  const settled = new AbortController();
  const signal = withCallersSignal(access, settled.signal);
  try {
    return await Promise.race([
      access.temporal.withAbortSignal(signal, ask),
      failOnceNoWorkerListed(access, taskQueue, signal, whenNoWorker),
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
 * Rejects with `whenNoWorker()` when, after {@link workerListingDelayMs}, the task queue lists no worker; else never
 * settles.
 */
async function failOnceNoWorkerListed(
  access: RunAccess,
  taskQueue: string,
  stop: AbortSignal,
  whenNoWorker: () => Error,
): Promise<never> {
  await sleep(workerListingDelayMs, undefined, { signal: stop }).catch(() => undefined);
  const listed = stop.aborted ? true : await listsWorker(access, taskQueue, stop);
  if (!listed) throw whenNoWorker();
  return new Promise<never>(() => undefined);
}

/**
 * Whether Temporal lists a worker that polled the task queue for workflow tasks lately; true when it could not be
 * asked (or the ask was stopped), so that only a listing with nobody in it cuts a question short.
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
  } catch {
    return true;
  }
}
