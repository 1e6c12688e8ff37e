import { describe, expect, it } from 'vitest';
import { formatApprovals } from '../../../src/cli/approvals-command.js';
import { formatOutcome } from '../../../src/cli/decision-command.js';
import type { RunPendingApproval } from '../../../src/client/list-pending-approvals.js';

const approval: RunPendingApproval = {
  runId: 'run_1',
  model: 'scripted:test',
  toolCallId: 'call_1_0',
  toolName: 'transfer_funds',
  input: { amount: 5 },
  step: 1,
  requestedAt: '2026-12-04T12:00:00.000Z',
  expiresAt: '2026-12-05T12:00:00.000Z',
};

describe('relay-e approvals', () => {
  it('lists each waiting call, and says who may decide one whose tool names its approvers', () => {
    const table = formatApprovals(
      {
        approvals: [approval, { ...approval, toolCallId: 'call_1_1', approvers: ['finance-lead', 'cfo'] }],
        unanswered: [],
        hasMore: false,
      },
      'acme',
    );
    expect(table).toMatch(
      /^run_1\s+call_1_0\s+transfer_funds\s+2026-12-04T12:00:00\.000Z\s+2026-12-05 12:00:00\s+\{"amount":5\}$/m,
    );
    expect(table).toMatch(
      /^run_1\s+call_1_1\s+transfer_funds \(finance-lead or cfo only\)\s+2026-12-04T12:00:00\.000Z\s+2026-12-05/m,
    );
    const twoOfThree = { ...approval, toolCallId: 'call_1_2', approvers: ['a', 'b', 'c'], approvalsRequired: 2 };
    const given = [{ approver: 'a', at: '2026-12-04T12:01:00.000Z' }];
    expect(
      formatApprovals({ approvals: [{ ...twoOfThree, approvals: given }], unanswered: [], hasMore: false }, 'acme'),
    ).toMatch(
      /^run_1\s+call_1_2\s+transfer_funds \(a or b or c only; 1 of 2 approvals\)\s+2026-12-04T12:00:00\.000Z\s+2026-12-05/m,
    );
    expect(formatApprovals({ approvals: [], unanswered: [], hasMore: false }, 'acme')).toBe(
      'No tool call of tenant acme waits for a human.\n',
    );
  });
});

describe('relay-e approve', () => {
  const ids = { toolCallId: 'call_1_0', toolName: 'transfer_funds' };
  it('says a call that needs more approvers still waits, and what runs once a call is approved', () => {
    expect(formatOutcome('run_1', { ...ids, decision: 'approve', input: {}, approvals: 1, approvalsRequired: 2 })).toBe(
      'Approval 1 of 2 recorded for transfer_funds [call_1_0] on run_1: it waits for another approver\n',
    );
    expect(
      formatOutcome('run_1', { ...ids, decision: 'approve', input: { a: 1 }, approvals: 2, approvalsRequired: 2 }),
    ).toBe('Approved transfer_funds [call_1_0] on run_1 with input {"a":1}\n');
    expect(formatOutcome('run_1', { ...ids, decision: 'reject' })).toBe(
      'Rejected transfer_funds [call_1_0] on run_1\n',
    );
  });
});
