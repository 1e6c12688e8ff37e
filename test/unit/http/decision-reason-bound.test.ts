import { Connection } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayClient } from '../../../src/client/relay-client.js';

/** A client that never connects: a decision it refuses must be refused before anything is sent. */
let client: RelayClient;

beforeAll(async () => {
  client = await RelayClient.connect({ connection: Connection.lazy({ address: '127.0.0.1:1' }), taskQueue: 'none' });
});

afterAll(async () => {
  await client?.close();
});

describe('RelayClient decisions', () => {
  it('refuses a reason longer than the run keeps (1,000 characters) with invalid_input, sending nothing', async () => {
    const reason = 'x'.repeat(1_001);
    await expect(client.approve('run_x', 'call_1_0', { reason })).rejects.toMatchObject({
      name: 'RelayError',
      code: 'invalid_input',
    });
    await expect(client.reject('run_x', 'call_1_0', { reason })).rejects.toMatchObject({
      name: 'RelayError',
      code: 'invalid_input',
    });
  }, 5_000);
});
