import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import { isWorkflowNotFound } from '../client/is-workflow-not-found.js';
import { readWorkerCatalog } from '../client/read-worker-catalog.js';
import type { WorkerCatalog, WorkerCatalogPublication } from '../shared/worker-catalog.js';
import { workerCatalogWorkflowId } from '../shared/worker-catalog.js';
import type { relayWorkerCatalog } from '../../workflows/worker-catalog.js';
import {
  publishWorkerCatalogSignal,
  withdrawWorkerCatalogSignal,
  workerCatalogRefreshMs,
} from '../../workflows/worker-catalog.js';

/** Where a worker announces its catalog. */
export interface CatalogPublisherTarget {
  connection: NativeConnection;
  namespace: string;
  taskQueue: string;
  dataConverter?: DataConverter | undefined;
}

/** A worker's running announcement; `announce` sends it again now, `stop` takes it back. */
export interface CatalogPublisher {
  announce(): void;
  stop(): Promise<void>;
}

/** How often, and how many times, the catalog is read back after the first announcement until it includes it. */
const readBackEveryMs = 500;
const readBackAttempts = 20;

/** How many of the other workers' tools a warning names before it counts the rest. */
const toolsNamed = 10;

/**
 * Announces the worker's tools and model prefixes on its task queue's catalog workflow, as `catalog()` reads them
 * at each announcement, refreshes the announcement while the worker runs, and withdraws it on `stop`. A failed
 * announcement is a warning, not a reason to stop the worker: clients then know less and runs report what they
 * lack themselves. Withdrawing from a catalog workflow that no longer exists (it ended, every announcement having
 * lapsed, or it was terminated) withdraws nothing and is no warning.
 *
 * Once the catalog includes this worker's announcement (read back after the first one, and after each refresh), a
 * catalog that lists other workers with tools or model prefixes this worker lacks is reported once through
 * `warnShared`: the task queue serves two sets of tools, as two projects that share a queue (the default `relay-e`)
 * do, and each project's runs may go to the other's workers.
 */
export function startCatalogPublisher(
  target: CatalogPublisherTarget,
  catalog: () => Omit<WorkerCatalogPublication, 'workerId'>,
  warn: (message: string, error: unknown) => void,
  warnShared: (message: string) => void = (message) => warn(message, undefined),
): CatalogPublisher {
  const client = new Client({
    connection: target.connection,
    namespace: target.namespace,
    ...(target.dataConverter ? { dataConverter: target.dataConverter } : {}),
  });
  const workflowId = workerCatalogWorkflowId(target.taskQueue);
  const workerId = randomUUID();
  const publish = () =>
    client.workflow.signalWithStart<typeof relayWorkerCatalog, [WorkerCatalogPublication]>('relayWorkerCatalog', {
      workflowId,
      taskQueue: target.taskQueue,
      args: [],
      signal: publishWorkerCatalogSignal,
      signalArgs: [{ workerId, ...catalog(), refreshMs: workerCatalogRefreshMs }],
      staticSummary: `Tools and models the workers of task queue ${target.taskQueue} serve`,
    });
  const sharedQueue = watchSharedQueue(client, target.taskQueue, { workerId, catalog, warnShared });
  // One announcement at a time, so an older catalog never lands after a newer one.
  let announced = Promise.resolve();
  const announce = (afterwards?: () => void) => {
    announced = announced.then(() =>
      publish().then(
        () => afterwards?.(),
        (error: unknown) => warn('Could not announce the worker catalog', error),
      ),
    );
  };
  announce(() => sharedQueue.readBackUntilIncluded(1));
  const refresh = setInterval(() => announce(() => void sharedQueue.check()), workerCatalogRefreshMs);
  refresh.unref();
  return {
    announce: () => announce(),
    async stop() {
      clearInterval(refresh);
      const checked = sharedQueue.stop();
      await announced;
      await checked;
      // Without a withdrawal the announcement still lapses, after three of its refresh periods (3 ×
      // workerCatalogRefreshMs). A catalog workflow that no longer exists holds no announcement to withdraw.
      await client.workflow
        .getHandle(workflowId)
        .signal(withdrawWorkerCatalogSignal, workerId)
        .catch((error: unknown) => {
          if (!isWorkflowNotFound(error)) warn('Could not withdraw the worker catalog', error);
        });
    },
  };
}

/**
 * Reads the catalog back until it includes this worker's announcement (`readBackUntilIncluded`, and `check` after each
 * refresh), then reports once, through `warnShared`, a queue whose other workers serve what this one lacks.
 */
function watchSharedQueue(
  client: Client,
  taskQueue: string,
  worker: {
    workerId: string;
    catalog: () => Omit<WorkerCatalogPublication, 'workerId'>;
    warnShared: (message: string) => void;
  },
) {
  // Whether the catalog was read back with this worker's announcement in it, and whether that was reported.
  const sharing = { stopped: false, warned: false, checking: Promise.resolve(false) };
  let readBack: NodeJS.Timeout | undefined;
  const check = (): Promise<boolean> => {
    if (sharing.stopped || sharing.warned) return Promise.resolve(true);
    sharing.checking = readWorkerCatalog(client, taskQueue).then(
      (shared) => {
        if (!shared?.workerIds?.includes(worker.workerId)) return false;
        const message = describeSharedQueue(taskQueue, worker.workerId, shared, worker.catalog());
        if (message !== undefined && !sharing.stopped && !sharing.warned) {
          sharing.warned = true;
          worker.warnShared(message);
        }
        return true;
      },
      // Only a warning depends on it: the next refresh reads the catalog again.
      () => false,
    );
    return sharing.checking;
  };
  const readBackUntilIncluded = (attempt: number): void => {
    readBack = undefined;
    void check().then((included) => {
      if (included || sharing.stopped || attempt >= readBackAttempts) return;
      readBack = setTimeout(() => readBackUntilIncluded(attempt + 1), readBackEveryMs);
      readBack.unref();
    });
  };
  return {
    check,
    readBackUntilIncluded,
    /** Stops reading back; resolves once a read under way has ended. */
    stop(): Promise<boolean> {
      sharing.stopped = true;
      if (readBack !== undefined) clearTimeout(readBack);
      return sharing.checking;
    },
  };
}

/**
 * The warning for a task queue whose catalog lists other workers with tools or model prefixes this worker lacks;
 * undefined when there are none (no other worker, or workers of the same project that serve the same).
 */
export function describeSharedQueue(
  taskQueue: string,
  workerId: string,
  shared: WorkerCatalog,
  own: Omit<WorkerCatalogPublication, 'workerId'>,
): string | undefined {
  const others = (shared.workerIds ?? []).filter((id) => id !== workerId).length;
  if (others === 0) return undefined;
  const ownTools = new Set(own.tools.map((tool) => tool.name));
  const tools = shared.tools.map((tool) => tool.name).filter((name) => !ownTools.has(name));
  const prefixes = shared.modelPrefixes.filter((prefix) => !own.modelPrefixes.includes(prefix));
  if (tools.length === 0 && prefixes.length === 0) return undefined;
  const named =
    tools.slice(0, toolsNamed).join(', ') + (tools.length > toolsNamed ? ` and ${tools.length - toolsNamed} more` : '');
  const lacks = [
    tools.length > 0 ? `tools ${named}` : undefined,
    prefixes.length > 0 ? `models ${prefixes.map((prefix) => `${prefix}:…`).join(', ')}` : undefined,
  ].filter(Boolean);
  return (
    `Other workers on task queue '${taskQueue}' (${others}) serve what this worker does not: ${lacks.join('; ')}. ` +
    `A run started on the queue goes to any of its workers, so runs meant for this worker may reach those tools and ` +
    `models, and theirs this worker. If they belong to another project, give each project its own taskQueue ` +
    `(taskQueue in relay-e.config.ts or createWorker, --task-queue, RELAY_E_TASK_QUEUE). ` +
    `(A worker stopped in the last few minutes without withdrawing is still listed until its announcement lapses.)`
  );
}
