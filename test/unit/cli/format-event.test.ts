import { describe, expect, it } from 'vitest';
import { formatEvent } from '../../../src/cli/format-event.js';
import type { RunEvent } from '../../../src/shared/run-types.js';

const base = { seq: 2, at: '2026-12-03T10:00:00.000Z', step: 1 } as const;

describe('formatEvent', () => {
  it('shows a model text on one line', () => {
    const line = formatEvent({ ...base, type: 'model_responded', text: 'Let me\nlook.', toolCallCount: 1 });
    expect(line).toBe('#2   model_responded          1 tool call; "Let me look."');
  });

  it('shows a text kept in the payload store by its preview and size, saying it is stored', () => {
    const storedText = {
      storedText: `sha256:${'a'.repeat(64)}` as const,
      bytes: 9_000,
      preview: 'Thinking it through',
    };
    const line = formatEvent({ ...base, type: 'model_responded', storedText, toolCallCount: 2 });
    expect(line).toBe('#2   model_responded          2 tool calls; "Thinking it through" (9000 bytes, stored)');
  });

  it('says whether a validated call needs approval, or its approval rule decides', () => {
    const call = {
      ...base,
      type: 'tool_call_validated',
      toolCallId: 'call_1_0',
      toolName: 'pay',
      input: { n: 1 },
    } as const;
    expect(formatEvent({ ...call, requiresApproval: false })).toMatch(/pay \[call_1_0\] \{"n":1\}$/);
    expect(formatEvent({ ...call, requiresApproval: true })).toMatch(/\(needs approval\)$/);
    expect(formatEvent({ ...call, requiresApproval: true, approvalByRule: true })).toMatch(
      /\(its approval rule decides\)$/,
    );
  });

  it('names who may decide a waiting call and how many must approve, when its event says', () => {
    const waiting = {
      ...base,
      type: 'tool_awaiting_approval',
      toolCallId: 'call_1_0',
      toolName: 'pay',
      input: { n: 1 },
      expiresAt: '2026-12-04T10:00:00.000Z',
    } as const;
    expect(formatEvent(waiting)).toMatch(/pay \[call_1_0\] \{"n":1\} until 2026-12-04T10:00:00.000Z$/);
    expect(formatEvent({ ...waiting, approvers: ['alice', 'bob'], approvalsRequired: 2 })).toMatch(
      /until 2026-12-04T10:00:00.000Z, approvers alice, bob, 2 approvals needed$/,
    );
    expect(formatEvent({ ...waiting, approvers: ['alice'] })).toMatch(/, approvers alice$/);
  });

  it('says whether the approvers were told of a waiting call, and why not', () => {
    const call = { ...base, toolCallId: 'call_1_0', toolName: 'transfer_funds' };
    const notified: RunEvent = {
      ...call,
      type: 'tool_approval_notified',
      notice: 'approval.requested',
      status: 204,
      attempt: 2,
    };
    expect(formatEvent(notified)).toBe(
      '#2   tool_approval_notified   transfer_funds [call_1_0] approval.requested sent (webhook answered 204, attempt 2)',
    );
    const error = 'Approval webhook https://hooks.example.test answered 404';
    const failed: RunEvent = {
      ...call,
      type: 'tool_approval_notice_failed',
      notice: 'approval.decided',
      error,
      attempt: 1,
    };
    expect(formatEvent(failed)).toBe(
      `#2   tool_approval_notice_failed transfer_funds [call_1_0] approval.decided NOT sent after 1 attempt(s): ${error}`,
    );
    const handedOff: RunEvent = {
      ...call,
      type: 'tool_approval_notice_handed_off',
      notice: 'approval.decided',
      deliveredBy: 'run-1/approval-notices/abc',
    };
    expect(formatEvent(handedOff)).toMatch(
      /transfer_funds \[call_1_0\] approval\.decided still in flight at the run's end: delivered by run-1\/approval-notices\/abc$/,
    );
  });

  it('says which signalled decision the run ignored, and why', () => {
    const ignored: RunEvent = {
      ...base,
      type: 'decision_ignored',
      toolCallId: 'call_1_0',
      toolName: 'transfer_funds',
      decision: 'approve',
      approver: 'mallory',
      code: 'approver_not_allowed',
      error: "Tool 'transfer_funds' is decided by alice only, not by 'mallory'",
    };
    expect(formatEvent(ignored)).toMatch(
      /signalled approve decision for transfer_funds \[call_1_0\] by mallory ignored: approver_not_allowed: Tool/,
    );
    const unknownCall: RunEvent = {
      ...base,
      type: 'decision_ignored',
      toolCallId: 'call_9_9',
      code: 'approval_not_pending',
      error: "Tool call 'call_9_9' is not awaiting approval",
    };
    expect(formatEvent(unknownCall)).toMatch(
      /signalled decision for call \[call_9_9\] ignored: approval_not_pending: /,
    );
  });
});
