import type { Client } from '@temporalio/client';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll } from 'vitest';
import { readHistory } from '../../src/client/read-history.js';
import { RelayClient } from '../../src/client/relay-client.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { relayWorkflowBundle } from '../../src/testing/relay-workflow-bundle.js';
import { createWorker } from '../../src/worker/create-worker.js';
import type { WorkerCatalog } from '../../src/shared/worker-catalog.js';
import type { CreateWorkerOptions } from '../../src/worker/create-worker.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from './temporal-test-env.js';
import type { TemporalTestEnv } from './temporal-test-env.js';

export { waitForRun } from '../../src/testing/wait-for-run.js';

/** Relay-E workers and clients on the dev server the global setup started, shared by the tests of one file. */
export interface RelayTestKit {
  env: TemporalTestEnv;
  address: string;
  namespace: string;
  temporal: Client;
  /** A client with no worker behind its task queue: for calls that must fail before reaching one. */
  client: RelayClient;
  /**
   * Starts a Relay-E worker and a client bound to its task queue (a fresh one unless given); it runs until
   * `stop` or `close`.
   */
  startWorker(
    options: Omit<CreateWorkerOptions, 'taskQueue' | 'workflowBundle'> & { taskQueue?: string },
  ): Promise<RunningWorker>;
  close(): Promise<void>;
}

export interface RunningWorker {
  taskQueue: string;
  client: RelayClient;
  worker: Worker;
  stop: () => Promise<void>;
}

async function createRelayTestKit(): Promise<RelayTestKit> {
  const env = await connectTemporalTestEnv();
  const { connection, namespace } = env;
  const client = await RelayClient.connect({ connection, namespace, taskQueue: uniqueTaskQueue('no-worker') });
  const running = new Set<RunningWorker>();

  return {
    env,
    address: env.address,
    namespace,
    temporal: env.client,
    client,
    async startWorker(options) {
      const taskQueue = options.taskQueue ?? uniqueTaskQueue('relay');
      const worker = await createWorker({
        ...options,
        taskQueue,
        namespace,
        // The SDK allows one worker per task queue on a connection: a second worker of a queue brings its own.
        connection: options.connection ?? env.nativeConnection,
        workflowBundle: await relayWorkflowBundle(),
      });
      const runPromise = worker.run();
      const entry: RunningWorker = {
        taskQueue,
        worker,
        client: await RelayClient.connect({ connection, namespace, taskQueue }),
        stop: async () => {
          running.delete(entry);
          if (worker.getState() === 'RUNNING') worker.shutdown();
          await runPromise;
        },
      };
      running.add(entry);
      return entry;
    },
    async close() {
      await Promise.all([...running].map((entry) => entry.stop()));
      await env.close();
    },
  };
}

/** Waits for the first announcement of a worker on the client's task queue, which it sends as it starts. */
export async function waitForWorkerCatalog(client: RelayClient, timeoutMs = 10_000): Promise<WorkerCatalog> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    const catalog = await client.getWorkerCatalog();
    if (catalog) return catalog;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`No worker announced its catalog on task queue ${client.taskQueue} within ${timeoutMs} ms`);
}

export function eventTypes(events: readonly RunEvent[]): string[] {
  return events.map((event) => event.type);
}

/** Counts the activities of one type that the run scheduled, read from its real history. */
export async function countScheduledActivities(temporal: Client, runId: string, activityType: string): Promise<number> {
  const history = await readHistory(temporal, runId);
  return (history.events ?? []).filter(
    (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === activityType,
  ).length;
}

/** The kit as a test file uses it: closed by the file's own `afterAll`, never by a test. */
export type FileTestKit = Omit<RelayTestKit, 'close'>;

/**
 * The test file's kit: made before its first test (`beforeAll`) and closed after its last, once the `afterAll` hooks
 * the file registers later have run (vitest runs them in reverse). Call it at the top of the file; its members read
 * the kit, so use them inside tests and hooks.
 */
export function useRelayTestKit(): FileTestKit {
  let kit: RelayTestKit | undefined;
  beforeAll(async () => {
    kit = await createRelayTestKit();
  });
  afterAll(async () => {
    await kit?.close();
  });
  const made = (): RelayTestKit => {
    if (!kit) throw new Error('The Relay-E test kit is made in beforeAll: use it inside tests and hooks');
    return kit;
  };
  return {
    get env() {
      return made().env;
    },
    get address() {
      return made().address;
    },
    get namespace() {
      return made().namespace;
    },
    get temporal() {
      return made().temporal;
    },
    get client() {
      return made().client;
    },
    startWorker: (options) => made().startWorker(options),
  };
}
