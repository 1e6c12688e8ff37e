import { Connection } from '@temporalio/client';
import { afterAll, beforeAll } from 'vitest';
import { relayConnectionInterceptors } from '../../src/client/connection-interceptors.js';
import { RelayClient } from '../../src/client/relay-client.js';

/**
 * The test file's `RelayClient` whose connection never reaches a server, for what is built or refused before anything
 * is sent (the API's routes and documents, the client's own checks): made before the file's first test and closed
 * after its last. Returns its getter, for use inside tests and hooks.
 */
export function useUnconnectedClient(): () => RelayClient {
  let client: RelayClient | undefined;
  beforeAll(async () => {
    // With the interceptors RelayClient.connect opens a connection with: a call the test sends after all backs off,
    // and the close ends it rather than letting the SDK's retry timer throw out of the test process.
    const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: relayConnectionInterceptors() });
    client = await RelayClient.connect({ connection, taskQueue: 'none' });
  });
  afterAll(async () => {
    await client?.close();
  });
  return () => {
    if (!client) throw new Error('The unconnected client is made in beforeAll: use it inside tests and hooks');
    return client;
  };
}
