import type { NativeConnection } from '@temporalio/worker';

/**
 * The address each connection Relay-E opened for a worker reaches. A `NativeConnection` does not say where it
 * connected, and a message that tells the user to run a `temporal` command must name that server.
 */
const addresses = new WeakMap<NativeConnection, string>();

/** Records where a connection opened for a worker reaches; returns the connection. */
export function rememberConnectionAddress(connection: NativeConnection, address: string): NativeConnection {
  addresses.set(connection, address);
  return connection;
}

/** Where a connection reaches, when Relay-E opened it (or was told); undefined for one the caller opened itself. */
export function connectionAddressOf(connection: NativeConnection): string | undefined {
  return addresses.get(connection);
}
