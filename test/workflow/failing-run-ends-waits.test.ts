import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure, CompleteAsyncError } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { readHistory } from '../../src/client/read-history.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { latch } from '../helpers/latch.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/**
 * The input check of the transfer of 7 holds until the test releases it, then fails for good: it stands for a
 * check that breaks while the other call of its step waits for a human.
 */
function checkOfSevenBreaks(held: ReturnType<typeof latch>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.activityType !== 'checkToolCallInput' || !isCheckOfSeven(input.args[0])) return next(input);
        held.reached();
        await held.released;
        throw ApplicationFailure.nonRetryable('The input check broke', 'check_broke');
      },
    },
  });
}

/**
 * The input check of the transfer of 5 holds until `held` is released (the test's end), as a slow approval rule would:
 * it is still going when the check of 7 fails the run.
 */
function checkOfFiveHolds(held: Promise<void>): ActivityInterceptorsFactory {
  return () => ({
    inbound: {
      async execute(input, next) {
        const asked = input.args[0] as { input?: { amount?: number } } | undefined;
        if (asked?.input?.amount === 5) await held;
        return next(input);
      },
    },
  });
}

/**
 * The input check of the transfer of 7 is left to the test to end (async completion), so it can fail while no
 * worker polls: `tokens` gets its task token.
 */
function checkOfSevenLeftToTest(tokens: Uint8Array[]): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        if (ctx.info.activityType !== 'checkToolCallInput' || !isCheckOfSeven(input.args[0])) return next(input);
        tokens.push(ctx.info.taskToken);
        throw new CompleteAsyncError();
      },
    },
  });
}

function isCheckOfSeven(asked: unknown): boolean {
  return (asked as { input?: { amount?: number } } | undefined)?.input?.amount === 7;
}

/**
 * The types of the history events between the last workflow task completed before the decision's signal and the
 * next task started: what that one task delivered to the run.
 */
async function eventTypesOfTaskWithSignal(runId: string): Promise<string[]> {
  const events = (await kit.temporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
  const signaled = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
  const completed = events.slice(0, signaled).findLastIndex((event) => event.workflowTaskCompletedEventAttributes);
  const types: string[] = [];
  for (const event of events.slice(completed + 1)) {
    if (event.workflowTaskStartedEventAttributes) return types;
    if (event.workflowExecutionSignaledEventAttributes) types.push('WorkflowExecutionSignaled');
    if (event.activityTaskFailedEventAttributes) types.push('ActivityTaskFailed');
  }
  return types;
}

/**
 * A webhook receiver that answers every notice at once but the first `approval.decided`, which it holds until the test
 * releases it: the failing run waits for that notice (its grace period) while the test watches the run.
 */
async function receiverHoldingFirstDecision() {
  const held = latch();
  const received: Array<{ type: string; toolCallId: string; outcome?: string }> = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const notice = JSON.parse(Buffer.concat(chunks).toString('utf8')) as {
        type: string;
        toolCallId: string;
        outcome?: string;
      };
      received.push(notice);
      const first = notice.type === 'approval.decided' && received.filter((n) => n.type === notice.type).length === 1;
      void (first ? held.released : Promise.resolve()).then(() => response.writeHead(200).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/approvals`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url, received, release: held.release, close };
}

/** Polls the run's history until its first timer has fired, 30 s at most; returns the history's event kinds. */
async function historyOnceTimerFired(runId: string): Promise<string[]> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const events = (await kit.temporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
    const kinds = events.map((event) => Object.keys(event).find((key) => key.endsWith('EventAttributes')) ?? '');
    if (kinds.includes('timerFiredEventAttributes')) return kinds;
    if (Date.now() > deadline) throw new Error('The approval timer did not fire within 30 s');
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** One step proposing two transfers that need approval: of 5 (`call_1_0`, which waits) and of 7 (`call_1_1`). */
const twoTransfers = [
  {
    toolCalls: [
      { name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } },
      { name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 7 } },
    ],
  },
];

/** A worker that tells the webhook at `url`, and whose input check of the transfer of 7 breaks once `held` lets it. */
function workerWithBreakingCheck(
  url: string,
  ledger: ReturnType<typeof createLedger>,
  held: ReturnType<typeof latch>,
  options: { remindApproversBeforeExpiry?: string } = {},
) {
  return kit.startWorker({
    tools: createTestTools(ledger),
    models: { scripted: scriptedModel(twoTransfers) },
    approvalWebhook: { url, secret: 'workflow-test-secret-0123' },
    ...options,
    workerOptions: { interceptors: { activity: [checkOfSevenBreaks(held)] } },
  });
}

describe('a run that fails while a call waits, whose approval timeout fires as the run closes', () => {
  it('ends that call once, with tool_cancelled, and tells its approvers once', async () => {
    const receiver = await receiverHoldingFirstDecision();
    const ledger = createLedger();
    const held = latch();
    const running = await workerWithBreakingCheck(receiver.url, ledger, held);
    try {
      const { client } = running;
      // Long enough for the check's failure to come first, short enough to fire while the run waits for its notice.
      const { runId } = await client.startRun({ ...base, prompt: 'two transfers', approvalTimeout: '5s' });
      await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_1_0'));
      await held.started;
      held.release();
      const kinds = await historyOnceTimerFired(runId);
      receiver.release();
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      const now = new Date().toISOString();
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('failed-as-wait-timed-out'),
      );
      // The premise: the timer fired after the check had failed the run.
      expect(kinds.lastIndexOf('activityTaskFailedEventAttributes')).toBeLessThan(
        kinds.indexOf('timerFiredEventAttributes'),
      );
      const events = await client.events(runId);
      const ofWaitingCall = events.filter((event) => 'toolCallId' in event && event.toolCallId === 'call_1_0');
      expect(eventTypes(ofWaitingCall).filter((type) => !type.startsWith('tool_approval_noti'))).toEqual([
        'tool_call_validated',
        'tool_awaiting_approval',
        'tool_cancelled',
      ]);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'check_broke' });
      expect(events.filter((event) => event.at > now)).toEqual([]);
      // One ending told (a held notice's attempt can time out and come again, with the same outcome).
      const decided = receiver.received.filter((notice) => notice.type === 'approval.decided');
      expect(new Set(decided.map((notice) => `${notice.toolCallId} ${notice.outcome}`))).toEqual(
        new Set(['call_1_0 withdrawn']),
      );
      expect(ledger.transfers).toEqual([]);
    } finally {
      receiver.release();
      await running.stop();
      await receiver.close();
    }
  });
});

describe('a run that fails in the workflow task that brings a decision for its waiting call', () => {
  it('ends that call once, with tool_cancelled, and dates nothing after its own clock', async () => {
    const taskQueue = uniqueTaskQueue('failing-with-decision');
    const ledger = createLedger();
    const tokens: Uint8Array[] = [];
    const start = (interceptors: ActivityInterceptorsFactory[]) =>
      kit.startWorker({
        taskQueue,
        tools: createTestTools(ledger),
        models: { scripted: scriptedModel(twoTransfers) },
        workerOptions: { interceptors: { activity: interceptors } },
      });
    const first = await start([checkOfSevenLeftToTest(tokens)]);
    const { client } = first;
    const { runId } = await client.startRun({ ...base, prompt: 'two transfers', approvalTimeout: '24h' });
    await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_1_0'));
    await expect.poll(() => tokens.length).toBe(1);
    // No worker polls while the decision and the check's failure (within its 10 s timeout) arrive: the next
    // workflow task delivers both.
    await first.stop();
    await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
    const [token] = tokens;
    await kit.temporal.activity.fail(token!, ApplicationFailure.nonRetryable('The input check broke', 'check_broke'));
    const second = await start([]);
    try {
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      const now = new Date().toISOString();
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('failed-in-task-of-decision'),
      );
      // The premise: one workflow task delivered the decision and the failure.
      expect(await eventTypesOfTaskWithSignal(runId)).toEqual(['WorkflowExecutionSignaled', 'ActivityTaskFailed']);
      const events = await client.events(runId);
      const ofWaitingCall = events.filter((event) => 'toolCallId' in event && event.toolCallId === 'call_1_0');
      expect(eventTypes(ofWaitingCall)).toEqual([
        'tool_call_validated',
        'tool_awaiting_approval',
        'tool_approved',
        'tool_cancelled',
      ]);
      expect(ofWaitingCall.at(-1)).toMatchObject({ stage: 'awaiting_approval' });
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'check_broke' });
      expect(events.filter((event) => event.at > now)).toEqual([]);
      const closed = await client.getRun(runId);
      expect(closed).toMatchObject({ status: 'failed', pendingApprovals: [] });
      expect(closed.updatedAt <= now).toBe(true);
      expect(ledger.transfers).toEqual([]);
    } finally {
      await second.stop();
    }
  });
});

describe('a run that fails while a call waits, whose reminder is due as the run closes', () => {
  it('sends no approval.expiring for the call it withdrew', async () => {
    const receiver = await receiverHoldingFirstDecision();
    const ledger = createLedger();
    const held = latch();
    // The reminder is due 4 s into the wait: after the check's failure, inside the run's grace for notices.
    const running = await workerWithBreakingCheck(receiver.url, ledger, held, { remindApproversBeforeExpiry: '1s' });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'two transfers', approvalTimeout: '5s' });
      await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_1_0'));
      await held.started;
      held.release();
      const kinds = await historyOnceTimerFired(runId);
      receiver.release();
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('failed-as-reminder-due'),
      );
      // The premise: the reminder's timer fired after the check had failed the run.
      expect(kinds.lastIndexOf('activityTaskFailedEventAttributes')).toBeLessThan(
        kinds.indexOf('timerFiredEventAttributes'),
      );
      const events = await client.events(runId);
      const notified = events.flatMap((event) =>
        event.type === 'tool_approval_notified' && event.toolCallId === 'call_1_0' ? [event.notice] : [],
      );
      expect(new Set(notified)).toEqual(new Set(['approval.requested', 'approval.decided']));
      expect(receiver.received.filter((notice) => notice.type === 'approval.expiring')).toEqual([]);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'check_broke' });
      expect(ledger.transfers).toEqual([]);
    } finally {
      receiver.release();
      await running.stop();
      await receiver.close();
    }
  });
});

describe('a run failed by one call of a step while its other calls still go', () => {
  const transferOf = (amount: number) => ({ name: 'transfer_funds', input: { from: 'a', to: 'b', amount } });

  it('stops a running tool, waits for it to end and records tool_cancelled before run_failed', async () => {
    const ledger = createLedger();
    const held = latch();
    const running = await kit.startWorker({
      tools: createTestTools(ledger),
      models: { scripted: scriptedModel([{ toolCalls: [transferOf(7), { name: 'wait_for_abort', input: {} }] }]) },
      workerOptions: { interceptors: { activity: [checkOfSevenBreaks(held)] } },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'a transfer and a slow tool' });
      await expect.poll(() => ledger.started).toEqual(['call_1_1']);
      await held.started;
      held.release();
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('failed-while-tool-runs'),
      );
      // Before, the run closed at once and its tool went on; it saw its signal abort only when it next heartbeated.
      expect(ledger.aborted).toEqual(['call_1_1']);
      const history = (await readHistory(kit.temporal, runId)).events ?? [];
      const toolCancelledAt = history.findIndex((event) => event.activityTaskCanceledEventAttributes);
      expect(toolCancelledAt).toBeGreaterThan(-1);
      expect(toolCancelledAt).toBeLessThan(history.findIndex((event) => event.workflowExecutionFailedEventAttributes));
      const events = await client.events(runId);
      const ofCall = (id: string) => events.filter((event) => 'toolCallId' in event && event.toolCallId === id);
      expect(eventTypes(ofCall('call_1_1'))).toEqual(['tool_call_validated', 'tool_cancelled']);
      expect(ofCall('call_1_1').at(-1)).toMatchObject({ stage: 'executing' });
      // The call whose check failed is the run's failure, not a cancelled call.
      expect(eventTypes(ofCall('call_1_0'))).toEqual(['tool_call_validated']);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'check_broke' });
      expect(await client.getRun(runId)).toMatchObject({ status: 'failed', pendingApprovals: [] });
    } finally {
      held.release();
      await running.stop();
    }
  });

  it('ends a call whose input is still being checked with tool_cancelled at stage checking_input', async () => {
    const ledger = createLedger();
    const breaks = latch();
    const fiveHeld = latch();
    const running = await kit.startWorker({
      tools: createTestTools(ledger),
      models: { scripted: scriptedModel([{ toolCalls: [transferOf(7), transferOf(5)] }]) },
      workerOptions: { interceptors: { activity: [checkOfSevenBreaks(breaks), checkOfFiveHolds(fiveHeld.released)] } },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'two transfers' });
      await breaks.started;
      breaks.release();
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('failed-while-input-checked'),
      );
      const events = await client.events(runId);
      const ofCall = (id: string) => events.filter((event) => 'toolCallId' in event && event.toolCallId === id);
      // Before, this call's log ended at tool_call_validated, as if its check were still on its way.
      expect(eventTypes(ofCall('call_1_1'))).toEqual(['tool_call_validated', 'tool_cancelled']);
      expect(ofCall('call_1_1').at(-1)).toMatchObject({ stage: 'checking_input' });
      expect(eventTypes(ofCall('call_1_0'))).toEqual(['tool_call_validated']);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'check_broke' });
      expect(ledger.transfers).toEqual([]);
    } finally {
      breaks.release();
      fiveHeld.release();
      await running.stop();
    }
  });
});
