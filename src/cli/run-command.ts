import { setTimeout as sleep } from 'node:timers/promises';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { RunEvent, RunSnapshot } from '../shared/run-types.js';
import { askApproval } from './ask-approval.js';
import { exitCodes, usageError } from './cli-error.js';
import type { Command } from './command.js';
import { connectionOptions, connectionOptionsHelp, parseCommandArgs } from './command.js';
import { formatEvent } from './format-event.js';
import { resolveModel } from './resolve-model.js';
import { createSpinner } from './spinner.js';
import type { Spinner } from './spinner.js';
import { connectRelayClient, readTemporalSettings } from './temporal-settings.js';

const runOptions = {
  ...connectionOptions,
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
const noWorkerHintAfterMs = 5_000;
const retryQueryAfterMs = 1_000;

export const runCommand: Command = {
  name: 'run',
  summary: 'start a run and follow it live, asking for approvals on the terminal',
  help: `Usage: relay-e run [options] "<prompt>"

Starts a run, prints its events as they happen and the final answer. When a tool needs approval it
asks: Approve transfer_funds {...}? [y]es/[n]o/[e]dit  (edit: change the input as JSON).
Ctrl-C stops following; the run goes on (relay-e inspect <runId>).

Options:
  --model ID             provider:model (env RELAY_E_MODEL; default scripted:demo, the scripted demo model)
  --user ID              user id recorded on the run
  --system TEXT          system message
  --max-steps N          model calls allowed (default 10)
  --approval-timeout D   how long an approval may wait, e.g. 10m, 24h (default 24h)
  --approver NAME        recorded with decisions made here (default $USER)
  --no-interactive       never prompt: print how to approve with relay-e approve, and keep waiting
  --detach               print the run id and exit without following
  With --json: one line per event {"runId","event"}, then {"runId","snapshot"}; never prompts.

${connectionOptionsHelp}

Exit codes: 0 completed, 1 failed or cancelled, 130 stopped following with Ctrl-C.`,
  async run(argv) {
    const { values, positionals } = parseCommandArgs('run', argv, runOptions);
    const prompt = positionals.join(' ').trim();
    if (prompt === '') throw usageError('relay-e run needs a prompt, e.g. relay-e run "balance of ACC-1"');
    const json = values.json === true;
    const interactive = !json && values['no-interactive'] !== true && process.stdin.isTTY;
    const settings = await readTemporalSettings(values);
    const model = resolveModel(values.model);
    const client = await connectRelayClient(settings);
    const spinner = createSpinner(!json && process.stderr.isTTY);
    try {
      const { runId } = await client.startRun({
        tenantId: settings.tenantId,
        model: model.modelId,
        prompt,
        ...(values.user !== undefined ? { userId: values.user } : {}),
        ...(values.system !== undefined ? { system: values.system } : {}),
        ...(values['max-steps'] !== undefined
          ? { maxSteps: readPositiveInteger('--max-steps', values['max-steps']) }
          : {}),
        ...(values['approval-timeout'] !== undefined ? { approvalTimeout: values['approval-timeout'] } : {}),
      });
      if (json && values.detach) process.stdout.write(`${JSON.stringify({ runId, model: model.modelId })}\n`);
      if (!json) {
        spinner.print(`Run ${runId} started (tenant ${settings.tenantId})`);
        spinner.print(`Model: ${model.description}`);
      }
      if (values.detach) {
        if (!json) spinner.print(`Follow it with: relay-e inspect ${runId}`);
        return exitCodes.ok;
      }
      process.once('SIGINT', () => {
        spinner.stop();
        if (!json)
          process.stderr.write(`\nStopped following ${runId}; the run goes on. Later: relay-e inspect ${runId}\n`);
        process.exit(exitCodes.interrupted);
      });
      const approver = values.approver ?? process.env['USER'] ?? 'cli';
      for await (const event of followRun(client, runId, spinner, settings.taskQueue)) {
        if (json) {
          process.stdout.write(`${JSON.stringify({ runId, event })}\n`);
          continue;
        }
        spinner.print(formatEvent(event));
        if (event.type === 'tool_awaiting_approval') {
          if (interactive) {
            spinner.stop();
            await askApproval(client, runId, event, approver);
          } else {
            spinner.print(
              `  approve: relay-e approve ${runId} ${event.toolCallId} [--input JSON]\n` +
                `  reject:  relay-e reject ${runId} ${event.toolCallId} [--reason TEXT]`,
            );
            spinner.start(`waiting for a decision on ${event.toolName}`);
          }
        } else if (!terminalEvents.has(event.type)) {
          spinner.start(`running (step ${event.step})`);
        }
      }
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

/** Follows the run's events; until a worker has picked the run up the queries fail, so they are retried. */
async function* followRun(
  client: RelayClient,
  runId: string,
  spinner: Spinner,
  taskQueue: string,
): AsyncGenerator<RunEvent> {
  const startedAt = Date.now();
  let after = 0;
  spinner.start('starting');
  for (;;) {
    try {
      for await (const event of client.watch(runId, { after })) {
        after = event.seq;
        yield event;
      }
      return;
    } catch (error) {
      if (RelayError.isInstance(error)) throw error;
      if (Date.now() - startedAt > noWorkerHintAfterMs) {
        spinner.start(`waiting for a worker on task queue '${taskQueue}' (start one: relay-e dev, or relay-e worker)`);
      }
      await sleep(retryQueryAfterMs);
    }
  }
}

function describeEnd(snapshot: RunSnapshot): string {
  const usage = `${snapshot.step} step(s), ${snapshot.usage.inputTokens} tokens in, ${snapshot.usage.outputTokens} out`;
  if (snapshot.status === 'completed') {
    return `\nAnswer (${snapshot.stopReason ?? 'final_answer'}, ${usage}):\n${snapshot.output ?? '(no text)'}\n`;
  }
  if (snapshot.status === 'failed') return `\nRun failed: ${snapshot.error ?? 'unknown error'}\n`;
  return `\nRun ${snapshot.status}.\n`;
}

/** Reads a flag as a positive integer, or fails with a usage error. */
export function readPositiveInteger(flag: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw usageError(`${flag} must be a positive integer, got '${text}'`);
  return value;
}
