import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { askApproval } from '../../../src/cli/ask-approval.js';
import type { ApprovalClient } from '../../../src/cli/ask-approval.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { ApprovalOutcome, RunEvent } from '../../../src/shared/run-types.js';

const awaiting: Extract<RunEvent, { type: 'tool_awaiting_approval' }> = {
  type: 'tool_awaiting_approval',
  seq: 4,
  at: '2026-12-04T12:00:00.000Z',
  step: 1,
  toolCallId: 'call_1_0',
  toolName: 'transfer_funds',
  input: { amount_usd: 50 },
  expiresAt: '2026-12-05T12:00:00.000Z',
};

/** A run whose events bring nothing new until the prompt stops watching them. */
// eslint-disable-next-line require-yield
async function* noNewEvents(_runId: string, options: { signal?: AbortSignal } = {}): AsyncGenerator<RunEvent> {
  await new Promise((resolve) => options.signal?.addEventListener('abort', resolve));
}

/** A client whose decisions get `answer`, and whose run's events are `watch`'s. */
function client(answer: () => Promise<ApprovalOutcome>, watch = noNewEvents): ApprovalClient {
  return { approve: answer, reject: answer, watch };
}

/** A terminal that answers `answer` to the approval question each time it is asked, and keeps what was printed. */
function terminal(answer?: string) {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (chunk: Buffer) => {
    printed += chunk.toString();
    if (answer !== undefined && chunk.toString().includes('[y]es/[n]o/[e]dit')) input.write(`${answer}\n`);
  });
  return { streams: { input, output }, printed: () => printed };
}

const approved: ApprovalOutcome = { toolCallId: 'call_1_0', toolName: 'transfer_funds', decision: 'approve' };

describe('relay-e run asking for an approval on the terminal', () => {
  it('ends settled when the run takes the decision', async () => {
    const { streams } = terminal('y');
    await expect(
      askApproval(
        client(async () => approved),
        'run_1',
        awaiting,
        'alice',
        streams,
      ),
    ).resolves.toBe('settled');
  });

  it('ends with the call still waiting when the run refuses the approver, or needs another approval', async () => {
    const refused = terminal('y');
    const notAllowed = async () => {
      throw new RelayError('approver_not_allowed', "Tool 'transfer_funds' is decided by cfo only, not by alice");
    };
    await expect(askApproval(client(notAllowed), 'run_1', awaiting, 'alice', refused.streams)).resolves.toBe('waits');
    expect(refused.printed()).toContain('The run refused the decision: Tool');

    const oneOfTwo = terminal('y');
    const partial = async () => ({ ...approved, approvals: 1, approvalsRequired: 2 });
    await expect(askApproval(client(partial), 'run_1', awaiting, 'alice', oneOfTwo.streams)).resolves.toBe('waits');
    expect(oneOfTwo.printed()).toContain('Approval 1 of 2 recorded');
  });

  it('ends settled when the call was decided elsewhere before the answer reached it', async () => {
    const { streams } = terminal('y');
    const notPending = async () => {
      throw new RelayError('approval_not_pending', 'No pending approval for tool call call_1_0');
    };
    await expect(askApproval(client(notPending), 'run_1', awaiting, 'alice', streams)).resolves.toBe('settled');
  });

  it('closes the prompt, unanswered, when the call is decided elsewhere or the run ends meanwhile', async () => {
    const decidedElsewhere = (event: RunEvent) =>
      async function* (): AsyncGenerator<RunEvent> {
        await new Promise((resolve) => setTimeout(resolve, 50));
        yield event;
      };
    const base = { at: '2026-12-04T12:01:00.000Z', step: 1 };
    for (const event of [
      {
        ...base,
        seq: 5,
        type: 'tool_approved',
        toolCallId: 'call_1_0',
        toolName: 'transfer_funds',
        input: {},
        edited: false,
      },
      {
        ...base,
        seq: 5,
        type: 'tool_approval_timed_out',
        toolCallId: 'call_1_0',
        toolName: 'transfer_funds',
        expiresAt: '',
      },
      { ...base, seq: 5, type: 'run_cancelled' },
    ] satisfies RunEvent[]) {
      const unanswered = terminal();
      const elsewhere = client(async () => approved, decidedElsewhere(event));
      const asked = askApproval(elsewhere, 'run_1', awaiting, 'alice', unanswered.streams);
      await expect(asked, event.type).resolves.toBe('settled');
      expect(unanswered.printed()).toContain('The call no longer waits for a decision: the prompt is closed.');
    }
  });

  it('keeps asking while the events concern other calls', async () => {
    const otherCall = async function* (): AsyncGenerator<RunEvent> {
      yield { type: 'tool_rejected', seq: 5, at: '', step: 1, toolCallId: 'call_1_1', toolName: 'transfer_funds' };
      await new Promise((resolve) => setTimeout(resolve, 100));
    };
    const later = terminal();
    const asked = askApproval(
      client(async () => approved, otherCall),
      'run_1',
      awaiting,
      'alice',
      later.streams,
    );
    await new Promise((resolve) => setTimeout(resolve, 150));
    later.streams.input.write('y\n');
    await expect(asked).resolves.toBe('settled');
    expect(later.printed()).toContain('Approved.');
  });
});
