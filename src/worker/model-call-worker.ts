import { randomBytes } from 'node:crypto';
import { Worker } from '@temporalio/worker';
import type { FixedSizeSlotSupplier, Logger, NativeConnection, WorkerOptions } from '@temporalio/worker';
import type { RelayActivities } from '../../activities/index.js';
import { RelayError } from '../shared/errors.js';
import { modelDeltaBatchMs } from '../shared/run-types.js';

/** A worker of model calls on a task queue of this process's own, beside a Relay-E worker. */
export interface ModelCallWorker {
  readonly taskQueue: string;
  /**
   * Stops taking calls, waits for those running, and rethrows the worker's failure if it failed. The worker already
   * began stopping when the main worker left RUNNING, so the calls of both get the same grace time, not one each.
   */
  stop(): Promise<void>;
}

/**
 * Polls a task queue only this process knows for the model activity, so a run can send its next model call to the
 * worker whose private store holds the run's context. It has the main worker's connection, namespace, identity, data
 * converter, activity interceptors, shutdown grace time and activity slots ({@link modelCallSlotsOf}); if it fails,
 * the main worker is shut down too, so the failure is not silent. It starts shutting down when the main worker does:
 * otherwise it would take calls while the main worker drains, and its own calls would get a second grace time.
 */
export async function startModelCallWorker(
  main: Worker,
  connection: NativeConnection,
  activities: Pick<RelayActivities, 'callModel'>,
  slots: ModelCallSlots,
): Promise<ModelCallWorker> {
  // The running worker's data converter: every plugin's codecs, those configured after Relay-E's included.
  const { dataConverter } = main.options;
  // 64 random bits tell worker processes apart; the name is in every model call's scheduled event, so it is short.
  const taskQueue = `${main.options.taskQueue}/model-calls/${randomBytes(8).toString('hex')}`;
  const worker = await Worker.create({
    connection,
    namespace: main.options.namespace,
    taskQueue,
    activities: { callModel: (request: Parameters<RelayActivities['callModel']>[0]) => activities.callModel(request) },
    identity: main.options.identity,
    ...slots,
    // Model calls still running when it stops get the time the main worker gave its own activities.
    shutdownGraceTime: main.options.shutdownGraceTimeMs,
    // Streamed model text rides on heartbeats, sent as often as the text is batched: as on the main worker, unless it
    // sets its own throttle (withHeartbeatsForStreaming in relay-plugin.ts).
    maxHeartbeatThrottleInterval: modelDeltaBatchMs,
    interceptors: { activity: main.options.interceptors.activity, client: main.options.interceptors.client },
    ...(dataConverter ? { dataConverter } : {}),
  });
  quietenNoWorkflowsWarning(worker);
  let failure: unknown;
  const running = worker.run().catch((error: unknown) => {
    failure = error;
    if (main.getState() === 'RUNNING') main.shutdown();
  });
  const shutdown = () => {
    if (worker.getState() === 'RUNNING') worker.shutdown();
  };
  const stopFollowing = onLeavingRunning(main, shutdown);
  return {
    taskQueue,
    async stop() {
      stopFollowing();
      shutdown();
      await running;
      if (failure !== undefined) throw failure;
    },
  };
}

/** The part of the SDK's (1.24) protected state subject of a worker that {@link onLeavingRunning} reads. */
interface WorkerStates {
  subscribe(next: (state: string) => void): { unsubscribe(): void };
}

/**
 * Calls `leaving` once when the worker leaves RUNNING (`shutdown()`, a shutdown signal, or a failure). The SDK has no
 * public event for it, so its state subject is read; without one nothing is called, and the stop after the worker's
 * `run()` still applies. Returns the unsubscribe.
 */
function onLeavingRunning(worker: Worker, leaving: () => void): () => void {
  const states = (worker as unknown as { stateSubject?: Partial<WorkerStates> }).stateSubject;
  if (typeof states?.subscribe !== 'function') return () => {};
  let left = false;
  // The subject gives its current state at once (INITIALIZED, or RUNNING if the worker runs already).
  const subscription = (states as WorkerStates).subscribe((state) => {
    if (left || state === 'INITIALIZED' || state === 'RUNNING') return;
    left = true;
    leaving();
  });
  return () => {
    subscription.unsubscribe();
  };
}

/** What the SDK logs at WARN when a worker that runs no workflows starts: the model-call worker runs none by design. */
export const noWorkflowsWarning = 'No workflows registered, not polling for workflow tasks';

/**
 * Logs the SDK's warning that the worker runs no workflows at DEBUG instead, so users of every Relay-E worker do not
 * see a warning about a worker they never configured. The SDK (1.24) has no option that declares a worker
 * activity-only, and logs this through the worker's own logger, so that logger is wrapped before the worker runs;
 * every other line passes through as it was.
 */
export function quietenNoWorkflowsWarning(worker: Worker): void {
  const logger = (worker as unknown as { logger?: Logger }).logger;
  if (logger === undefined || typeof logger.warn !== 'function') return;
  const quiet: Logger = {
    log(level, message, meta) {
      if (level === 'WARN' && message === noWorkflowsWarning) logger.debug(message, meta);
      else logger.log(level, message, meta);
    },
    trace(message, meta) {
      logger.trace(message, meta);
    },
    debug(message, meta) {
      logger.debug(message, meta);
    },
    info(message, meta) {
      logger.info(message, meta);
    },
    warn(message, meta) {
      if (message === noWorkflowsWarning) logger.debug(message, meta);
      else logger.warn(message, meta);
    },
    error(message, meta) {
      logger.error(message, meta);
    },
  };
  Object.defineProperty(worker, 'logger', { value: quiet, configurable: true, enumerable: true, writable: true });
}

/** What bounds the model-call worker's activities. */
export type ModelCallSlots = Pick<WorkerOptions, 'tuner' | 'maxConcurrentActivityTaskExecutions'>;

/** Slots for the task kinds the model-call worker never polls (it runs no workflows, local activities or Nexus). */
const unpolled: FixedSizeSlotSupplier = { type: 'fixed-size', numSlots: 1 };

/**
 * The main worker's activity slots, as its options give them, for its model calls: a call waiting for a slot past the
 * run's start timeout is sent whole to the shared queue, so the calls get what the worker's own activities get. A
 * fixed number gives each worker that many; a resource-based tuner or a custom slot supplier is used as given, so a
 * shared `ResourceBasedController` or a custom supplier's budget spans both workers.
 */
export function modelCallSlotsOf(options: ModelCallSlots): ModelCallSlots {
  const { tuner, maxConcurrentActivityTaskExecutions } = options;
  if (tuner === undefined) {
    return maxConcurrentActivityTaskExecutions === undefined ? {} : { maxConcurrentActivityTaskExecutions };
  }
  if (!('activityTaskSlotSupplier' in tuner)) return { tuner };
  return {
    tuner: {
      activityTaskSlotSupplier: tuner.activityTaskSlotSupplier,
      workflowTaskSlotSupplier: unpolled,
      localActivityTaskSlotSupplier: unpolled,
      nexusTaskSlotSupplier: unpolled,
    },
  };
}

/**
 * Refuses activity rate limits on a worker that keeps model calls on itself: they hold only its shared task queue, so
 * the model calls sent back to it on its own queue would go past them unseen.
 */
export function refuseActivityRateLimits(
  options: Pick<WorkerOptions, 'maxActivitiesPerSecond' | 'maxTaskQueueActivitiesPerSecond'>,
): void {
  const limit = (['maxActivitiesPerSecond', 'maxTaskQueueActivitiesPerSecond'] as const).find(
    (name) => options[name] !== undefined,
  );
  if (limit === undefined) return;
  throw new RelayError(
    'invalid_input',
    `${limit} limits only the worker's shared task queue: the model calls sent back to this worker on its own queue (keepModelCallsOnWorker) would not count against it. Set keepModelCallsOnWorker: false to send every call by the shared queue, under the limit, or limit calls in the model provider`,
  );
}
