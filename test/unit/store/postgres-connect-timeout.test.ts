import { createServer } from 'node:net';
import type { Server, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresPayloadStore } from '../../../src/store/postgres-payload-store.js';

// A server that takes connections and never answers, as a database behind a dropped route or a silent firewall looks:
// without a bound, pg waits on it until the operating system gives up (minutes), holding every model call.
let silent: Server;
const sockets: Socket[] = [];
let port = 0;

beforeAll(async () => {
  silent = createServer((socket) => sockets.push(socket));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  port = (silent.address() as { port: number }).port;
});

afterAll(async () => {
  for (const socket of sockets) socket.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

const scope = { tenantId: 'acme', runId: 'run-1' };

describe("the PostgreSQL payload store's connect timeout", () => {
  it('fails a call whose database does not answer within connectTimeoutMs, saying so, with code ETIMEDOUT', async () => {
    const store = createPostgresPayloadStore({
      connectionString: `postgres://relay:secret@127.0.0.1:${port}/relay`,
      connectTimeoutMs: 300,
    });
    try {
      const asked = Date.now();
      const error: unknown = await store.put(scope, new Uint8Array([1])).catch((failure: unknown) => failure);

      expect(Date.now() - asked).toBeLessThan(5_000);
      expect(error).toMatchObject({
        name: 'PostgresConnectTimeoutError',
        code: 'ETIMEDOUT',
        message:
          'PostgreSQL gave the payload store no connection within 300 ms (the database did not answer, or every ' +
          "connection of the store's pool stayed busy)",
      });
      await expect(store.prepare?.()).rejects.toMatchObject({ code: 'ETIMEDOUT' });
    } finally {
      await store.close();
    }
  });

  it.each([0, -1, 1.5, Number.NaN])('refuses a connectTimeoutMs of %s before connecting', (connectTimeoutMs) => {
    expect(() =>
      createPostgresPayloadStore({ connectionString: `postgres://127.0.0.1:${port}/relay`, connectTimeoutMs }),
    ).toThrow(`connectTimeoutMs must be a positive whole number of ms, not ${connectTimeoutMs}`);
  });
});
