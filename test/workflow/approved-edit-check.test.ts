import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RelayError } from '../../src/shared/errors.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

const sameAccount = 'From and to must be different accounts';

/** A transfer whose schema refuses moving money to the account it comes from: a refinement JSON Schema cannot say. */
function transferTool(moved: Array<{ from: string; to: string; amount: number }>) {
  return defineTool({
    name: 'transfer',
    description: 'Move money between two accounts.',
    inputSchema: z
      .object({ from: z.string(), to: z.string(), amount: z.number().positive() })
      .refine((transfer) => transfer.from !== transfer.to, { message: sameAccount, path: ['to'] }),
    requiresApproval: true,
    execute: (transfer) => {
      moved.push(transfer);
      return { status: 'done' };
    },
  });
}

/** A run waiting for a decision on a transfer from a to b (`call_1_0`). */
async function runWaitingForTransfer() {
  const moved: Array<{ from: string; to: string; amount: number }> = [];
  const running = await kit.startWorker({
    tools: [transferTool(moved)],
    models: {
      scripted: scriptedModel([
        { toolCalls: [{ name: 'transfer', input: { from: 'a', to: 'b', amount: 5 } }] },
        { text: 'done' },
      ]),
    },
  });
  const { runId } = await running.client.startRun({ ...base, prompt: 'move 5' });
  await waitForRun(running.client, runId, (run) => run.pendingApprovals.length === 1);
  return { ...running, moved, runId };
}

const refusedEdit = { from: 'a', to: 'a', amount: 5 };
const goodEdit = { from: 'a', to: 'c', amount: 5 };

describe("an approver's edit that the tool's own schema refuses", () => {
  it('is refused by update with the refinement’s issue, and the call waits for another decision', async () => {
    const { client, runId, moved, stop } = await runWaitingForTransfer();
    try {
      const refused = await client
        .approve(runId, 'call_1_0', { approver: 'alice', input: refusedEdit })
        .catch((error: unknown) => error);
      // Before, the JSON Schema let it through: approved, then the tool refused it as `validation` when it ran.
      expect(RelayError.isInstance(refused) && refused.code).toBe('approval_input_invalid');
      expect((refused as RelayError).details).toMatchObject({ issues: [{ path: 'to', message: sameAccount }] });
      expect((await client.getRun(runId)).pendingApprovals).toMatchObject([{ toolCallId: 'call_1_0' }]);

      expect(await client.approve(runId, 'call_1_0', { approver: 'alice', input: goodEdit })).toMatchObject({
        decision: 'approve',
        input: goodEdit,
      });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      expect(moved).toEqual([goodEdit]);
      const approved = (await client.events(runId)).filter((event) => event.type === 'tool_approved');
      expect(approved).toEqual([expect.objectContaining({ input: goodEdit, edited: true })]);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('edit-refused-by-tool'),
      );
    } finally {
      await stop();
    }
  });

  it('is ignored when signalled, recorded as decision_ignored, and the call waits for another decision', async () => {
    const { client, runId, moved, stop } = await runWaitingForTransfer();
    try {
      const decide = (input: unknown) =>
        client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice', input });
      await decide(refusedEdit);
      await expect
        .poll(async () => (await client.events(runId)).filter((event) => event.type === 'decision_ignored'))
        .toEqual([
          expect.objectContaining({ toolCallId: 'call_1_0', code: 'approval_input_invalid', approver: 'alice' }),
        ]);
      expect((await client.getRun(runId)).pendingApprovals).toMatchObject([{ toolCallId: 'call_1_0' }]);
      await decide(goodEdit);
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      expect(moved).toEqual([goodEdit]);
    } finally {
      await stop();
    }
  });
});
