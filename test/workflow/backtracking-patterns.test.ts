import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineJsonSchemaTool } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

/** A popular address check whose backtracking grows with the cube of a string like {@link addressAttack}'s. */
const addressPattern = '^\\S+@\\S+\\.\\S+$';

/** A string of about 16,000 characters this pattern takes minutes to refuse, found by recheck's analysis. */
const addressAttack = '@' + '@.'.repeat(4_000) + '..'.repeat(4_000) + '\t';

describe('a tool whose pattern backtracks polynomially', () => {
  /**
   * Before the worker set pattern length limits, trying the pattern on the first call's address outlasted the
   * workflow task's time limit ("Script execution timed out"): the task failed on every attempt and the run never
   * moved again.
   */
  it('refuses a string longer than its limit without trying it, and the run goes on with its next call', async () => {
    const sent: unknown[] = [];
    const notify = defineJsonSchemaTool({
      name: 'notify',
      description: 'Sends a note to an address.',
      inputSchema: {
        type: 'object',
        properties: { to: { type: 'string', pattern: addressPattern } },
        required: ['to'],
      },
      execute: (input) => {
        sent.push(input);
        return 'sent';
      },
    });
    const model = scriptedModel((call) => {
      if (call.step === 1) return { toolCalls: [{ name: 'notify', input: { to: addressAttack } }] };
      if (call.step === 2) return { toolCalls: [{ name: 'notify', input: { to: 'ada@example.com' } }] };
      return { text: 'Sent.' };
    });
    const running = await kit.startWorker({ tools: [notify], models: { scripted: model } });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'send it' });
      expect((await client.result(runId)).output).toBe('Sent.');
      await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile('pattern-too-long'));
      const events = await client.events(runId);
      expect(events.find((event) => event.type === 'tool_validation_failed')).toMatchObject({
        toolCallId: 'call_1_0',
        issues: [
          {
            path: 'to',
            code: 'too_big',
            message:
              'String is longer than 256 characters, the most a run tries the pattern /^\\S+@\\S+\\.\\S+$/ on ' +
              '(it backtracks on longer strings)',
          },
        ],
      });
      expect(eventTypes(events).filter((type) => type === 'tool_succeeded')).toHaveLength(1);
      expect(sent).toEqual([{ to: 'ada@example.com' }]);
    } finally {
      await running.stop();
    }
  });
});
