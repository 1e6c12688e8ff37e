import { setTimeout as sleep } from 'node:timers/promises';
import protos from '@temporalio/proto';
import { RelayError } from '../shared/errors.js';
import type { RunAccess } from './run-access.js';

// The package is CommonJS: its namespaces are read from the default export.
const { TaskQueueKind, TaskQueueType } = protos.temporal.api.enums.v1;

/**
 * How long a question to a run waits for its answer before the run's task queue is asked whether any worker polls
 * it: long enough that a served run answers first and costs nothing more.
 */
export const workerListingDelayMs = 1_000;

/** Why a run cannot answer when its task queue lists no worker, as a read of it says. */
export function noWorkerPollsWhy(taskQueue: string): string {
  return `no worker has polled its task queue recently. Is a Relay-E worker running on task queue '${taskQueue}'?`;
}

/**
 * Asks a run (`ask`: a query, which the server holds until a worker takes it, about half a minute when none does), and
 * ends the wait with `run_unavailable` as soon as the run's task queue lists no worker: Temporal lists every worker
 * that polled it in the last few minutes (`matching.PollerHistoryTTL`, five by default), so none listed means none is
 * there to answer. A question still waiting then is withdrawn rather than left for the server to time out. When the
 * task queue cannot be described, the question keeps its own wait: its answer, or its failure, is what the caller gets.
 */
export async function askWhileWorkersPoll<T>(
  access: RunAccess,
  runId: string,
  taskQueue: string,
  ask: () => Promise<T>,
): Promise<T> {
  const settled = new AbortController();
  try {
    return await Promise.race([
      access.temporal.withAbortSignal(settled.signal, ask),
      failOnceNoWorkerListed(access, runId, taskQueue, settled.signal),
    ]);
  } finally {
    settled.abort();
  }
}

/** Rejects with `run_unavailable` when, after {@link workerListingDelayMs}, the task queue lists no worker; else never settles. */
async function failOnceNoWorkerListed(
  access: RunAccess,
  runId: string,
  taskQueue: string,
  stop: AbortSignal,
): Promise<never> {
  await sleep(workerListingDelayMs, undefined, { signal: stop }).catch(() => undefined);
  const listed = stop.aborted ? true : await listsWorker(access, taskQueue, stop);
  if (!listed) throw new NoWorkerListedError(runId, taskQueue);
  return new Promise<never>(() => undefined);
}

/** `run_unavailable` for a question cut short because the run's task queue lists no worker (it was withdrawn). */
export class NoWorkerListedError extends RelayError {
  constructor(
    runId: string,
    readonly taskQueue: string,
  ) {
    super('run_unavailable', `Run '${runId}' cannot answer right now: ${noWorkerPollsWhy(taskQueue)}`);
  }
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
