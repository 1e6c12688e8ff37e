import { NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { WorkerOptions } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import type { RelayPluginOptions } from './relay-plugin.js';
import { errorMessage } from '../shared/error-message.js';
import { RelayPlugin, checkSearchAttributes } from './relay-plugin.js';
import { rememberConnectionAddress } from './connection-address.js';
import { bundlesNoFailureConverter } from './relay-workflows.js';

export interface CreateWorkerOptions extends Omit<RelayPluginOptions, 'workflowBundle'> {
  taskQueue: string;
  /** A connection to reuse; otherwise one is opened to `address`, and closed again if the worker cannot be created. */
  connection?: NativeConnection;
  /** @default 'localhost:7233' */
  address?: string;
  /** @default 'default' */
  namespace?: string;
  /**
   * A pre-built workflow bundle (`bundleRelayWorkflows()`); bundling on start takes a few seconds otherwise. With
   * `encryption`, make it with `bundleRelayWorkflows({ encryption: true })`: a bundle without encryption's failure
   * converter still runs, but its workflows store their failures (a failed run's error) in the clear, and the worker
   * warns when it can tell.
   */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * A Temporal data converter (payload converter, codecs); `encryption` adds its codec after these codecs.
   * @default `workerOptions.dataConverter`, else Temporal's default
   */
  dataConverter?: DataConverter;
  /** Any other Temporal worker option (cache size, concurrency, plugins, …). */
  workerOptions?: Partial<
    Omit<WorkerOptions, 'taskQueue' | 'connection' | 'namespace' | 'activities' | 'workflowBundle' | 'workflowsPath'>
  >;
}

/**
 * Creates a Temporal worker that runs agent runs with the given tools and model providers; call `run()` on it.
 * A convenience over {@link RelayPlugin}: the same as `Worker.create({ connection, taskQueue, plugins: [plugin] })`.
 */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const { connection: given, address, namespace = 'default', taskQueue, workerOptions, ...pluginOptions } = options;
  const target = address ?? 'localhost:7233';
  const connection = given ?? rememberConnectionAddress(await NativeConnection.connect({ address: target }), target);
  try {
    // Checked here rather than by the plugin in `Worker.create`, so a misconfigured namespace is refused before the
    // plugin opens any tool source (an MCP server's process).
    if (options.checkSearchAttributes ?? true) await checkSearchAttributes(connection, namespace);
    const plugin = await RelayPlugin.create({ ...pluginOptions, checkSearchAttributes: false });
    warnOfCleartextWorkflowFailures(options);
    const dataConverter = options.dataConverter ?? workerOptions?.dataConverter;
    const created = Worker.create({
      ...workerOptions,
      ...(dataConverter ? { dataConverter } : {}),
      plugins: [...(workerOptions?.plugins ?? []), plugin],
      connection,
      namespace,
      taskQueue,
    });
    // A worker never created never runs to close the plugin's tool sources (an MCP server's process would stay).
    return await created.catch(async (error: unknown) => {
      await plugin.close();
      throw error;
    });
  } catch (error) {
    // A connection opened here has no other owner: left open, each failed attempt would keep one to the server.
    if (!given) await closeAfterFailure(connection);
    throw error;
  }
}

/** Warns of a pre-built bundle whose workflows would store their failures in the clear on an encrypting worker. */
function warnOfCleartextWorkflowFailures({ encryption, workflowBundle }: CreateWorkerOptions): void {
  if (encryption === undefined || workflowBundle === undefined || !bundlesNoFailureConverter(workflowBundle)) return;
  Runtime.instance().logger.warn(
    'createWorker: the workflowBundle has no failure converter, so with encryption on its workflows store their ' +
      "failures (a failed run's error) in the clear; make it with bundleRelayWorkflows({ encryption: true })",
  );
}

/** Closes a connection on the way out of a failure, whose error is the one to throw: a failed close is logged. */
async function closeAfterFailure(connection: NativeConnection): Promise<void> {
  try {
    await connection.close();
  } catch (error) {
    Runtime.instance().logger.warn(`createWorker could not close the connection it opened: ${errorMessage(error)}`);
  }
}
