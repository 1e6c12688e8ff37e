import { createInterface } from 'node:readline/promises';
import type { Interface } from 'node:readline/promises';
import type { RelayClient } from '../client/relay-client.js';
import { errorMessage } from '../shared/error-message.js';
import { RelayError } from '../shared/errors.js';
import type { ApprovalOutcome, RunEvent } from '../shared/run-types.js';
import { waitsForMoreApprovals } from './decision-command.js';
import { compact } from './format-event.js';

type AwaitingApproval = Extract<RunEvent, { type: 'tool_awaiting_approval' }>;

/**
 * How asking ended: `settled` when nothing waits for a decision any more (decided here or elsewhere, expired, the run
 * ended), `waits` when the call still waits for one made elsewhere (this one was refused, or was one of several).
 */
export type AskOutcome = 'settled' | 'waits';

/** What the prompt needs of the client: the decisions it sends, and the run's events, to close when they settle it. */
export type ApprovalClient = Pick<RelayClient, 'approve' | 'reject' | 'watch'>;

/** Where the prompt asks and reads the answers. */
export interface PromptStreams {
  input: NodeJS.ReadableStream;
  output: NodeJS.WritableStream;
}

/** The events after which a waiting call needs no decision: it was decided, expired or cancelled, or the run ended. */
const settlingEvents = new Set<RunEvent['type']>([
  'tool_approved',
  'tool_rejected',
  'tool_approval_timed_out',
  'tool_cancelled',
  'run_completed',
  'run_failed',
  'run_cancelled',
]);

/**
 * Asks on the terminal whether to approve, reject or edit a pending call and sends the decision; a refused edit
 * (input that fails the tool's schema) is explained and asked again. The prompt closes when the call is settled
 * elsewhere meanwhile (an approver's inbox, the API, its timeout).
 */
export async function askApproval(
  client: ApprovalClient,
  runId: string,
  event: AwaitingApproval,
  approver: string,
  streams: PromptStreams = { input: process.stdin, output: process.stdout },
): Promise<AskOutcome> {
  const terminal = createInterface(streams);
  // readline swallows Ctrl-C at a prompt; pass it on so the command's own handler runs.
  terminal.on('SIGINT', () => process.kill(process.pid, 'SIGINT'));
  const say = (line: string) => streams.output.write(`${line}\n`);
  const settledElsewhere = new AbortController();
  const stopWatching = new AbortController();
  // A failing watch only leaves the prompt open: following the run afterwards reports the failure.
  closeWhenSettled(client, runId, event, settledElsewhere, stopWatching.signal).catch(() => undefined);
  const prompt: Prompt = { terminal, say, signal: settledElsewhere.signal, event };
  try {
    for (;;) {
      const outcome = await askOnce(prompt, (answer) =>
        decide(say, () => sendAnswer(client, runId, event.toolCallId, approver, answer)),
      );
      if (outcome !== 'again') return outcome;
    }
  } catch (error) {
    if (!settledElsewhere.signal.aborted) throw error;
    say('\nThe call no longer waits for a decision: the prompt is closed.');
    return 'settled';
  } finally {
    stopWatching.abort();
    terminal.close();
  }
}

/** The question being asked, where, and the signal that withdraws it. */
interface Prompt {
  terminal: Interface;
  say: (line: string) => void;
  signal: AbortSignal;
  event: AwaitingApproval;
}

/** An answer to send: approve (with edited input) or reject (with a reason). */
type Answer =
  { decision: 'approve'; options: { input?: unknown } } | { decision: 'reject'; options: { reason?: string } };

/** Asks once and sends the answer; `again` when there is nothing to send or the run refused the input given. */
async function askOnce(
  prompt: Prompt,
  send: (answer: Answer) => Promise<AskOutcome | 'again'>,
): Promise<AskOutcome | 'again'> {
  const { terminal, say, signal, event } = prompt;
  const question = `Approve ${event.toolName} ${compact(event.input)}? [y]es/[n]o/[e]dit `;
  const answer = (await terminal.question(question, { signal })).trim().toLowerCase();
  if (answer === 'y' || answer === 'yes') return send({ decision: 'approve', options: {} });
  if (answer === 'n' || answer === 'no') {
    const reason = (await terminal.question('Reason (optional, Enter to skip): ', { signal })).trim();
    return send({ decision: 'reject', options: reason === '' ? {} : { reason } });
  }
  if (answer === 'e' || answer === 'edit') {
    const input = await askJson(prompt);
    return input === undefined ? 'again' : send({ decision: 'approve', options: { input } });
  }
  say('Please answer y, n or e.');
  return 'again';
}

function sendAnswer(
  client: ApprovalClient,
  runId: string,
  toolCallId: string,
  approver: string,
  answer: Answer,
): Promise<ApprovalOutcome> {
  return answer.decision === 'approve'
    ? client.approve(runId, toolCallId, { approver, ...answer.options })
    : client.reject(runId, toolCallId, { approver, ...answer.options });
}

/**
 * Sends a decision and says how the run took it: `again` to ask anew after input it refused (an edit that fails the
 * tool's schema, a reason too long), `waits` when the call still waits for another decision.
 */
async function decide(
  say: (line: string) => void,
  sendDecision: () => Promise<ApprovalOutcome>,
): Promise<AskOutcome | 'again'> {
  try {
    const outcome = await sendDecision();
    say(describeOutcome(outcome));
    return waitsForMoreApprovals(outcome) ? 'waits' : 'settled';
  } catch (error) {
    if (!RelayError.isInstance(error)) throw error;
    say(`The run refused the decision: ${error.message}`);
    if (error.code === 'approval_input_invalid' || error.code === 'invalid_input') return 'again';
    // Not pending: decided elsewhere or expired. Any other refusal (a wrong approver) leaves the call waiting.
    return error.code === 'approval_not_pending' ? 'settled' : 'waits';
  }
}

function describeOutcome(outcome: ApprovalOutcome): string {
  if (outcome.decision === 'reject') return 'Rejected.';
  if (!waitsForMoreApprovals(outcome)) return 'Approved.';
  return `Approval ${outcome.approvals} of ${outcome.approvalsRequired} recorded: the call waits for another approver.`;
}

async function askJson({ terminal, say, signal, event }: Prompt): Promise<unknown> {
  const pending = terminal.question('Input as JSON (edit, then Enter): ', { signal });
  terminal.write(JSON.stringify(event.input));
  const text = (await pending).trim();
  try {
    return JSON.parse(text);
  } catch (error) {
    say(`That is not JSON (${errorMessage(error)}).`);
    return undefined;
  }
}

/** Aborts `settled` once the run's events show the call settled, or the run ended; watches until `stop` aborts. */
async function closeWhenSettled(
  client: ApprovalClient,
  runId: string,
  event: AwaitingApproval,
  settled: AbortController,
  stop: AbortSignal,
): Promise<void> {
  for await (const later of client.watch(runId, { after: event.seq, deltas: false, signal: stop })) {
    const call = 'toolCallId' in later ? later.toolCallId : event.toolCallId;
    if (settlingEvents.has(later.type) && call === event.toolCallId) {
      settled.abort();
      return;
    }
  }
}
