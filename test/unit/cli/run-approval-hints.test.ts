import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { askApproval } from '../../../src/cli/ask-approval.js';
import { cliInvocation } from '../../../src/cli/cli-invocation.js';
import { runCommand } from '../../../src/cli/run-command.js';
import { RelayClient } from '../../../src/client/relay-client.js';
import type { RunEvent, RunSnapshot } from '../../../src/shared/run-types.js';

vi.mock('../../../src/cli/ask-approval.js', () => ({ askApproval: vi.fn() }));

const cli = cliInvocation();
const at = '2026-12-04T12:00:00.000Z';

function awaiting(approvers?: string[]): RunEvent {
  return {
    type: 'tool_awaiting_approval',
    seq: 1,
    at,
    step: 1,
    toolCallId: 'call_1_0',
    toolName: 'transfer_funds',
    input: { amount_usd: 50 },
    expiresAt: '2026-12-05T12:00:00.000Z',
    ...(approvers ? { approvers } : {}),
  };
}

const rejected: RunEvent = {
  type: 'tool_rejected',
  seq: 2,
  at,
  step: 1,
  toolCallId: 'call_1_0',
  toolName: 'transfer_funds',
};
const cancelled: RunEvent = { type: 'run_cancelled', seq: 3, at, step: 1 };

const snapshot = {
  runId: 'run_1',
  tenantId: 'demo',
  model: 'scripted:demo',
  status: 'cancelled',
  step: 1,
  maxSteps: 10,
  pendingApprovals: [],
  usage: { inputTokens: 0, outputTokens: 0 },
  startedAt: at,
  updatedAt: at,
  lastEventSeq: 3,
} satisfies RunSnapshot;

let stdout = '';
let stdinWasTty: boolean | undefined;

/** `relay-e run` on a terminal that may prompt, over a run whose call waits and is then rejected elsewhere. */
async function runOnTerminal(event: RunEvent): Promise<string> {
  const client = {
    startRun: async () => ({ runId: 'run_1' }),
    watch: async function* () {
      yield* [event, rejected, cancelled];
    },
    events: async () => [],
    getRun: async () => snapshot,
    close: async () => undefined,
  };
  vi.spyOn(RelayClient, 'connect').mockResolvedValue(client as unknown as RelayClient);
  await runCommand.run(['--approver', 'alice', 'transfer 50 from ACC-1 to ACC-2']);
  return stdout;
}

/** The commands printed for the waiting call, naming the request its event records (`at`). */
const hints =
  `  approve: ${cli} approve run_1 call_1_0 --requested-at ${at} [--input JSON]\n` +
  `  reject:  ${cli} reject run_1 call_1_0 --requested-at ${at} [--reason TEXT]\n`;

beforeEach(() => {
  stdout = '';
  stdinWasTty = process.stdin.isTTY;
  process.stdin.isTTY = true;
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => (stdout += String(chunk)).length > 0);
  vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
});

afterEach(() => {
  process.stdin.isTTY = stdinWasTty as true;
  vi.restoreAllMocks();
  vi.mocked(askApproval).mockReset();
  process.removeAllListeners('SIGINT');
});

describe('relay-e run on a terminal that approves', () => {
  it('says how to decide a call that still waits after the answer given here, before its next event', async () => {
    vi.mocked(askApproval).mockResolvedValue('waits');
    const printed = await runOnTerminal(awaiting());
    expect(askApproval).toHaveBeenCalledOnce();
    expect(printed).toContain(`${hints}#2`);
  });

  it('prints no hint once the answer settled the call', async () => {
    vi.mocked(askApproval).mockResolvedValue('settled');
    expect(await runOnTerminal(awaiting())).not.toContain('approve: ');
  });

  it('does not ask an approver the call does not allow, and says how to decide it', async () => {
    const printed = await runOnTerminal(awaiting(['cfo']));
    expect(askApproval).not.toHaveBeenCalled();
    expect(printed).toContain(`Not asked here: alice is not one of its approvers.\n${hints}`);
  });

  it('asks an approver the call allows', async () => {
    vi.mocked(askApproval).mockResolvedValue('settled');
    await runOnTerminal(awaiting(['cfo', 'alice']));
    expect(askApproval).toHaveBeenCalledOnce();
  });
});
