import { randomUUID } from 'node:crypto';
import { Client, Connection } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import type { WorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import { inject } from 'vitest';
import { quietenWorkerRuntime } from '../../src/testing/quieten-worker-runtime.js';

/** Connections to the Temporal dev server that the `temporal` project's global setup started. */
export interface TemporalTestEnv {
  readonly address: string;
  readonly namespace: string;
  /** Client connection (gRPC in JS), for `client`. */
  readonly connection: Connection;
  /** Native (Rust core) connection, which workers need. */
  readonly nativeConnection: NativeConnection;
  readonly client: Client;
  /** Closes both connections; call it in `afterAll`. */
  close(): Promise<void>;
}

/** Connects a `Client` and a `NativeConnection` to the server provided by the global setup. */
export async function connectTemporalTestEnv(): Promise<TemporalTestEnv> {
  const address = inject('temporalAddress');
  const namespace = inject('temporalNamespace');
  quietenWorkerRuntime();
  const [connection, nativeConnection] = await Promise.all([
    Connection.connect({ address }),
    NativeConnection.connect({ address }),
  ]);
  return {
    address,
    namespace,
    connection,
    nativeConnection,
    client: new Client({ connection, namespace }),
    async close() {
      await Promise.all([connection.close(), nativeConnection.close()]);
    },
  };
}

/** Returns a task queue name no other test uses, so tests sharing one server never steal each other's tasks. */
export function uniqueTaskQueue(label = 'test'): string {
  return `${label}-${randomUUID()}`;
}

/** Returns a workflow id no other test uses. */
export function uniqueWorkflowId(label = 'wf'): string {
  return `${label}-${randomUUID()}`;
}

// Module state lives once per test file (vitest isolates files), which is the bundling scope we want.
const bundles = new Map<string, Promise<WorkflowBundleWithSourceMap>>();

/** Bundles the workflows at `workflowsPath` once per test file: bundling takes seconds, a worker start milliseconds. */
export function bundleWorkflows(workflowsPath: string): Promise<WorkflowBundleWithSourceMap> {
  let bundle = bundles.get(workflowsPath);
  if (bundle === undefined) {
    bundle = bundleWorkflowCode({ workflowsPath, logger: new DefaultLogger('WARN') });
    bundles.set(workflowsPath, bundle);
  }
  return bundle;
}

/** Options of {@link withWorker}: the usual worker options, minus what the test environment fills in. */
export type TestWorkerOptions = Omit<
  WorkerOptions,
  'connection' | 'namespace' | 'taskQueue' | 'workflowsPath' | 'workflowBundle'
> & {
  /**
   * Task queue the worker polls.
   * @default a fresh `uniqueTaskQueue()`
   */
  taskQueue?: string;
} & (
    | { workflowsPath: string; workflowBundle?: never }
    | { workflowBundle: WorkflowBundleWithSourceMap; workflowsPath?: never }
  );

/** What the callback of {@link withWorker} gets. */
export interface RunningTestWorker {
  readonly worker: Worker;
  readonly taskQueue: string;
}

/**
 * Runs a worker on the test server for as long as `callback` runs, then shuts it down; rejects with the
 * callback's error, or with the worker's if the worker fails first.
 */
export async function withWorker<T>(
  env: TemporalTestEnv,
  options: TestWorkerOptions,
  callback: (running: RunningTestWorker) => Promise<T>,
): Promise<T> {
  const { workflowsPath, workflowBundle, taskQueue = uniqueTaskQueue(), ...workerOptions } = options;
  const bundle = workflowBundle ?? (await bundleWorkflows(workflowsPath));
  const worker = await Worker.create({
    ...workerOptions,
    connection: env.nativeConnection,
    namespace: env.namespace,
    taskQueue,
    workflowBundle: bundle,
  });
  return worker.runUntil(() => callback({ worker, taskQueue }));
}
