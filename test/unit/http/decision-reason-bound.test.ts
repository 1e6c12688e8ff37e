import { describe, expect, it } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';

/** A client that never connects: a decision it refuses must be refused before anything is sent. */
const client = useUnconnectedClient();

describe('RelayClient decisions', () => {
  it('refuses a reason longer than the run keeps (1,000 characters) with invalid_input, sending nothing', async () => {
    const reason = 'x'.repeat(1_001);
    await expect(client().approve('run_x', 'call_1_0', { reason })).rejects.toMatchObject({
      name: 'RelayError',
      code: 'invalid_input',
    });
    await expect(client().reject('run_x', 'call_1_0', { reason })).rejects.toMatchObject({
      name: 'RelayError',
      code: 'invalid_input',
    });
    // A signal cannot be refused by the run, which would cut the reason short: the client refuses it instead.
    await expect(
      client().signalDecision('run_x', { toolCallId: 'call_1_0', decision: 'reject', reason }),
    ).rejects.toMatchObject({ name: 'RelayError', code: 'invalid_input' });
  }, 5_000);
});
