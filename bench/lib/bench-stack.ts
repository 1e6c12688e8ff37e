import { mkdtempSync, rmSync } from 'node:fs';
import { cpus, freemem, totalmem, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import { RelayClient } from '../../src/client/relay-client.js';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServerOptions } from '../../src/dev/temporal-dev-server.js';
import type { ModelProvider } from '../../src/model/model-provider.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import { bundleRelayWorkflows, createWorker } from '../../src/worker/index.js';

/** A dev server on a SQLite file, one Relay-E worker and a client: what every benchmark measures against. */
export interface BenchStack {
  client: RelayClient;
  connection: Connection;
  address: string;
  stop(): Promise<void>;
}

export async function startBenchStack(options: {
  tools: readonly ToolDefinition[];
  models: Record<string, ModelProvider>;
  workerOptions?: CreateWorkerOptionsPassthrough;
  /** A dev server the benchmark already started (shared by every variant); otherwise one is started here. */
  serverAddress?: string;
  /** @default 'bench' */
  taskQueue?: string;
  /** createWorker's option of that name. @default true (the worker's store is its own memory) */
  keepModelCallsOnWorker?: boolean;
  /** Where the worker serves the SDK's Prometheus metrics (see installBenchRuntime); none without it. */
  metricsAddress?: string;
}): Promise<BenchStack> {
  installBenchRuntime(options.metricsAddress);
  const directory = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  // A file, not memory: durability is what is being measured, so the server writes as it would for real.
  const server = await startTemporalDevServer(
    options.serverAddress !== undefined
      ? { reuseAddress: options.serverAddress }
      : { dbFilename: join(directory, 'temporal.db'), extraArgs: benchSqlitePragmas, ...benchServerOptions() },
  );
  const nativeConnection = await NativeConnection.connect({ address: server.address });
  const connection = await Connection.connect({ address: server.address });
  const taskQueue = options.taskQueue ?? 'bench';
  const worker = await createWorker({
    tools: options.tools,
    models: options.models,
    taskQueue,
    connection: nativeConnection,
    workflowBundle: await bundleRelayWorkflows({ logger: new DefaultLogger('ERROR') }),
    ...(options.workerOptions ? { workerOptions: options.workerOptions } : {}),
    ...(options.keepModelCallsOnWorker !== undefined ? { keepModelCallsOnWorker: options.keepModelCallsOnWorker } : {}),
  });
  const running = worker.run();
  const client = await RelayClient.connect({ connection, taskQueue });
  return {
    client,
    connection,
    address: server.address,
    async stop() {
      worker.shutdown();
      await running;
      await connection.close();
      await nativeConnection.close();
      await server.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

/**
 * Installs the worker runtime of a benchmark process: errors only in the log and, given an address, the SDK's own
 * metrics (workflow task and activity latencies, in seconds) served for Prometheus there.
 */
export function installBenchRuntime(metricsAddress?: string): void {
  Runtime.install({
    logger: new DefaultLogger('ERROR'),
    ...(metricsAddress === undefined
      ? {}
      : {
          telemetryOptions: { metrics: { prometheus: { bindAddress: metricsAddress, useSecondsForDurations: true } } },
        }),
  });
}

/**
 * The SQLite pragmas every benchmark's dev server runs with. `temporal server start-dev --db-filename` opens the
 * file with `mode=rwc` and no pragma, so SQLite's own defaults apply: a rollback journal and synchronous=FULL,
 * an fsync per commit. WAL with synchronous=NORMAL is what a single-node SQLite deployment runs in practice and
 * survives a process crash (only a power loss can drop the last commits), so the figures measure orchestration
 * rather than the disk's fsync latency.
 */
export const benchSqlitePragmas: readonly string[] = [
  '--sqlite-pragma',
  'journal_mode=WAL',
  '--sqlite-pragma',
  'synchronous=NORMAL',
];

/**
 * Dynamic config of every benchmark server. `BENCH_EAGER_ACTIVITIES=1` turns on eager activity execution, off by
 * default in the dev server: a worker completing a workflow task gets the activity it scheduled in the answer
 * instead of through a poll, for every variant alike.
 */
export function benchServerOptions(): Pick<TemporalDevServerOptions, 'dynamicConfig' | 'liftDispatchCap'> {
  return {
    dynamicConfig: process.env['BENCH_EAGER_ACTIVITIES'] === '1' ? { 'system.enableActivityEagerExecution': true } : {},
    // BENCH_DISPATCH_CAP=default measures the dev server as it ships, for the before/after of lifting the cap.
    liftDispatchCap: process.env['BENCH_DISPATCH_CAP'] !== 'default',
  };
}

/** Starts the dev server every variant of one benchmark shares, on a SQLite file in a fresh folder. */
export async function startBenchServer(): Promise<{ address: string; pid: number; stop(): Promise<void> }> {
  const directory = mkdtempSync(join(tmpdir(), 'relay-bench-'));
  const server = await startTemporalDevServer({
    dbFilename: join(directory, 'temporal.db'),
    extraArgs: benchSqlitePragmas,
    ...benchServerOptions(),
  });
  if (server.pid === undefined) throw new Error('The benchmark server started without a process id');
  return {
    address: server.address,
    pid: server.pid,
    async stop() {
      await server.stop();
      rmSync(directory, { recursive: true, force: true });
    },
  };
}

type CreateWorkerOptionsPassthrough = Partial<Omit<WorkerOptions, 'taskQueue' | 'connection' | 'activities'>>;

/** The machine a figure was measured on, printed beside every result. */
export function describeMachine() {
  return {
    node: process.version,
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    freeMemoryGiB: Math.round(freemem() / 2 ** 30),
    platform: `${process.platform} ${process.arch}`,
  };
}

/** Runs `task` over `items` with at most `limit` in flight. */
export async function mapWithConcurrency<T, R>(
  items: readonly T[],
  limit: number,
  task: (item: T) => Promise<R>,
): Promise<R[]> {
  const results: R[] = new Array<R>(items.length);
  let next = 0;
  async function lane(): Promise<void> {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index] as T);
    }
  }
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, lane));
  return results;
}

/** Least-squares slope of y over x. */
export function slope(points: ReadonlyArray<{ x: number; y: number }>): number {
  const n = points.length;
  const meanX = points.reduce((sum, point) => sum + point.x, 0) / n;
  const meanY = points.reduce((sum, point) => sum + point.y, 0) / n;
  const covariance = points.reduce((sum, point) => sum + (point.x - meanX) * (point.y - meanY), 0);
  const variance = points.reduce((sum, point) => sum + (point.x - meanX) ** 2, 0);
  return covariance / variance;
}
