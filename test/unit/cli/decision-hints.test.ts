import { describe, expect, it } from 'vitest';
import { formatApprovals } from '../../../src/cli/approvals-command.js';
import { cliInvocation } from '../../../src/cli/cli-invocation.js';
import { describeRun } from '../../../src/cli/inspect-command.js';
import type { RunPendingApproval } from '../../../src/client/list-pending-approvals.js';
import type { RunSnapshot } from '../../../src/shared/run-types.js';

const cli = cliInvocation();

/** The connection flags a command was given, as it carries them into its hints (see connection-hints.test.ts). */
const flags = ' --address 127.0.0.1:17233 --namespace shop --task-queue shop-agents';

const approval: RunPendingApproval = {
  runId: 'run_1',
  model: 'scripted:test',
  toolCallId: 'call_1_0',
  toolName: 'refund_order',
  input: { amount: 300 },
  step: 1,
  requestedAt: '2026-12-04T12:00:00.000Z',
  expiresAt: '2026-12-05T12:00:00.000Z',
};

const snapshot: RunSnapshot = {
  runId: 'run_1',
  tenantId: 'acme',
  model: 'scripted:test',
  status: 'awaiting_approval',
  step: 1,
  maxSteps: 10,
  pendingApprovals: [approval],
  usage: { inputTokens: 0, outputTokens: 0 },
  startedAt: '2026-12-04T12:00:00.000Z',
  updatedAt: '2026-12-04T12:01:00.000Z',
  lastEventSeq: 3,
};

describe('the commands a decision hint prints, from a command that reached a server elsewhere', () => {
  it('relay-e approvals: carry the connection flags it was given', () => {
    const table = formatApprovals({ approvals: [approval], unanswered: [], hasMore: false }, 'acme', flags);
    expect(table).toContain(
      `  approve: ${cli} approve${flags} <run> <call> --requested-at <requested at> [--input JSON]\n`,
    );
    expect(table).toContain(
      `  reject:  ${cli} reject${flags} <run> <call> --requested-at <requested at> [--reason TEXT]\n`,
    );
  });

  it('relay-e inspect: carry the connection flags it was given', () => {
    const text = describeRun(snapshot, [], [], flags);
    const requested = '--requested-at 2026-12-04T12:00:00.000Z';
    expect(text).toContain(`${cli} approve${flags} run_1 call_1_0 ${requested}   |   `);
    expect(text).toContain(`${cli} reject${flags} run_1 call_1_0 ${requested}\n`);
  });

  it('keep their short form for a command given no connection flag', () => {
    expect(formatApprovals({ approvals: [approval], unanswered: [], hasMore: false }, 'acme')).toContain(
      `Decide:\n  approve: ${cli} approve <run> <call> --requested-at <requested at> [--input JSON]\n` +
        `  reject:  ${cli} reject <run> <call> --requested-at <requested at> [--reason TEXT]\n`,
    );
    const requested = '--requested-at 2026-12-04T12:00:00.000Z';
    expect(describeRun(snapshot, [])).toContain(
      `${cli} approve run_1 call_1_0 ${requested}   |   ${cli} reject run_1 call_1_0 ${requested}`,
    );
  });
});
