import path from 'node:path';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunEvent } from '../../src/shared/run-types.js';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import type { RelayTestEnvironment } from '../../src/testing/create-test-environment.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { startApprovalReceiver } from '../helpers/approval-receiver.js';
import type { ApprovalReceiver } from '../helpers/approval-receiver.js';
import { approvalNoticeHistories, currentHistoryFile, isRecordingHistories } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { z } from 'zod';

// Time skipping: the reminder an hour before a 24-hour wait expires, and a run's 30-second grace for notices in
// flight, are reached by moving the test server's clock.
const secret = 'reminder-test-secret-0123';
const hour = 3_600_000;
const ledger = createLedger();
/** `transfer_funds` is reminded at the worker's lead time, `pay_quote` at its own (10 minutes). */
const quoteTool = defineTool({
  name: 'pay_quote',
  description: 'Pays a quote good for a limited time.',
  inputSchema: z.object({ amount: z.number() }),
  requiresApproval: true,
  remindApproversBeforeExpiryMs: 10 * 60_000,
  execute: () => 'paid',
});
const model = scriptedModel((request) => {
  if (request.step > 1) return { text: 'done' };
  const quoted = JSON.stringify(request.messages).includes('pay the quote');
  return quoted
    ? { toolCalls: [{ id: 'quote', name: 'pay_quote', input: { amount: 5 } }] }
    : { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }] };
});
let receiver: ApprovalReceiver;
let env: RelayTestEnvironment;

beforeAll(async () => {
  receiver = await startApprovalReceiver(secret);
  env = await createTestEnvironment({
    mode: 'time-skipping',
    tools: [...createTestTools(ledger), quoteTool],
    models: { scripted: model },
    // Tenant `early` has a webhook of its own that reminds two hours before; every other tenant the worker's hour.
    approvalWebhook: (tenantId) =>
      tenantId === 'early' ? { url: receiver.url, secret, remindBeforeExpiry: '2h' } : { url: receiver.url, secret },
    remindApproversBeforeExpiry: '1h',
  });
});

afterAll(async () => {
  await env?.teardown();
  await receiver?.close();
});

const types = (runId: string) => receiver.noticesOf(runId).map((notice) => notice.type);

/** What the run's history says of its approval waits: its notice activities and its timers, with event ids. */
interface WaitHistory {
  /** Each `notifyApprovers` scheduled, its notice type, and the workflow task that scheduled it. */
  notices: Array<{ type: string; eventId: number; task: string }>;
  /** Each timer started, its length, the workflow task that started it, and the event that fired it, if one did. */
  timers: Array<{ eventId: number; ms: number; task: string; firedEventId?: number }>;
}

async function waitHistory(runId: string): Promise<WaitHistory> {
  const converter = env.temporal.options.loadedDataConverter;
  const events = (await env.temporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
  const fired = new Map<string, number>();
  for (const event of events) {
    const timerFired = event.timerFiredEventAttributes;
    if (timerFired) fired.set(String(timerFired.startedEventId), Number(event.eventId));
  }
  const history: WaitHistory = { notices: [], timers: [] };
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled?.activityType?.name === 'notifyApprovers') {
      const notice = await decodeFromPayloadsAtIndex<{ type: string }>(converter, 0, scheduled.input?.payloads ?? []);
      const task = String(scheduled.workflowTaskCompletedEventId);
      history.notices.push({ type: notice.type, eventId: Number(event.eventId), task });
    }
    const timer = event.timerStartedEventAttributes;
    if (timer) {
      const firedEventId = fired.get(String(event.eventId));
      history.timers.push({
        eventId: Number(event.eventId),
        ms: tsToMs(timer.startToFireTimeout),
        task: String(timer.workflowTaskCompletedEventId),
        ...(firedEventId === undefined ? {} : { firedEventId }),
      });
    }
  }
  return history;
}

/**
 * With the clock a minute before the reminder is due (`leadMs` ahead of the 24-hour expiry): the run's history
 * shows one timer started with the request's notice, `24 h - leadMs` long and not fired, and no reminder scheduled.
 * The server writes a timer's firing as it moves its clock, so this holds whatever the worker is doing. Returns the
 * timer's event id.
 */
async function expectReminderTimerPending(runId: string, leadMs: number): Promise<number> {
  const { notices, timers } = await waitHistory(runId);
  expect(notices.map((notice) => notice.type)).toEqual(['approval.requested']);
  const startedWithRequest = timers.filter((timer) => timer.task === notices[0]?.task);
  expect(startedWithRequest.map((timer) => [timer.ms, timer.firedEventId])).toEqual([[24 * hour - leadMs, undefined]]);
  return startedWithRequest[0]?.eventId ?? 0;
}

/** The run's one reminder was scheduled only after the timer `timerEventId` fired. */
async function expectReminderAfter(runId: string, timerEventId: number): Promise<void> {
  const { notices, timers } = await waitHistory(runId);
  const reminders = notices.filter((notice) => notice.type === 'approval.expiring');
  expect(reminders).toHaveLength(1);
  const firedEventId = timers.find((timer) => timer.eventId === timerEventId)?.firedEventId ?? Infinity;
  expect(reminders[0]?.eventId).toBeGreaterThan(firedEventId);
}

/**
 * Moves the clock to a minute before `leadMs` ahead of the 24-hour expiry (the reminder's timer, from history, is
 * that long and has not fired), then two minutes on (the reminder), and approves the call.
 */
async function expectReminderOnlyAt(runId: string, leadMs: number, toolName: string): Promise<void> {
  const approval = await env.waitForApproval(runId);
  expect(approval.toolName).toBe(toolName);
  await receiver.waitForNotices(runId, 1);
  await env.advanceTime(24 * hour - leadMs - 60_000);
  const timer = await expectReminderTimerPending(runId, leadMs);
  await env.advanceTime(120_000);
  await receiver.waitForNotices(runId, 2);
  expect(types(runId)).toEqual(['approval.requested', 'approval.expiring']);
  await expectReminderAfter(runId, timer);
  await approval.approve({ approver: 'alice' });
  await env.result(runId);
}

describe('reminding approvers before a call expires', () => {
  it('sends one approval.expiring notice an hour before a 24-hour wait ends, between the request and the decision', async () => {
    const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    const approval = await env.waitForApproval(runId);
    await receiver.waitForNotices(runId, 1);
    await env.advanceTime(23 * hour - 60_000);
    // Activities run in wall time, so the history, not the receiver, says no reminder is due yet.
    const timer = await expectReminderTimerPending(runId, hour);

    await env.advanceTime(120_000);
    const [requested, expiring] = await receiver.waitForNotices(runId, 2);
    expect(expiring).toEqual({
      ...requested,
      type: 'approval.expiring',
      id: `${runId}/${approval.toolCallId}/expiring`,
    });
    await expectReminderAfter(runId, timer);
    expect((await env.client.getRun(runId)).status).toBe('awaiting_approval');

    await approval.approve({ approver: 'alice' });
    await env.result(runId);
    expect(types(runId)).toEqual(['approval.requested', 'approval.expiring', 'approval.decided']);
    const events = await env.client.events(runId);
    const notified = events.filter((event) => event.type === 'tool_approval_notified');
    expect(notified.map((event) => event.notice)).toEqual(types(runId));
    if (isRecordingHistories()) await env.recordHistory(runId, currentHistoryFile('approval-reminded'));
  });

  it("reminds at the tool's own lead time when it sets one, not the worker's", async () => {
    const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay the quote' });
    await expectReminderOnlyAt(runId, 10 * 60_000, 'pay_quote');
  });

  it("reminds at the lead time of the tenant's webhook when it sets one", async () => {
    const { runId } = await env.client.startRun({ tenantId: 'early', model: 'scripted:test', prompt: 'pay' });
    await expectReminderOnlyAt(runId, 2 * hour, 'transfer_funds');
  });

  it('sends no reminder for a call decided before it', async () => {
    const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    const approval = await env.waitForApproval(runId);
    await approval.reject({ reason: 'not today' });
    await env.result(runId);
    expect(types(runId)).toEqual(['approval.requested', 'approval.decided']);
  });

  it('sends no reminder when the whole wait is shorter than its lead time', async () => {
    const { runId } = await env.client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'pay',
      approvalTimeout: '30m',
    });
    await env.result(runId);
    expect(types(runId)).toEqual(['approval.requested', 'approval.decided']);
    expect(receiver.noticesOf(runId)[1]).toMatchObject({ outcome: 'expired' });
  });
});

describe('notices still in flight when a run ends', () => {
  it('hands them to a workflow of their own after 30 seconds, which delivers them once the run has closed', async () => {
    // Every attempt of the run's own delivery fails: its retries would outlast the run's 30-second grace.
    receiver.answers.set('call_1_0/approval.decided', [503, 503, 503, 503, 503]);
    const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    const approval = await env.waitForApproval(runId);
    await receiver.waitForNotices(runId, 1);
    await approval.approve();
    expect((await env.result(runId)).output).toBe('done');

    const events = await env.client.events(runId);
    const handedOff = events.filter(
      (event): event is Extract<RunEvent, { type: 'tool_approval_notice_handed_off' }> =>
        event.type === 'tool_approval_notice_handed_off',
    );
    expect(handedOff).toMatchObject([{ toolCallId: 'call_1_0', notice: 'approval.decided' }]);
    const deliveredBy = handedOff[0]?.deliveredBy ?? '';
    const { runId: executionId } = await env.temporal.workflow.getHandle(runId).describe();
    expect(deliveredBy).toBe(`approval-notices/${executionId}`);
    expect(events.at(-1)?.type).toBe('run_completed');

    // The run is closed; its notice is delivered by the workflow it handed it to.
    expect(await env.temporal.workflow.getHandle(deliveredBy).result()).toMatchObject([
      { id: `${runId}/call_1_0/decided`, outcome: 'delivered', status: 200 },
    ]);
    expect(types(runId)).toEqual(['approval.requested', 'approval.decided']);
    // The client reads that fate from the delivering workflow, for `relay-e inspect`.
    expect(await env.client.handedOffNotices(runId)).toMatchObject([
      {
        deliveredBy,
        notices: [`${runId}/call_1_0/decided`],
        status: 'COMPLETED',
        outcomes: [{ id: `${runId}/call_1_0/decided`, outcome: 'delivered', status: 200 }],
      },
    ]);
    if (isRecordingHistories()) {
      await env.recordHistory(runId, currentHistoryFile('approval-notice-handed-off'));
      await env.recordHistory(deliveredBy, path.join(approvalNoticeHistories, 'delivered-after-its-run.json'));
    }
  });
});
