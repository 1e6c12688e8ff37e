import { setTimeout as sleep } from 'node:timers/promises';
import type { RelayClient, StartRunOptions } from '../client/relay-client.js';
import { namesTaskFailure } from '../client/workflow-task-failure.js';
import type { RelayError } from '../shared/errors.js';
import { agentRunInputSchema } from '../shared/run-input-schema.js';
import type { RunEvent, RunSnapshot } from '../shared/run-types.js';
import { checkToolInput } from '../shared/tool-input.js';
import { askApproval } from './ask-approval.js';
import { exitCodes, toExitCode, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { runConnectionOptions, runConnectionOptionsHelp, parseCommandArgs } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { connectionHintFlags } from './connection-hints.js';
import { describeDecisionHints } from './decision-command.js';
import { formatEvent } from './format-event.js';
import { approverOptionHelp, resolveApprover } from './resolve-approver.js';
import { resolveModel } from './resolve-model.js';
import { createSpinner } from './spinner.js';
import type { Spinner } from './spinner.js';
import { connectRelayClient, readRunCommandSettings } from './temporal-settings.js';

const runOptions = {
  ...runConnectionOptions,
  model: { type: 'string' },
  user: { type: 'string' },
  system: { type: 'string' },
  'max-steps': { type: 'string' },
  'approval-timeout': { type: 'string' },
  approver: { type: 'string' },
  detach: { type: 'boolean' },
  'no-interactive': { type: 'boolean' },
} as const;

const terminalEvents = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled']);
const retryQueryAfterMs = 1_000;
/** How long following keeps asking a Temporal server it cannot reach (after the client's own retries), then exit 5. */
const unreachableRetryMs = 5_000;
const cli = cliInvocation();

export const runCommand: Command = {
  name: 'run',
  summary: commandSummaries.run,
  help: `Usage: ${cli} run [options] "<prompt>"
       ${cli} run [options] -        (the prompt from standard input)

Starts a run, prints its events as they happen and the final answer. When a tool needs approval it
asks: Approve transfer_funds {...}? [y]es/[n]o/[e]dit  (edit: change the input as JSON).
Ctrl-C stops following; the run goes on (${cli} inspect <runId>). With - as the prompt, standard input
holds the prompt, so approvals are not asked here: approve with ${cli} approve.

Options:
  --model ID             provider:model (env RELAY_E_MODEL; default scripted:demo, the scripted demo model)
  --user ID              user id recorded on the run
  --system TEXT          system message
  --max-steps N          model calls allowed (default 10)
  --approval-timeout D   how long an approval may wait, e.g. 10m, 24h (default 24h)
  ${approverOptionHelp}
  --no-interactive       never prompt: print how to approve with ${cli} approve, and keep waiting
  --detach               print only the run id and exit without following (RUN=$(${cli} run --detach …))
  With --json: {"runId","model"} first, then one line per event {"runId","event"}, then {"runId","snapshot"};
  never prompts. A run no worker serves is said on standard error.

${runConnectionOptionsHelp}

Exit codes: 0 completed, 1 failed or cancelled, 2 a bad flag, 5 Temporal unreachable,
130 stopped following with Ctrl-C.`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs('run', argv, runOptions);
    const { prompt, fromStandardInput } = await readPrompt(positionals);
    const json = values.json === true;
    const asksHere = !json && values['no-interactive'] !== true && !fromStandardInput && process.stdin.isTTY === true;
    // Resolved before the run starts, so a missing approver is reported before anything happens.
    const terminalApprover = asksHere ? resolveApprover(values.approver) : undefined;
    const settings = await readRunCommandSettings(values);
    const model = resolveModel(values.model);
    const input = checkedRunInput({
      tenantId: settings.tenantId,
      model: model.modelId,
      prompt,
      ...runSettings(values),
    });
    const client = await connectRelayClient(settings);
    const spinner = createSpinner(!json && process.stderr.isTTY);
    try {
      const { runId } = await client.startRun(input);
      // Hints repeat the connection flags the run was started with, so they reach the same server and queue.
      const flags = connectionHintFlags(values);
      // Before the run id is printed: a caller that stops following as soon as it reads it must not kill the process.
      if (!values.detach) stopFollowingOnCtrlC(runId, spinner, json, flags);
      // First, so a caller learns the run id even when following it fails.
      if (json) process.stdout.write(`${JSON.stringify({ runId, model: model.modelId })}\n`);
      if (values.detach) {
        if (!json) process.stdout.write(`${runId}\n`);
        return exitCodes.ok;
      }
      if (!json) {
        spinner.print(`Run ${runId} started (tenant ${settings.tenantId})`);
        spinner.print(`Model: ${model.description}`);
      }
      const following = { client, runId, spinner, json, terminalApprover, taskQueue: settings.taskQueue, flags };
      await printEvents(following);
      spinner.stop();
      const snapshot = await client.getRun(runId);
      if (json) process.stdout.write(`${JSON.stringify({ runId, snapshot })}\n`);
      else process.stdout.write(describeEnd(snapshot));
      return snapshot.status === 'completed' ? exitCodes.ok : exitCodes.failed;
    } finally {
      spinner.stop();
      await client.close();
    }
  },
};

type RunValues = ReturnType<typeof parseCommandArgs<typeof runOptions>>['values'];

/** The prompt from the arguments, or from standard input for `-`; an empty one is a usage error. */
async function readPrompt(positionals: string[]): Promise<{ prompt: string; fromStandardInput: boolean }> {
  const fromStandardInput = positionals.length === 1 && positionals[0] === '-';
  const prompt = fromStandardInput ? await readStandardInput() : positionals.join(' ').trim();
  if (prompt === '') {
    throw usageError(
      fromStandardInput
        ? 'standard input held no prompt'
        : `${cli} run needs a prompt, e.g. ${cli} run "balance of ACC-1" (or - to read it from standard input)`,
    );
  }
  return { prompt, fromStandardInput };
}

/** The run's own settings the flags give: user, system message, step budget and approval timeout. */
function runSettings(values: RunValues) {
  return {
    ...(values.user !== undefined ? { userId: values.user } : {}),
    ...(values.system !== undefined ? { system: values.system } : {}),
    ...(values['max-steps'] !== undefined ? { maxSteps: readPositiveInteger('--max-steps', values['max-steps']) } : {}),
    ...(values['approval-timeout'] !== undefined ? { approvalTimeout: values['approval-timeout'] } : {}),
  };
}

/** The run's input as `startRun` checks it, checked before anything connects: a bad flag is a usage error (exit 2). */
function checkedRunInput(input: StartRunOptions): StartRunOptions {
  const check = checkToolInput(agentRunInputSchema(), input);
  if (!check.success) throw usageError(check.message.replace('Validation failed', 'Invalid run input'));
  return input;
}

/** Ctrl-C stops following, not the run, and says how to look at it later. */
function stopFollowingOnCtrlC(runId: string, spinner: Spinner, json: boolean, flags: string): void {
  process.once('SIGINT', () => {
    spinner.stop();
    if (!json) {
      process.stderr.write(`\nStopped following ${runId}; the run goes on. Later: ${cli} inspect${flags} ${runId}\n`);
    }
    process.exit(exitCodes.interrupted);
  });
}

/** What following a run prints with, and who approves on this terminal (undefined: nobody is asked here). */
interface Following {
  client: RelayClient;
  runId: string;
  spinner: Spinner;
  json: boolean;
  terminalApprover: string | undefined;
  taskQueue: string;
  /** The connection flags the command was given, repeated in the commands it prints ({@link connectionHintFlags}). */
  flags: string;
}

/**
 * Prints the run's events until it ends: one JSON line each with `--json`, else a readable line, asking for the
 * decision on a call that waits when this terminal approves, or saying how to decide it otherwise.
 */
async function printEvents(following: Following): Promise<void> {
  const { runId, spinner, json } = following;
  for await (const event of followRun(following)) {
    if (json) {
      process.stdout.write(`${JSON.stringify({ runId, event })}\n`);
      continue;
    }
    spinner.print(formatEvent(event));
    if (event.type === 'tool_awaiting_approval') await awaitDecision(following, event);
    else if (!terminalEvents.has(event.type)) spinner.start(`running (step ${event.step})`);
  }
}

type AwaitingApproval = Extract<RunEvent, { type: 'tool_awaiting_approval' }>;

/**
 * Asks for the decision when this terminal's approver may give it; otherwise, or when the call still waits after the
 * answer (refused, or one approval of several), says how to decide it and waits.
 */
async function awaitDecision(following: Following, event: AwaitingApproval): Promise<void> {
  const { client, runId, spinner, terminalApprover, flags } = following;
  if (terminalApprover !== undefined && (event.approvers?.includes(terminalApprover) ?? true)) {
    spinner.stop();
    if ((await askApproval(client, runId, event, terminalApprover)) === 'settled') return;
  } else if (terminalApprover !== undefined) {
    spinner.print(`Not asked here: ${terminalApprover} is not one of its approvers.`);
  }
  spinner.print(describeDecisionHints(runId, event.toolCallId, flags, event.at));
  spinner.start(`waiting for a decision on ${event.toolName}`);
}

/**
 * Follows the run's events, saying when the run cannot answer and why (`watch` waits it out). A Temporal server that
 * cannot be reached is asked again for a few seconds, then the error ends the command (exit 5).
 */
async function* followRun(following: Following): AsyncGenerator<RunEvent> {
  const { client, runId, spinner } = following;
  const unavailability = noticeWhyUnavailable(following);
  let after = 0;
  let unreachableSince: number | undefined;
  spinner.start('starting');
  for (;;) {
    try {
      for await (const event of client.watch(runId, { after, ...unavailability })) {
        after = event.seq;
        unreachableSince = undefined;
        yield event;
      }
      return;
    } catch (error) {
      if (toExitCode(error) !== exitCodes.unavailable) throw error;
      unreachableSince ??= Date.now();
      if (Date.now() - unreachableSince > unreachableRetryMs) throw error;
      await sleep(retryQueryAfterMs);
    }
  }
}

/**
 * Says, each time the run stops answering, why, as `watch` tells it: a workflow task the workers fail (a history that
 * no longer replays, with the reset that recovers it) or, most often, no worker yet.
 */
function noticeWhyUnavailable({ spinner, taskQueue, flags }: Following) {
  const start = `start one: ${cli} dev${flags}, or ${cli} worker${flags}`;
  const noWorker = `waiting for a worker on task queue '${taskQueue}' (${start})`;
  return {
    onUnavailable: (explained: RelayError) =>
      spinner.notice(namesTaskFailure(explained) ? explained.message : noWorker),
  };
}

function describeEnd(snapshot: RunSnapshot): string {
  const usage = `${snapshot.step} step(s), ${snapshot.usage.inputTokens} tokens in, ${snapshot.usage.outputTokens} out`;
  if (snapshot.status === 'completed') {
    return `\nAnswer (${snapshot.stopReason ?? 'final_answer'}, ${usage}):\n${snapshot.output ?? '(no text)'}\n`;
  }
  if (snapshot.status === 'failed') return `\nRun failed: ${snapshot.error ?? 'unknown error'}\n`;
  return `\nRun ${snapshot.status}.\n`;
}

/** The whole of standard input, trimmed; on a terminal it says how to end the prompt. */
async function readStandardInput(): Promise<string> {
  if (process.stdin.isTTY) process.stderr.write('Reading the prompt from standard input; end it with Ctrl-D.\n');
  let text = '';
  for await (const chunk of process.stdin.setEncoding('utf8')) text += chunk as string;
  return text.trim();
}

/** Reads a flag as a positive integer, or fails with a usage error. */
export function readPositiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw usageError(`${flag} must be a positive integer, got '${text}'`);
  return value;
}
