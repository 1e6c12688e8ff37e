import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApprovalRuleContext } from '../../src/tool/define-tool.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

/** A payment tool that needs a human above 100, and records who its rule was asked for and what it paid. */
function paymentTool() {
  const asked: ApprovalRuleContext[] = [];
  const paid: number[] = [];
  const pay = defineTool({
    name: 'pay',
    description: 'Pay an amount.',
    inputSchema: z.object({ amount: z.number().positive() }),
    requiresApproval: ({ amount }, who) => {
      asked.push(who);
      if (amount === 13) throw new Error('unlucky amounts cannot be judged');
      return amount > 100;
    },
    execute: ({ amount }) => {
      paid.push(amount);
      return { paid: amount };
    },
  });
  return { pay, asked, paid };
}

async function startWorker(amounts: readonly number[]) {
  const { pay, asked, paid } = paymentTool();
  const running = await kit.startWorker({
    tools: [pay],
    models: {
      scripted: scriptedModel((call) =>
        call.step === 1
          ? { toolCalls: amounts.map((amount, index) => ({ id: `p${index}`, name: 'pay', input: { amount } })) }
          : { text: 'done' },
      ),
    },
  });
  return { ...running, asked, paid };
}

describe('a tool whose approval is a rule', () => {
  it('runs the calls its rule lets through and waits for a human on the others', async () => {
    const { client, stop, asked, paid } = await startWorker([50, 500]);
    try {
      const { runId } = await client.startRun({
        tenantId: 'acme',
        userId: 'u1',
        model: 'scripted:test',
        prompt: 'pay',
      });
      const waiting = await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1 && paid.length === 1);
      expect(paid).toEqual([50]);
      expect(waiting.pendingApprovals[0]).toMatchObject({ toolCallId: 'call_1_1', input: { amount: 500 } });
      expect(asked.map((who) => who.toolCallId).sort()).toEqual(['call_1_0', 'call_1_1']);
      expect(asked[0]).toMatchObject({ tenantId: 'acme', userId: 'u1', runId });

      await client.approve(runId, 'call_1_1');
      await client.result(runId);
      expect(paid.sort((a, b) => a - b)).toEqual([50, 500]);
      const events = await client.events(runId);
      const ofCall = (id: string) =>
        eventTypes(events.filter((event) => 'toolCallId' in event && event.toolCallId === id));
      expect(ofCall('call_1_0')).toEqual(['tool_call_validated', 'tool_approval_not_required', 'tool_succeeded']);
      const validated = events.filter((event) => event.type === 'tool_call_validated');
      expect(validated.map(({ requiresApproval, approvalByRule }) => ({ requiresApproval, approvalByRule }))).toEqual([
        { requiresApproval: true, approvalByRule: true },
        { requiresApproval: true, approvalByRule: true },
      ]);
      expect(ofCall('call_1_1')).toEqual([
        'tool_call_validated',
        'tool_awaiting_approval',
        'tool_approved',
        'tool_succeeded',
      ]);
      await recordHistoryIfRequested(client.temporal.workflow.getHandle(runId), currentHistoryFile('approval-by-rule'));
    } finally {
      await stop();
    }
  });

  it('asks a human when the rule throws', async () => {
    const { client, stop, paid } = await startWorker([13]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
      const waiting = await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);
      expect(waiting.pendingApprovals[0]?.input).toEqual({ amount: 13 });
      expect(paid).toEqual([]);
      await client.reject(runId, 'call_1_0');
      await client.result(runId);
      expect(paid).toEqual([]);
    } finally {
      await stop();
    }
  });
});
