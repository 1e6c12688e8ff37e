import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it } from 'vitest';
import { RelayError } from '../../src/shared/errors.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { countScheduledActivities, useRelayTestKit } from '../helpers/relay-test-kit.js';
import { waitingRunWithoutWorker } from '../helpers/waiting-run.js';

// A call's wait expires while no worker runs the run's workflow tasks: the server records the timer as fired and
// schedules a task nobody takes. An approval sent after that reaches the run in the same task as the fired timer,
// where Temporal hands it to the run first; it must not win.

const kit = useRelayTestKit();

/** A run whose call waits, its worker stopped and its wait expired well before now; `start` brings a worker again. */
async function expiredWhileNoWorkerRan() {
  const waiting = await waitingRunWithoutWorker(kit, { approvalTimeout: '2s', finalText: 'done' });
  const { expiresAt } = waiting.pending;
  await sleep(Math.max(0, Date.parse(expiresAt) - Date.now()) + 2_000);
  return { ...waiting, expiresAt };
}

describe('a decision sent after its call expired, taken in the task of the fired timer', () => {
  it('is ignored when signalled: the call times out and its tool never runs', async () => {
    const { client, runId, ledger, expiresAt, start } = await expiredWhileNoWorkerRan();
    await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
    const second = await start();
    try {
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      const events = await client.events(runId);
      expect(events.filter((event) => 'toolCallId' in event).map((event) => event.type)).toEqual([
        'tool_call_validated',
        'tool_awaiting_approval',
        'decision_ignored',
        'tool_approval_timed_out',
      ]);
      expect(events.find((event) => event.type === 'decision_ignored')).toMatchObject({
        toolCallId: 'call_1_0',
        approver: 'alice',
        code: 'approval_not_pending',
        error: `Tool call 'call_1_0' expired at ${expiresAt}: a decision sent after it is not taken`,
        decidedAt: expect.stringMatching(/^\d{4}-/) as unknown,
      });
      expect(events.find((event) => event.type === 'tool_approval_timed_out')?.at).toBe(expiresAt);
      expect(ledger.transfers).toEqual([]);
      expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(0);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('decision-signalled-after-expiry'),
      );
    } finally {
      await second.stop();
    }
  }, 60_000);

  it('is refused when sent by update (approval_not_pending, naming the expiry), and the tool never runs', async () => {
    const { client, runId, ledger, expiresAt, start } = await expiredWhileNoWorkerRan();
    const deciding = client.approve(runId, 'call_1_0', { approver: 'alice' }).catch((error: unknown) => error);
    // The update waits on the server until a worker takes the run.
    await sleep(500);
    const second = await start();
    try {
      const refusal = await deciding;
      expect(RelayError.isInstance(refusal) && refusal.code).toBe('approval_not_pending');
      expect(String(refusal)).toContain(`expired at ${expiresAt}`);
      expect(await client.result(runId)).toMatchObject({ status: 'completed' });
      expect((await client.events(runId)).map((event) => event.type)).not.toContain('tool_approved');
      expect(ledger.transfers).toEqual([]);
    } finally {
      await second.stop();
    }
  }, 60_000);
});
