#!/usr/bin/env node
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { exitCodes, toExitCode } from './cli-error.js';
import { codecServerCommand } from './codec-server-command.js';
import type { Command } from './command.js';
import { approveCommand, rejectCommand } from './decision-command.js';
import { devCommand } from './dev-command.js';
import { inspectCommand } from './inspect-command.js';
import { runCommand } from './run-command.js';
import { runsCommand } from './runs-command.js';
import { serveCommand } from './serve-command.js';
import { toolsCommand } from './tools-command.js';
import { workerCommand } from './worker-command.js';

const commands: readonly Command[] = [
  devCommand,
  runCommand,
  approveCommand,
  rejectCommand,
  runsCommand,
  inspectCommand,
  workerCommand,
  serveCommand,
  codecServerCommand,
  toolsCommand,
];

const help = `relay-e: durable tool-calling agents on Temporal

Usage: relay-e <command> [options]

Commands:
${commands.map((command) => `  ${command.name.padEnd(12)} ${command.summary}`).join('\n')}

Run 'relay-e <command> --help' for a command's options. Every command takes --address, --namespace,
--task-queue, --tenant and --json.

Exit codes:
  0    ok (for run: the run completed)
  1    the run failed or was cancelled, or an unexpected error
  2    usage error (unknown command or flag, missing argument, invalid JSON)
  3    not found (no such run)
  4    decision refused (no such pending call, already decided, edited input fails the schema)
  5    Temporal unreachable, the dev server could not start, or no worker has recovered the run yet
  130  interrupted (Ctrl-C while following a run; the run goes on)
`;

/** Runs `relay-e` with these arguments and resolves to the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(help);
    return name === undefined ? exitCodes.usage : exitCodes.ok;
  }
  const command = commands.find((candidate) => candidate.name === name);
  if (!command) {
    process.stderr.write(`relay-e: unknown command '${name}'. See 'relay-e --help'.\n`);
    return exitCodes.usage;
  }
  if (asksForHelp(rest)) {
    process.stdout.write(`${command.help}\n`);
    return exitCodes.ok;
  }
  if (command === devCommand || command === workerCommand) {
    // The worker's own log lines would drown the CLI's output; warnings and errors still show.
    Runtime.install({ logger: new DefaultLogger('WARN') });
  }
  try {
    return await command.run(rest);
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    process.stderr.write(`relay-e ${name}: ${message}\n`);
    return toExitCode(error);
  }
}

/** True when `--help` or `-h` comes before any `--` (after which every argument is the command's own). */
function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

process.exitCode = await runCli(process.argv.slice(2));
