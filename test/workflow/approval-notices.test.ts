import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApprovalWebhooks } from '../../src/notify/approval-webhook.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { ModelProviderError } from '../../src/model/model-provider.js';
import { WorkflowFailedError } from '@temporalio/client';
import { countScheduledActivities, eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RelayClient } from '../../src/client/relay-client.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { startApprovalReceiver } from '../helpers/approval-receiver.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import type { ModelCall } from '../../src/model/model-provider.js';
import type { ApprovalReceiver } from '../helpers/approval-receiver.js';

const secret = 'workflow-test-secret-0123';

const kit = useRelayTestKit();
let receiver: ApprovalReceiver;
let url = '';
let answers: Map<string, number[]>;
let delays: Map<string, number[]>;

beforeAll(async () => {
  receiver = await startApprovalReceiver(secret);
  ({ url, answers, delays } = receiver);
});

afterAll(async () => {
  await receiver?.close();
});

/**
 * A worker whose webhook serves tenant `acme` only, with a model that proposes one transfer per call id given and
 * then answers `later` (by default, `done`).
 */
async function startWorker(callIds: readonly string[], later: () => ScriptedTurn = () => ({ text: 'done' })) {
  const ledger = createLedger();
  const approvalWebhook: ApprovalWebhooks = (tenantId) =>
    tenantId === 'acme' ? { url, secret, inboxUrl: 'http://127.0.0.1:8787' } : undefined;
  const running = await kit.startWorker({
    tools: createTestTools(ledger),
    models: {
      scripted: scriptedModel((call) =>
        call.step === 1
          ? {
              toolCalls: callIds.map((id) => ({ id, name: 'transfer_funds', input: { from: 'A', to: id, amount: 5 } })),
            }
          : later(),
      ),
    },
    approvalWebhook,
  });
  return { ...running, ledger };
}

/** Polls the run's events until `count` notice events are recorded. */
async function waitForNoticeEvents(client: RelayClient, runId: string, count: number): Promise<NoticeEvent[]> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const events = noticeEvents(await client.events(runId));
    if (events.length >= count) return events;
    if (Date.now() > deadline) throw new Error(`Only ${events.length} of ${count} notice events after 20 s`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

type NoticeEvent = Extract<RunEvent, { type: 'tool_approval_notified' | 'tool_approval_notice_failed' }>;

function noticeEvents(events: readonly RunEvent[]): NoticeEvent[] {
  return events.filter(
    (event): event is NoticeEvent =>
      event.type === 'tool_approval_notified' || event.type === 'tool_approval_notice_failed',
  );
}

describe('telling approvers that a call waits', () => {
  it('posts one signed notice per waiting call, records its delivery, and still waits for the decision', async () => {
    const { client, stop, ledger } = await startWorker(['pay']);
    try {
      const { runId } = await client.startRun({
        tenantId: 'acme',
        userId: 'u1',
        model: 'scripted:test',
        prompt: 'pay',
      });
      const events = await waitForNoticeEvents(client, runId, 1);
      const waiting = await client.getRun(runId);
      const [pending] = waiting.pendingApprovals;
      expect(waiting.status).toBe('awaiting_approval');
      const base = {
        tenantId: 'acme',
        runId,
        model: 'scripted:test',
        userId: 'u1',
        toolCallId: 'call_1_0',
        toolName: 'transfer_funds',
        step: 1,
        requestedAt: pending?.requestedAt,
        expiresAt: pending?.expiresAt,
        inboxUrl: `http://127.0.0.1:8787/inbox/runs/${encodeURIComponent(runId)}`,
      };
      expect(receiver.noticesOf(runId)).toEqual([
        { type: 'approval.requested', id: `${runId}/call_1_0/requested`, ...base, input: pending?.input },
      ]);
      expect(events).toMatchObject([
        {
          type: 'tool_approval_notified',
          notice: 'approval.requested',
          toolCallId: 'call_1_0',
          status: 200,
          attempt: 1,
          step: 1,
        },
      ]);

      // The receiver takes its time with the decision's notice: the run, done before, waits for it to end.
      delays.set('call_1_0/approval.decided', [1_500]);
      await client.approve(runId, 'call_1_0', { approver: 'alice' });
      await client.result(runId);
      expect(ledger.transfers).toHaveLength(1);
      const log = await client.events(runId);
      const approved = log.find((event) => event.type === 'tool_approved');
      expect(eventTypes(log).slice(-3)).toEqual(['model_responded', 'tool_approval_notified', 'run_completed']);
      expect(noticeEvents(log).map((event) => event.notice)).toEqual(['approval.requested', 'approval.decided']);
      expect(receiver.noticesOf(runId).at(-1)).toEqual({
        type: 'approval.decided',
        id: `${runId}/call_1_0/decided`,
        ...base,
        outcome: 'approved',
        approver: 'alice',
        decidedAt: approved?.at,
      });
      expect(await countScheduledActivities(kit.temporal, runId, 'notifyApprovers')).toBe(2);
      // Its recorded history, approvers-notified.json, predates the approvers-told-every-ending rule and stays so.
    } finally {
      await stop();
    }
  });

  it('retries a receiver that is down, and records a notice it refused without holding up the call', async () => {
    const { client, stop, ledger } = await startWorker(['retried', 'refused']);
    answers.set('call_1_0/approval.requested', [503]);
    answers.set('call_1_1/approval.requested', [400]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay twice' });
      const events = await waitForNoticeEvents(client, runId, 2);
      const waiting = await client.getRun(runId);
      expect(events.every((event) => event.notice === 'approval.requested')).toBe(true);
      expect(events.sort((a, b) => a.toolCallId.localeCompare(b.toolCallId))).toMatchObject([
        { type: 'tool_approval_notified', toolCallId: 'call_1_0', status: 200, attempt: 2 },
        {
          type: 'tool_approval_notice_failed',
          toolCallId: 'call_1_1',
          status: 400,
          attempt: 1,
          error: `Approval webhook ${new URL(url).origin} answered 400`,
        },
      ]);
      expect(waiting.pendingApprovals.map((approval) => approval.toolCallId).sort()).toEqual(['call_1_0', 'call_1_1']);
      await client.approve(runId, 'call_1_0');
      await client.reject(runId, 'call_1_1', { reason: 'not this one' });
      await client.result(runId);
      expect(ledger.transfers.map((transfer) => transfer.to)).toEqual(['retried']);
      const decided = receiver.noticesOf(runId).filter((notice) => notice.type === 'approval.decided');
      expect(decided.sort((a, b) => a.toolCallId.localeCompare(b.toolCallId))).toMatchObject([
        { toolCallId: 'call_1_0', outcome: 'approved' },
        { toolCallId: 'call_1_1', outcome: 'rejected', reason: 'not this one' },
      ]);
    } finally {
      await stop();
    }
  });

  it('tells the approvers when nobody decided in time', async () => {
    const { client, stop, ledger } = await startWorker(['late']);
    try {
      const { runId } = await client.startRun({
        tenantId: 'acme',
        model: 'scripted:test',
        prompt: 'pay',
        approvalTimeout: 1_000,
      });
      await client.result(runId);
      expect(ledger.transfers).toEqual([]);
      const sent = receiver.noticesOf(runId);
      expect(sent.map((notice) => notice.type)).toEqual(['approval.requested', 'approval.decided']);
      expect(sent[1]).toMatchObject({ outcome: 'expired', decidedAt: sent[1]?.expiresAt });
      expect(sent[1]).not.toHaveProperty('approver');
    } finally {
      await stop();
    }
  });

  it('sends nothing for a tenant the webhooks do not serve', async () => {
    const { client, stop } = await startWorker(['quiet']);
    try {
      const { runId } = await client.startRun({ tenantId: 'globex', model: 'scripted:test', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.approve(runId, 'call_1_0');
      await client.result(runId);
      // The notices were asked for (the catalog says the tool notifies) and their activity answered: no webhook here.
      expect(await countScheduledActivities(kit.temporal, runId, 'notifyApprovers')).toBe(2);
      expect(noticeEvents(await client.events(runId))).toEqual([]);
      expect(receiver.noticesOf(runId)).toEqual([]);
    } finally {
      await stop();
    }
  });

  it('tells the approvers of a call that needs two approvals of the first, between the request and the decision', async () => {
    const tools = createTestTools(createLedger()).map((tool) =>
      tool.name === 'transfer_funds' ? defineTool({ ...(tool as ToolDefinition), approvalsRequired: 2 }) : tool,
    );
    const turns = (call: ModelCall): ScriptedTurn =>
      call.step === 1
        ? { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] }
        : { text: 'done' };
    const running = await kit.startWorker({
      tools,
      models: { scripted: scriptedModel(turns) },
      approvalWebhook: { url, secret },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.approve(runId, 'call_1_0', { approver: 'alice', reason: 'checked' });
      await client.approve(runId, 'call_1_0', { approver: 'bob' });
      await client.result(runId);
      const notices = await receiver.waitForNotices(runId, 3);
      expect(notices.map((notice) => notice.type)).toEqual([
        'approval.requested',
        'approval.added',
        'approval.decided',
      ]);
      expect(notices[0]).toMatchObject({ approvalsRequired: 2 });
      expect(notices[1]).toMatchObject({
        id: `${runId}/call_1_0/added-1`,
        approver: 'alice',
        reason: 'checked',
        approvals: 1,
        approvalsRequired: 2,
      });
      expect(notices[2]).toMatchObject({ outcome: 'approved', approver: 'bob', approvedBy: ['alice', 'bob'] });
      const awaiting = (await client.events(runId)).find((event) => event.type === 'tool_awaiting_approval');
      expect(awaiting).toMatchObject({ approvalsRequired: 2 });
      expect(awaiting).not.toHaveProperty('approvers');
      const recorded = await waitForNoticeEvents(client, runId, 3);
      expect(recorded.map((event) => event.notice)).toEqual(notices.map((notice) => notice.type));
      await recordHistoryIfRequested(
        client.temporal.workflow.getHandle(runId),
        currentHistoryFile('four-eyes-notified-approvers-in-event'),
      );
    } finally {
      await running.stop();
    }
  });

  it("sends a call's decision only once its request has ended, so receivers get them in order", async () => {
    const { client, stop, ledger } = await startWorker(['ordered']);
    // The request's first delivery fails: it is retried a second later, after the decision below.
    answers.set('call_1_0/approval.requested', [503]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.approve(runId, 'call_1_0', { approver: 'alice' });
      await client.result(runId);
      expect(ledger.transfers).toHaveLength(1);
      const sent = receiver.noticesOf(runId);
      expect(sent.map((notice) => notice.type)).toEqual(['approval.requested', 'approval.decided']);
      expect(noticeEvents(await client.events(runId))).toMatchObject([
        { notice: 'approval.requested', attempt: 2 },
        { notice: 'approval.decided', attempt: 1 },
      ]);
      await recordHistoryIfRequested(
        client.temporal.workflow.getHandle(runId),
        currentHistoryFile('approvers-told-in-order'),
      );
    } finally {
      await stop();
    }
  });

  it("tells the approvers that a cancelled run's waiting call was withdrawn, and waits for it before closing", async () => {
    const { client, stop, ledger } = await startWorker(['cancelled']);
    // Still being delivered when the run is cancelled: the cancellation does not cut it off.
    delays.set('call_1_0/approval.requested', [1_000]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.cancel(runId);
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      expect(ledger.transfers).toEqual([]);
      const log = await client.events(runId);
      const cancelled = log.find((event) => event.type === 'tool_cancelled');
      expect(eventTypes(log).slice(-4)).toEqual([
        'tool_cancelled',
        'tool_approval_notified',
        'tool_approval_notified',
        'run_cancelled',
      ]);
      expect(noticeEvents(log).map((event) => event.notice)).toEqual(['approval.requested', 'approval.decided']);
      const sent = receiver.noticesOf(runId);
      expect(sent.map((notice) => notice.type)).toEqual(['approval.requested', 'approval.decided']);
      expect(sent[1]).toMatchObject({ outcome: 'withdrawn', runStatus: 'cancelled', decidedAt: cancelled?.at });
      expect(sent[1]).not.toHaveProperty('approver');
      expect((await client.getRun(runId)).status).toBe('cancelled');
      await recordHistoryIfRequested(
        client.temporal.workflow.getHandle(runId),
        currentHistoryFile('approvers-told-of-cancel'),
      );
    } finally {
      await stop();
    }
  });

  it("waits for the last decision's notice before a run fails", async () => {
    const { client, stop, ledger } = await startWorker(['last'], () => {
      throw new ModelProviderError('The model is gone', { retryable: false });
    });
    delays.set('call_1_0/approval.decided', [1_500]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.approve(runId, 'call_1_0');
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      expect(ledger.transfers).toHaveLength(1);
      const log = await client.events(runId);
      expect(eventTypes(log).slice(-2)).toEqual(['tool_approval_notified', 'run_failed']);
      expect(noticeEvents(log).map((event) => event.notice)).toEqual(['approval.requested', 'approval.decided']);
      expect(receiver.noticesOf(runId).at(-1)).toMatchObject({ outcome: 'approved' });
    } finally {
      await stop();
    }
  });
});
