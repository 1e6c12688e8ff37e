import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { readHistory } from '../../src/client/read-history.js';
import type { RelayClient, StartRunOptions } from '../../src/client/relay-client.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { latch } from '../helpers/latch.js';
import { countScheduledActivities, eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/** The call's log after its wait: approved, then cancelled as still awaiting approval; its tool never scheduled. */
async function expectApprovedThenCancelledWhileWaiting(
  client: RelayClient,
  runId: string,
  ledger: ReturnType<typeof createLedger>,
): Promise<void> {
  const events = await client.events(runId);
  const afterWait = events.slice(events.findIndex((event) => event.type === 'tool_awaiting_approval') + 1);
  expect(eventTypes(afterWait)).toEqual(['tool_approved', 'tool_cancelled', 'run_cancelled']);
  expect(afterWait[1]).toMatchObject({ toolCallId: 'call_1_0', stage: 'awaiting_approval' });
  expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(0);
  expect(ledger.transfers).toEqual([]);
}

describe('an approval delivered in the workflow task that cancels its run', () => {
  it('leaves the call cancelled while awaiting approval: it never reached its tool', async () => {
    const taskQueue = uniqueTaskQueue('approved-beside-cancel');
    const ledger = createLedger();
    const turns = [{ toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] }];
    const start = () =>
      kit.startWorker({ taskQueue, tools: createTestTools(ledger), models: { scripted: scriptedModel(turns) } });
    const first = await start();
    const { client } = first;
    const { runId } = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    // No worker polls while the cancellation and the decision arrive: the next workflow task delivers both.
    await first.stop();
    await client.cancel(runId);
    await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
    const second = await start();
    try {
      await expect(client.result(runId)).rejects.toThrow();
      const handle = kit.temporal.workflow.getHandle(runId);
      await recordHistoryIfRequested(handle, currentHistoryFile('approved-beside-cancel'));
      // The signal's handler took the decision before the run saw the cancellation: its event stays.
      await expectApprovedThenCancelledWhileWaiting(client, runId, ledger);
    } finally {
      await second.stop();
    }
  });
});

/** Whether a workflow task completed after the run's cancellation request, read from its real history. */
async function cancellationTaken(runId: string): Promise<boolean> {
  const events = (await readHistory(kit.temporal, runId)).events ?? [];
  const requested = events.findIndex((event) => event.workflowExecutionCancelRequestedEventAttributes);
  return requested >= 0 && events.slice(requested).some((event) => event.workflowTaskCompletedEventAttributes);
}

/** Holds the next clock read once `armed` says so, until the test releases it: the read a decision's time waits for. */
function clockReadHeld(armed: () => boolean, held: ReturnType<typeof latch>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.activityType !== 'readClock' || !armed()) return next(input);
        held.reached();
        await held.released;
        return next(input);
      },
    },
  });
}

/**
 * Starts a run whose transfer waits for a human, then approves it by a signal without its time, as the Temporal UI
 * sends it: the run takes it once a worker's clock has dated it, and that clock read is held until `held.release()`.
 */
async function undatedApprovalHeld(label: string, run: Partial<StartRunOptions>) {
  const ledger = createLedger();
  const held = latch();
  let armed = false;
  const turns = [{ toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] }];
  const running = await kit.startWorker({
    taskQueue: uniqueTaskQueue(label),
    tools: createTestTools(ledger),
    models: { scripted: scriptedModel(turns) },
    workerOptions: { interceptors: { activity: [clockReadHeld(() => armed, held)] } },
  });
  const { client } = running;
  const { runId } = await client.startRun({ ...base, prompt: 'pay', ...run });
  await waitForRun(client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
  armed = true;
  const handle = kit.temporal.workflow.getHandle(runId);
  await handle.signal('decide', { toolCallId: 'call_1_0', decision: 'approve', approver: 'ui' });
  await held.started;
  armed = false;
  return { running, client, runId, handle, held, ledger };
}

describe('an approval without its time, whose run is cancelled while a worker reads the time', () => {
  it('is not taken: the closing run records it as ignored, then the call cancelled while awaiting approval', async () => {
    const { running, client, runId, handle, held, ledger } = await undatedApprovalHeld('approved-as-cancelled', {
      approvalTimeout: '1h',
    });
    try {
      await client.cancel(runId);
      // The run takes its cancellation in a workflow task of its own before the clock answers, and waits for it.
      await expect.poll(() => cancellationTaken(runId)).toBe(true);
      await sleep(500);
      expect((await client.getRun(runId)).status).toBe('awaiting_approval');
      held.release();
      await expect(client.result(runId)).rejects.toThrow();
      await recordHistoryIfRequested(handle, currentHistoryFile('undated-approval-as-cancelled'));
      const events = await client.events(runId);
      const afterWait = events.slice(events.findIndex((event) => event.type === 'tool_awaiting_approval') + 1);
      expect(eventTypes(afterWait)).toEqual(['decision_ignored', 'tool_cancelled', 'run_cancelled']);
      expect(afterWait[0]).toMatchObject({ toolCallId: 'call_1_0', approver: 'ui', code: 'approval_not_pending' });
      // The run withdrew the call: the event says so, not that it was decided or expired.
      expect((afterWait[0] as { error?: string }).error).toContain('the run ended its wait as it closed');
      expect(afterWait[1]).toMatchObject({ toolCallId: 'call_1_0', stage: 'awaiting_approval' });
      expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(0);
      expect(ledger.transfers).toEqual([]);
    } finally {
      held.release();
      await running.stop();
    }
  });
});

describe('an approval without its time, whose call times out while a worker reads the time', () => {
  it('is recorded as ignored before the run ends, though its run has no step left to wait in', async () => {
    // One step: once the call times out, the run ends at once (max_steps) unless it waits for the reading.
    const { running, client, runId, held, ledger } = await undatedApprovalHeld('undated-as-timed-out', {
      approvalTimeout: '3s',
      maxSteps: 1,
    });
    try {
      await expect
        .poll(async () => eventTypes(await client.events(runId)), { timeout: 15_000 })
        .toContain('tool_approval_timed_out');
      expect((await client.getRun(runId)).status).not.toBe('completed');
      held.release();
      await client.result(runId);
      const events = await client.events(runId);
      const afterWait = events.slice(events.findIndex((event) => event.type === 'tool_awaiting_approval') + 1);
      expect(eventTypes(afterWait)).toEqual(['tool_approval_timed_out', 'decision_ignored', 'run_completed']);
      expect(afterWait[1]).toMatchObject({ toolCallId: 'call_1_0', approver: 'ui', code: 'approval_not_pending' });
      expect((afterWait[1] as { error?: string }).error).toContain('was already decided or has expired');
      expect(afterWait[2]).toMatchObject({ stopReason: 'max_steps' });
      expect(ledger.transfers).toEqual([]);
    } finally {
      held.release();
      await running.stop();
    }
  });
});
