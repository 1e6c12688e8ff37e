import { NativeConnection, Runtime } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { errorMessage } from '../shared/error-message.js';
import { rememberConnectionAddress } from './connection-address.js';

/** Where a worker given no connection connects: the SDK's default. */
export const sdkDefaultAddress = 'localhost:7233';

/**
 * The connection for what runs beside the worker (its model-call worker, its catalog publisher). A worker given none
 * gets one from the SDK, which closes it as the worker's run() ends: the model-call worker would still hold it (the
 * close then throws) and the catalog withdrawal would go out on a closed connection. So such a worker's helpers get a
 * connection of their own at the same address, which the caller closes with {@link closePluginConnection} last (`opened`).
 */
export async function helperConnectionOf(worker: Worker): Promise<HelperConnection> {
  if (worker.options.connection !== undefined) return { connection: worker.connection, opened: false };
  const connection = await NativeConnection.connect({ address: sdkDefaultAddress });
  return { connection: rememberConnectionAddress(connection, sdkDefaultAddress), opened: true };
}

/** The helpers' connection, and whether the plugin opened it (and so closes it). */
export interface HelperConnection {
  connection: NativeConnection | undefined;
  opened: boolean;
}

/** Closes a connection the plugin opened. The worker has stopped by then, so a failure is a warning, not its error. */
export async function closePluginConnection(connection: NativeConnection): Promise<void> {
  try {
    await connection.close();
  } catch (error) {
    Runtime.instance().logger.warn(
      `Could not close the connection Relay-E opened for the worker: ${errorMessage(error)}`,
    );
  }
}
