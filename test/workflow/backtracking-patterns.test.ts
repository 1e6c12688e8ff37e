import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineJsonSchemaTool } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
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

describe('a JSON Schema tool whose pattern backtracks exponentially', () => {
  /** An ARN check as a public API's schema writes it: `([:/].+)*` backtracks exponentially on a string like this. */
  const arnPattern = '^arn:aws(-\\w+)*:[\\w\\d-]+:([\\w\\d-]*)?:[\\w\\d_-]*([:/].+)*$';
  /** Found by recheck: each `a:a:` more doubles the time (half a second at 13 here; this has 20). */
  const arnAttack = `arn:aws:-:::${'a:a:'.repeat(20)}\n`;

  function resourceTool(requiresApproval: boolean, ran: unknown[]) {
    return defineJsonSchemaTool({
      name: 'describe_resource',
      description: 'Describes a resource by its ARN.',
      inputSchema: { type: 'object', properties: { arn: { type: 'string', pattern: arnPattern } }, required: ['arn'] },
      requiresApproval,
      execute: (input) => {
        ran.push(input);
        return 'described';
      },
    });
  }

  /**
   * Before, a worker either tried such a pattern in the run, where a 50-character ARN outlasted the workflow task's
   * time limit on every attempt, or (refusing exponential patterns) left the tool out.
   */
  it.each([
    ['runs at once', false],
    ['needs approval', true],
  ])(
    'is offered, and a string its pattern cannot decide is refused by the worker, the run going on (%s)',
    async (_case, requiresApproval) => {
      const ran: unknown[] = [];
      const model = scriptedModel((call) => {
        if (call.step === 1) return { toolCalls: [{ name: 'describe_resource', input: { arn: arnAttack } }] };
        if (call.step === 2)
          return { toolCalls: [{ name: 'describe_resource', input: { arn: 'arn:aws:s3:::bucket' } }] };
        return { text: 'Described.' };
      });
      const running = await kit.startWorker({
        tools: [resourceTool(requiresApproval, ran)],
        models: { scripted: model },
      });
      try {
        const { client } = running;
        const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'describe it' });
        if (requiresApproval) {
          await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_2_0'));
          await client.approve(runId, 'call_2_0', { approver: 'alice' });
        }
        expect((await client.result(runId)).output).toBe('Described.');
        if (!requiresApproval) {
          const file = currentHistoryFile('pattern-tried-by-worker');
          await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), file);
        }
        const events = await client.events(runId);
        // Refused by the input check before a human is asked, or by the executor before the tool runs.
        const refused = events.find(
          (event) => 'toolCallId' in event && 'error' in event && event.toolCallId === 'call_1_0',
        );
        expect(refused).toMatchObject({
          type: requiresApproval ? 'tool_validation_failed' : 'tool_failed',
          error: expect.stringContaining('could not decide this string within 500 ms') as unknown,
        });
        // A human is never asked about a call the tool's own check refuses.
        expect(events.some((event) => event.type === 'tool_awaiting_approval' && event.toolCallId === 'call_1_0')).toBe(
          false,
        );
        expect(ran).toEqual([{ arn: 'arn:aws:s3:::bucket' }]);
      } finally {
        await running.stop();
      }
    },
  );
});
