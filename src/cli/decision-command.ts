import type { ApprovalOutcome } from '../shared/run-types.js';
import { exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { runConnectionOptions, parseCommandArgs, parseJsonFlag, scopedConnectionOptionsHelp } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { compact } from './format-event.js';
import { approverOptionHelp, resolveApprover } from './resolve-approver.js';
import { connectRelayClient, readRunCommandSettings } from './temporal-settings.js';

const decisionOptions = {
  ...runConnectionOptions,
  reason: { type: 'string' },
  approver: { type: 'string' },
  input: { type: 'string' },
  'requested-at': { type: 'string' },
} as const;

const cli = cliInvocation();

const requestedAtHelp = `--requested-at TIME    when the call you decide on was requested (its requestedAt, as relay-e run
                         prints it): the decision is refused if the call waiting now is another request`;

const decisionExitCodes = `Exit codes: 0 accepted, 3 no such run, 4 refused (no such pending call, already decided,
or --input fails the tool's schema), 5 Temporal unreachable.`;

export const approveCommand: Command = {
  name: 'approve',
  summary: commandSummaries.approve,
  help: `Usage: ${cli} approve <runId> <toolCallId> [--reason TEXT] [--input JSON] [--approver NAME] [--requested-at TIME]

Approves a tool call that waits for a human. --input runs the call with edited arguments instead;
the run checks them against the tool's schema and refuses them if they do not fit.
With --tenant (or RELAY_E_TENANT), a run of another tenant counts as not found.

Options:
  --input JSON           run the call with these arguments instead
  --reason TEXT          recorded with the decision
  ${approverOptionHelp}
  ${requestedAtHelp}

${scopedConnectionOptionsHelp}

${decisionExitCodes}`,
  run: (argv) => decide('approve', argv),
};

export const rejectCommand: Command = {
  name: 'reject',
  summary: commandSummaries.reject,
  help: `Usage: ${cli} reject <runId> <toolCallId> [--reason TEXT] [--approver NAME] [--requested-at TIME]

Rejects a tool call that waits for a human; the reason goes back to the model.
With --tenant (or RELAY_E_TENANT), a run of another tenant counts as not found.

Options:
  --reason TEXT          recorded with the decision and told to the model
  ${approverOptionHelp}
  ${requestedAtHelp}

${scopedConnectionOptionsHelp}

${decisionExitCodes}`,
  run: (argv) => decide('reject', argv),
};

async function decide(decision: 'approve' | 'reject', argv: string[]): Promise<number> {
  const { values, positionals } = parseCommandArgs(decision, argv, decisionOptions);
  const [runId, toolCallId, ...extra] = positionals;
  if (runId === undefined || toolCallId === undefined || extra.length > 0) {
    throw usageError(`Usage: ${cli} ${decision} <runId> <toolCallId> [options]`);
  }
  if (decision === 'reject' && values.input !== undefined) throw usageError('--input is for approve only');
  const input = values.input === undefined ? undefined : parseJsonFlag('--input', values.input);
  const requestedAt = values['requested-at'] === undefined ? undefined : parseRequestedAt(values['requested-at']);
  const settings = await readRunCommandSettings(values);
  const client = await connectRelayClient(settings);
  try {
    const options = {
      approver: resolveApprover(values.approver),
      ...(values.reason !== undefined ? { reason: values.reason } : {}),
      ...(requestedAt !== undefined ? { requestedAt } : {}),
      ...(settings.tenantGiven ? { tenantId: settings.tenantId } : {}),
    };
    const outcome: ApprovalOutcome =
      decision === 'approve'
        ? await client.approve(runId, toolCallId, input === undefined ? options : { ...options, input })
        : await client.reject(runId, toolCallId, options);
    process.stdout.write(values.json ? `${JSON.stringify({ runId, ...outcome })}\n` : formatOutcome(runId, outcome));
    return exitCodes.ok;
  } finally {
    await client.close();
  }
}

/** A time as the run records it (`toISOString`), so that another spelling of the same instant still matches. */
function parseRequestedAt(value: string): string {
  const time = Date.parse(value);
  if (Number.isNaN(time))
    throw usageError(`--requested-at needs a time such as 2026-12-07T04:00:00.000Z, got '${value}'`);
  return new Date(time).toISOString();
}

/** What `relay-e approve` / `reject` print: the decision, or for a call that needs more approvers, how many it has. */
export function formatOutcome(runId: string, outcome: ApprovalOutcome): string {
  const call = `${outcome.toolName} [${outcome.toolCallId}] on ${runId}`;
  if (outcome.decision === 'reject') return `Rejected ${call}\n`;
  if (waitsForMoreApprovals(outcome)) {
    return `Approval ${outcome.approvals} of ${outcome.approvalsRequired} recorded for ${call}: it waits for another approver\n`;
  }
  return `Approved ${call}${outcome.input !== undefined ? ` with input ${compact(outcome.input)}` : ''}\n`;
}

/**
 * The commands that decide a call waiting for a human, one a line; they carry `flags`, the connection flags the
 * printing command was given (`connectionHintFlags`), so they reach the same server and task queue, and the call's
 * `requestedAt` when the printer knows it, so a command pasted later decides the request it was printed for.
 */
export function describeDecisionHints(runId: string, toolCallId: string, flags = '', requestedAt?: string): string {
  const call = `${runId} ${toolCallId}${requestedAt !== undefined ? ` --requested-at ${requestedAt}` : ''}`;
  return (
    `  approve: ${cli} approve${flags} ${call} [--input JSON]\n` +
    `  reject:  ${cli} reject${flags} ${call} [--reason TEXT]`
  );
}

/** Whether an accepted approval was one of several the call needs, and it still waits for the rest. */
export function waitsForMoreApprovals({ approvals, approvalsRequired }: ApprovalOutcome): boolean {
  return approvals !== undefined && approvalsRequired !== undefined && approvals < approvalsRequired;
}
