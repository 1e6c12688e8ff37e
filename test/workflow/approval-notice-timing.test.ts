import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import type { RelayTestEnvironment } from '../../src/testing/create-test-environment.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { startApprovalReceiver } from '../helpers/approval-receiver.js';
import type { ApprovalReceiver } from '../helpers/approval-receiver.js';
import { currentHistoryFile, isRecordingHistories } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// Time skipping: the reminder an hour before a 24-hour wait expires is reached by moving the test server's clock.
const secret = 'reminder-test-secret-0123';
const hour = 3_600_000;
const ledger = createLedger();
const model = scriptedModel((request) =>
  request.step === 1
    ? { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }] }
    : { text: 'done' },
);
let receiver: ApprovalReceiver;
let env: RelayTestEnvironment;

beforeAll(async () => {
  receiver = await startApprovalReceiver(secret);
  env = await createTestEnvironment({
    mode: 'time-skipping',
    tools: createTestTools(ledger),
    models: { scripted: model },
    approvalWebhook: { url: receiver.url, secret },
    remindApproversBeforeExpiry: '1h',
  });
});

afterAll(async () => {
  await env?.teardown();
  await receiver?.close();
});

const types = (runId: string) => receiver.noticesOf(runId).map((notice) => notice.type);

describe('reminding approvers before a call expires', () => {
  it('sends one approval.expiring notice an hour before a 24-hour wait ends, between the request and the decision', async () => {
    const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    const approval = await env.waitForApproval(runId);
    await receiver.waitForNotices(runId, 1);
    await env.advanceTime(23 * hour - 60_000);
    // Activities run in wall time: a reminder sent too early would have arrived by now.
    await new Promise((resolve) => setTimeout(resolve, 500));
    expect(types(runId)).toEqual(['approval.requested']);

    await env.advanceTime(120_000);
    const [requested, expiring] = await receiver.waitForNotices(runId, 2);
    expect(expiring).toEqual({
      ...requested,
      type: 'approval.expiring',
      id: `${runId}/${approval.toolCallId}/expiring`,
    });
    expect((await env.client.getRun(runId)).status).toBe('awaiting_approval');

    await approval.approve({ approver: 'alice' });
    await env.result(runId);
    expect(types(runId)).toEqual(['approval.requested', 'approval.expiring', 'approval.decided']);
    const events = await env.client.events(runId);
    const notified = events.filter((event) => event.type === 'tool_approval_notified');
    expect(notified.map((event) => event.notice)).toEqual(types(runId));
    if (isRecordingHistories()) await env.recordHistory(runId, currentHistoryFile('approval-reminded'));
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
