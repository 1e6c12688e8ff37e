import { describe, expect, it } from 'vitest';
import { formatApprovals } from '../../../src/cli/approvals-command.js';
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
    expect(table).toMatch(/^run_1\s+call_1_0\s+transfer_funds\s+2026-12-05 12:00:00\s+\{"amount":5\}$/m);
    expect(table).toMatch(/^run_1\s+call_1_1\s+transfer_funds \(finance-lead or cfo only\)\s+2026-12-05/m);
    expect(formatApprovals({ approvals: [], unanswered: [], hasMore: false }, 'acme')).toBe(
      'No tool call of tenant acme waits for a human.\n',
    );
  });
});
