import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../../src/client/relay-client.js';
import { createApi } from '../../../src/http/create-api.js';
import { startApiServer } from '../../../src/http/start-api-server.js';

/** Building the API needs no Temporal: a client that never connects is enough. */
let client: RelayClient;

beforeAll(async () => {
  client = await RelayClient.connect({ connection: Connection.lazy({ address: '127.0.0.1:1' }), taskQueue: 'none' });
});

afterAll(async () => {
  await client?.close();
});

describe('createApi', () => {
  it('refuses an empty key map, which would leave an API that turns every caller away', () => {
    expect(() => createApi({ client, apiKeys: new Map() })).toThrow(/at least one API key/);
    expect(() => createApi({ client, apiKeys: new Map() })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });

  it('so startApiServer never listens without a key', async () => {
    await expect(startApiServer({ client, apiKeys: new Map() })).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
