import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { NativeConnection } from '@temporalio/worker';
import type { WorkerCatalogPublication } from '../shared/worker-catalog.js';
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

/**
 * Announces the worker's tools and model prefixes on its task queue's catalog workflow, as `catalog()` reads them
 * at each announcement, refreshes the announcement while the worker runs, and withdraws it on `stop`. A failed
 * announcement is a warning, not a reason to stop the worker: clients then know less and runs report what they
 * lack themselves.
 */
export function startCatalogPublisher(
  target: CatalogPublisherTarget,
  catalog: () => Omit<WorkerCatalogPublication, 'workerId'>,
  warn: (message: string, error: unknown) => void,
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
  // One announcement at a time, so an older catalog never lands after a newer one.
  let announced = Promise.resolve();
  const announce = () => {
    announced = announced.then(() =>
      publish().then(
        () => undefined,
        (error: unknown) => warn('Could not announce the worker catalog', error),
      ),
    );
  };
  announce();
  const refresh = setInterval(announce, workerCatalogRefreshMs);
  refresh.unref();
  return {
    announce,
    async stop() {
      clearInterval(refresh);
      await announced;
      // Without a withdrawal the announcement still lapses after three refresh periods (three minutes).
      await client.workflow
        .getHandle(workflowId)
        .signal(withdrawWorkerCatalogSignal, workerId)
        .catch((error: unknown) => warn('Could not withdraw the worker catalog', error));
    },
  };
}
