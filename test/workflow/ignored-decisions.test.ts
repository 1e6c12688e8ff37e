import { describe, expect, it } from 'vitest';
import { maxIgnoredDecisionsRecorded } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

const oneTransfer = [
  { toolCalls: [{ name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } }] },
  { text: 'done' },
];

/** A run waiting for a decision on its transfer (`call_1_0`), and a way to signal it as the Temporal UI does. */
async function runWaitingForTransfer() {
  const ledger = createLedger();
  const running = await kit.startWorker({
    tools: createTestTools(ledger),
    models: { scripted: scriptedModel(oneTransfer) },
  });
  const { client } = running;
  const { runId } = await client.startRun({ ...base, prompt: 'move 5' });
  await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);
  const handle = kit.temporal.workflow.getHandle(runId);
  // A raw signal, as the Temporal UI's "Send Signal" sends it: no client checks anything first.
  const signal = (payload: unknown) => handle.signal('decide', payload);
  return { ...running, ledger, runId, handle, signal };
}

describe('a decision signalled to a run that does not take it', () => {
  it('is recorded as decision_ignored with why, and the run still takes a good decision after it', async () => {
    const { client, runId, handle, signal, ledger, stop } = await runWaitingForTransfer();
    try {
      await signal({ toolCallId: 'call_9_9', decision: 'approve', approver: 'alice' });
      // Before, a signal that is not an object failed every workflow task that took it: the run never moved again.
      await signal(null);
      await signal({ toolCallId: 'call_1_0', decision: 'maybe', approver: 'alice' });
      // The update refuses the same payload with the same words: it has an answer to carry them.
      await expect(handle.executeUpdate('decide', { args: [null] })).rejects.toMatchObject({
        cause: {
          type: 'invalid_input',
          message: 'A decision is an object: { toolCallId, decision, approver?, reason?, input? }',
        },
      });
      await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      await recordHistoryIfRequested(handle, currentHistoryFile('decisions-ignored'));

      const events = await client.events(runId);
      const ignored = events.filter((event) => event.type === 'decision_ignored');
      expect(ignored).toEqual([
        expect.objectContaining({
          toolCallId: 'call_9_9',
          decision: 'approve',
          approver: 'alice',
          code: 'approval_not_pending',
          error: "Tool call 'call_9_9' is not awaiting approval",
        }),
        expect.objectContaining({
          code: 'invalid_input',
          error: 'A decision is an object: { toolCallId, decision, approver?, reason?, input? }',
        }),
        expect.objectContaining({
          toolCallId: 'call_1_0',
          toolName: 'transfer_funds',
          approver: 'alice',
          code: 'invalid_input',
          error: "decision must be 'approve' or 'reject'",
        }),
      ]);
      expect(ignored[1]).not.toHaveProperty('toolCallId');
      // In the order the signals came, before the decision that was taken.
      expect(eventTypes(events).filter((type) => type === 'decision_ignored' || type === 'tool_approved')).toEqual([
        'decision_ignored',
        'decision_ignored',
        'decision_ignored',
        'tool_approved',
      ]);
      expect(ledger.transfers).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it(`records at most ${maxIgnoredDecisionsRecorded} of them an execution`, async () => {
    const { client, runId, signal, stop } = await runWaitingForTransfer();
    try {
      for (let index = 0; index < maxIgnoredDecisionsRecorded + 5; index += 1) {
        await signal({ toolCallId: `call_9_${index}`, decision: 'reject' });
      }
      // The last signal sent, told apart by its call id: once it has reached the run, every one has.
      await signal({ toolCallId: 'call_1_0', decision: 'reject', approver: 'alice' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed' });
      const ignored = (await client.events(runId)).filter((event) => event.type === 'decision_ignored');
      expect(ignored).toHaveLength(maxIgnoredDecisionsRecorded);
      expect(ignored.at(-1)).toMatchObject({ toolCallId: `call_9_${maxIgnoredDecisionsRecorded - 1}` });
    } finally {
      await stop();
    }
  });
});
