import { createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { RelayClient } from '../../src/client/relay-client.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import type { StoredToolOutput } from '../../src/shared/stored-output.js';
import { createMemoryPayloadStore } from '../../src/store/memory-payload-store.js';
import type { PayloadStore } from '../../src/store/payload-store.js';
import { createPostgresPayloadStore } from '../../src/store/postgres-payload-store.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { freePort } from '../helpers/free-port.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { createTestTenants } from './http-test-kit.js';

// A tool output kept out of history, read back through the API from the store the worker kept it in: a real worker
// on the dev server, an API over it sharing the worker's (memory) store.

const { tenantA, keys, apiKeys } = createTestTenants();
const store = createMemoryPayloadStore();
const kit = useRelayTestKit();
let withStore: ApiServer;
let withoutStore: ApiServer;
let client: RelayClient;

beforeAll(async () => {
  const worker = await kit.startWorker({
    tools: createTestTools(createLedger()),
    models: {
      scripted: scriptedModel((call) =>
        call.step === 1
          ? { toolCalls: [{ name: 'repeat_text', input: { text: 'y', times: 6_000 } }] }
          : { text: 'read' },
      ),
    },
    payloadStore: store,
  });
  client = worker.client;
  withStore = await startApiServer({ client, apiKeys, payloadStore: store });
  withoutStore = await startApiServer({ client, apiKeys });
});

afterAll(async () => {
  await Promise.all([withStore?.close(), withoutStore?.close()]);
  await store.close();
});

/** Runs the model above for tenant A and returns the run and the ref its `tool_succeeded` event shows. */
async function runWithStoredOutput(): Promise<{ runId: string; ref: string }> {
  const { runId } = await client.startRun({ tenantId: tenantA, model: 'scripted:test', prompt: 'read' });
  await client.result(runId);
  const succeeded = (await client.events(runId)).find((event) => event.type === 'tool_succeeded');
  const output = (succeeded as { output?: StoredToolOutput } | undefined)?.output;
  if (!output?.storedOutput) throw new Error(`The output was not stored: ${JSON.stringify(succeeded)}`);
  return { runId, ref: output.storedOutput };
}

function read(server: ApiServer, path: string, key: string): Promise<Response> {
  return fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${key}` } });
}

describe('GET /v1/runs/{id}/stored/{ref}', () => {
  it("answers the stored output's JSON to its tenant's key", async () => {
    const { runId, ref } = await runWithStoredOutput();
    const response = await read(withStore, `/v1/runs/${runId}/stored/${ref}`, keys.alice);

    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^text\/plain/);
    expect(JSON.parse(await response.text())).toEqual({ text: 'y'.repeat(6_000) });
  });

  it("answers another tenant's key 404 run_not_found, as for a run that is not there, and a ref not stored 404", async () => {
    const { runId, ref } = await runWithStoredOutput();
    const otherTenant = await read(withStore, `/v1/runs/${runId}/stored/${ref}`, keys.bob);
    const missingRun = await read(withStore, `/v1/runs/run_missing/stored/${ref}`, keys.alice);
    for (const response of [otherTenant, missingRun]) {
      expect(response.status).toBe(404);
      expect(await response.json()).toMatchObject({ code: 'run_not_found' });
    }

    const unknownRef = await read(withStore, `/v1/runs/${runId}/stored/sha256:${'0'.repeat(64)}`, keys.alice);
    expect(unknownRef.status).toBe(404);
    expect(await unknownRef.json()).toMatchObject({ code: 'payload_not_found' });
  });

  it('refuses a ref that is not one with 422, and answers 501 on an API given no store', async () => {
    const malformed = await read(withStore, '/v1/runs/run_1/stored/not-a-ref', keys.alice);
    expect(malformed.status).toBe(422);
    expect(await malformed.json()).toMatchObject({ code: 'invalid_input' });

    const noStore = await read(withoutStore, `/v1/runs/run_1/stored/sha256:${'0'.repeat(64)}`, keys.alice);
    expect(noStore.status).toBe(501);
    expect(await noStore.json()).toMatchObject({ code: 'payload_store_unavailable' });
  });

  it('needs an API key', async () => {
    const response = await fetch(`${withStore.url}/v1/runs/run_1/stored/sha256:${'0'.repeat(64)}`);
    expect(response.status).toBe(401);
  });
});

describe('GET /v1/runs/{id}/stored/{ref} when the payload store cannot be reached', () => {
  const unreachable = 'The payload store cannot be reached right now; try again shortly';

  /** A PostgreSQL store at `port` on this machine that gives up on a connection after a second. */
  function storeAt(port: number): PayloadStore {
    return createPostgresPayloadStore({
      connectionString: `postgres://relay:hunter2-secret@127.0.0.1:${port}/relay`,
      connectTimeoutMs: 1_000,
    });
  }

  /**
   * Reads a stored output of a run that exists through an API over `payloadStore` whose logger records what it logs,
   * and returns the answer, its body's text and the log.
   */
  async function readThrough(payloadStore: PayloadStore) {
    const logger = { error: vi.fn(), warn: vi.fn() };
    const server = await startApiServer({ client, apiKeys, payloadStore, logger });
    try {
      const { runId, ref } = await runWithStoredOutput();
      const path = `/v1/runs/${runId}/stored/${ref}`;
      const response = await read(server, path, keys.alice);
      return { path, response, body: await response.text(), logger };
    } finally {
      await Promise.all([server.close(), payloadStore.close()]);
    }
  }

  it('answers 503 payload_store_unreachable with Retry-After when nothing listens at its address, logged as one warning', async () => {
    const port = await freePort();

    const { path, response, body, logger } = await readThrough(storeAt(port));

    expect(response.status).toBe(503);
    expect(response.headers.get('retry-after')).toBe('5');
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(JSON.parse(body)).toMatchObject({
      code: 'payload_store_unreachable',
      title: 'Payload store unreachable',
      detail: unreachable,
    });
    for (const secret of ['127.0.0.1', String(port), 'relay:', 'hunter2']) expect(body).not.toContain(secret);
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn.mock.calls).toEqual([
      [
        `Relay-E: GET ${path} failed (503 payload_store_unreachable): ${unreachable}: ` +
          `connect ECONNREFUSED 127.0.0.1:${port}`,
      ],
    ]);
  });

  it('answers the same 503 after its connectTimeoutMs when the database takes the connection and never answers', async () => {
    const sockets: Socket[] = [];
    const silent = createServer((socket) => sockets.push(socket)); // as a database behind a silent firewall looks
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    try {
      const { path, response, body, logger } = await readThrough(storeAt(port));

      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(JSON.parse(body)).toMatchObject({ code: 'payload_store_unreachable', detail: unreachable });
      expect(body).not.toContain('hunter2');
      expect(logger.error).not.toHaveBeenCalled();
      expect(logger.warn.mock.calls).toEqual([
        [
          `Relay-E: GET ${path} failed (503 payload_store_unreachable): ${unreachable}: PostgreSQL gave the payload ` +
            "store no connection within 1000 ms (the database did not answer, or every connection of the store's " +
            'pool stayed busy)',
        ],
      ]);
    } finally {
      for (const socket of sockets) socket.destroy();
      await new Promise((resolve) => silent.close(resolve));
    }
  });
});
