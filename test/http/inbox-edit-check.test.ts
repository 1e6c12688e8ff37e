import { describe, expect, it } from 'vitest';
import { awaitingPayment, inboxSession, payCallId, useHttpTestApi } from './http-test-kit.js';

const { keys, api } = useHttpTestApi();

describe('the inbox’s check of an edited input, as the approver types', () => {
  it('names a field the tool does not name, as the run would refuse it, and passes the same edit without it', async () => {
    const runId = await awaitingPayment(api, keys.alice);
    const { cookie, csrf } = await inboxSession(api.url, keys.alice);
    const check = async (input: unknown) => {
      const answer = await fetch(`${api.url}/inbox/runs/${runId}/check`, {
        method: 'POST',
        headers: { cookie, 'content-type': 'application/json', 'x-relay-csrf': csrf },
        body: JSON.stringify({ toolCallId: payCallId, input }),
      });
      expect(answer.status).toBe(200);
      return answer.json();
    };

    expect(await check({ from: 'A', to: 'B', amount: 5, dry_run: true })).toEqual({
      valid: false,
      issues: [
        {
          path: 'dry_run',
          message: 'Not a field of the schema',
          code: 'unrecognized_keys',
        },
      ],
    });
    expect(await check({ from: 'A', to: 'B', amount: 5 })).toEqual({ valid: true, issues: [] });
  });
});
