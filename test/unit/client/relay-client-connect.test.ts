import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../../src/client/relay-client.js';

describe('RelayClient.connect', () => {
  it('refuses bad encryption keys before it opens a connection, so none is left open', async () => {
    // Nothing listens on port 1: a client that connected first would fail with a connection error instead.
    const connecting = RelayClient.connect({
      address: '127.0.0.1:1',
      taskQueue: 'relay-e',
      encryption: { keys: { k1: 'too-short' } },
    });

    await expect(connecting).rejects.toMatchObject({ code: 'invalid_input' });
  });
});
