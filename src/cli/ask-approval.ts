import { createInterface } from 'node:readline/promises';
import type { Interface } from 'node:readline/promises';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { ApprovalOutcome, RunEvent } from '../shared/run-types.js';
import { waitsForMoreApprovals } from './decision-command.js';
import { compact } from './format-event.js';

type AwaitingApproval = Extract<RunEvent, { type: 'tool_awaiting_approval' }>;

/**
 * Asks on the terminal whether to approve, reject or edit a pending call and sends the decision; a refused
 * edit (input that fails the tool's schema) is explained and asked again.
 */
export async function askApproval(
  client: RelayClient,
  runId: string,
  event: AwaitingApproval,
  approver: string,
): Promise<void> {
  const terminal = createInterface({ input: process.stdin, output: process.stdout });
  // readline swallows Ctrl-C at a prompt; pass it on so the command's own handler runs.
  terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  const say = (line: string) => process.stdout.write(`${line}\n`);
  try {
    for (;;) {
      const answer = (await terminal.question(`Approve ${event.toolName} ${compact(event.input)}? [y]es/[n]o/[e]dit `))
        .trim()
        .toLowerCase();
      if (answer === 'y' || answer === 'yes') {
        if (await decide(say, () => client.approve(runId, event.toolCallId, { approver }))) return;
      } else if (answer === 'n' || answer === 'no') {
        const reason = (await terminal.question('Reason (optional, Enter to skip): ')).trim();
        const options = reason === '' ? { approver } : { approver, reason };
        if (await decide(say, () => client.reject(runId, event.toolCallId, options))) return;
      } else if (answer === 'e' || answer === 'edit') {
        const input = await askJson(terminal, say, event.input);
        if (
          input !== undefined &&
          (await decide(say, () => client.approve(runId, event.toolCallId, { approver, input })))
        ) {
          return;
        }
      } else {
        say('Please answer y, n or e.');
      }
    }
  } finally {
    terminal.close();
  }
}

/**
 * Sends a decision; true when it is settled (accepted, or already decided elsewhere), false to ask again: after an
 * edit the tool's schema refused, or one a call that needs several approvers does not take.
 */
async function decide(say: (line: string) => void, send: () => Promise<ApprovalOutcome>): Promise<boolean> {
  try {
    say(describeOutcome(await send()));
    return true;
  } catch (error) {
    if (!RelayError.isInstance(error)) throw error;
    say(`The run refused the decision: ${error.message}`);
    return error.code !== 'approval_input_invalid' && error.code !== 'invalid_input';
  }
}

function describeOutcome(outcome: ApprovalOutcome): string {
  if (outcome.decision === 'reject') return 'Rejected.';
  if (!waitsForMoreApprovals(outcome)) return 'Approved.';
  return `Approval ${outcome.approvals} of ${outcome.approvalsRequired} recorded: the call waits for another approver.`;
}

async function askJson(terminal: Interface, say: (line: string) => void, current: unknown): Promise<unknown> {
  const pending = terminal.question('Input as JSON (edit, then Enter): ');
  terminal.write(JSON.stringify(current));
  const text = (await pending).trim();
  try {
    return JSON.parse(text);
  } catch (error) {
    say(`That is not JSON (${error instanceof Error ? error.message : String(error)}).`);
    return undefined;
  }
}
