#!/usr/bin/env node
import { isIP } from 'node:net';
import type { TelemetryOptions } from '@temporalio/worker';
import { logLevelNamed, unknownLogLevelMessage } from '../tool/tool-context.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import type { CommandName } from './command-summaries.js';
import { exitCodes } from './exit-codes.js';
import { errorMessage } from '../shared/error-message.js';

/** Each command's module, imported only when that command runs: the top-level help loads none of them. */
const commandLoaders: Record<CommandName, () => Promise<Command>> = {
  dev: async () => (await import('./dev-command.js')).devCommand,
  run: async () => (await import('./run-command.js')).runCommand,
  approve: async () => (await import('./decision-command.js')).approveCommand,
  reject: async () => (await import('./decision-command.js')).rejectCommand,
  approvals: async () => (await import('./approvals-command.js')).approvalsCommand,
  runs: async () => (await import('./runs-command.js')).runsCommand,
  inspect: async () => (await import('./inspect-command.js')).inspectCommand,
  worker: async () => (await import('./worker-command.js')).workerCommand,
  serve: async () => (await import('./serve-command.js')).serveCommand,
  'codec-server': async () => (await import('./codec-server-command.js')).codecServerCommand,
  tools: async () => (await import('./tools-command.js')).toolsCommand,
};

/** Commands that run a worker, whose own log lines would drown the CLI's output. */
const workerCommands: ReadonlySet<string> = new Set<CommandName>(['dev', 'worker']);

function topLevelHelp(cli: string): string {
  const summaries = Object.entries(commandSummaries).map(([name, summary]) => `  ${name.padEnd(12)} ${summary}`);
  return `relay-e: durable tool-calling agents on Temporal

Usage: ${cli} <command> [options]

Commands:
${summaries.join('\n')}

Run '${cli} <command> --help' for a command's options. The commands that talk to Temporal take --address,
--namespace, --profile, --task-queue, --tenant and --json (worker and serve: all but --tenant; codec-server:
--address, --namespace, --profile and --json; tools asks no server).

Exit codes:
  0    ok (for run: the run completed)
  1    the run failed or was cancelled, or an unexpected error
  2    usage error (unknown command or flag, missing argument, invalid JSON) or set-up problem (a config that
       cannot be loaded, no Temporal CLI for dev to start a server with, an MCP server's missing secret or
       refused credentials, TLS on for a Temporal server without it or off for one with it, an address a
       server cannot listen on, a payload store that refused the worker's user)
  3    not found (no such run)
  4    decision refused (no such pending call, already decided, edited input fails the schema, an approver
       the tool does not name)
  5    Temporal unreachable or without the namespace, the dev server could not start, an MCP server could not
       be started or reached, a payload store's database the worker cannot reach, or no worker has recovered
       the run yet
  130  interrupted (Ctrl-C while following a run; the run goes on)
`;
}

/** Runs `relay-e` with these arguments and resolves to the process exit code. */
export async function runCli(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    process.stdout.write(topLevelHelp(cliInvocation()));
    return name === undefined ? exitCodes.usage : exitCodes.ok;
  }
  if (!isCommandName(name)) {
    process.stderr.write(`relay-e: unknown command '${name}'. See '${cliInvocation()} --help'.\n`);
    return exitCodes.usage;
  }
  const command = await commandLoaders[name]();
  if (asksForHelp(rest)) {
    process.stdout.write(`${command.help}\n`);
    return exitCodes.ok;
  }
  const logLevel = process.env['RELAY_E_LOG_LEVEL'];
  if (logLevel !== undefined && logLevel.trim() !== '' && logLevelNamed(logLevel) === undefined) {
    process.stderr.write(`relay-e ${name}: ${unknownLogLevelMessage(logLevel)}\n`);
    return exitCodes.usage;
  }
  if (workerCommands.has(name)) {
    const failed = await installWorkerRuntime(name);
    if (failed !== undefined) return failed;
  }
  try {
    return await command.run(rest);
  } catch (error) {
    const message = errorMessage(error);
    process.stderr.write(`relay-e ${name}: ${message}\n`);
    const { toExitCode } = await import('./cli-error.js');
    return toExitCode(error);
  }
}

/**
 * The lowest level the worker's own log (the Temporal SDK's: workers starting and stopping, runs' tasks) shows: `info`
 * or `debug` when RELAY_E_LOG_LEVEL names one, else warnings, which a higher level never hides.
 */
function workerLogLevel(): 'DEBUG' | 'INFO' | 'WARN' {
  const level = logLevelNamed(process.env['RELAY_E_LOG_LEVEL'] ?? '');
  return level === 'debug' ? 'DEBUG' : level === 'info' ? 'INFO' : 'WARN';
}

/**
 * Installs the worker runtime for a command that runs a worker: one-line warnings, no SDK shutdown signals, and the
 * Prometheus metrics RELAY_E_METRICS_ADDRESS asks for. Returns the exit code when that address cannot be served.
 */
async function installWorkerRuntime(name: string): Promise<number | undefined> {
  const { DefaultLogger, Runtime } = await import('@temporalio/worker');
  const { writeOneLineLog } = await import('./one-line-log.js');
  const stacks = process.env['RELAY_E_LOG_STACKS'] === '1';
  const write = (line: string) => process.stderr.write(line);
  const metricsAddress = process.env['RELAY_E_METRICS_ADDRESS'] || undefined;
  if (metricsAddress !== undefined && !isIpAndPort(metricsAddress)) {
    process.stderr.write(
      `relay-e ${name}: RELAY_E_METRICS_ADDRESS '${metricsAddress}' must be an IP address and a port, as 0.0.0.0:9464 ` +
        'or [::]:9464\n',
    );
    return exitCodes.usage;
  }
  try {
    // Warnings and errors always show, each on one line. No shutdown signals: the SDK's own would stop the worker on
    // the first Ctrl-C, before dev closes its API, and on SIGQUIT or SIGUSR2 too; the command's handler stops it.
    Runtime.install({
      logger: new DefaultLogger(workerLogLevel(), (entry) => writeOneLineLog(entry, { stacks, write })),
      shutdownSignals: [],
      ...(metricsAddress ? { telemetryOptions: prometheusMetrics(metricsAddress) } : {}),
    });
  } catch (error) {
    // The SDK binds the metrics address as it installs the runtime: a port in use fails here.
    const message = errorMessage(error);
    process.stderr.write(
      `relay-e ${name}: cannot serve metrics on RELAY_E_METRICS_ADDRESS=${metricsAddress}: ${message}\n`,
    );
    return exitCodes.usage;
  }
  return undefined;
}

/**
 * The SDK's metrics (Core's: workflow and activity task counts, failures, latencies, poll and slot figures) served
 * for Prometheus at `http://<address>/metrics`, under the names Temporal's SDK metrics reference gives.
 */
function prometheusMetrics(bindAddress: string): TelemetryOptions {
  return { metrics: { prometheus: { bindAddress } } };
}

/** `0.0.0.0:9464` or `[::]:9464`: the SDK binds a socket address, so a host name is refused here, not deep in Core. */
function isIpAndPort(address: string): boolean {
  const match = /^(?:\[([^\]]+)\]|([^:]+)):(\d{1,5})$/.exec(address);
  const host = match?.[1] ?? match?.[2];
  const port = Number(match?.[3]);
  return host !== undefined && isIP(host) === (match?.[1] === undefined ? 4 : 6) && port >= 0 && port <= 65_535;
}

function isCommandName(name: string): name is CommandName {
  return Object.hasOwn(commandLoaders, name);
}

/** True when `--help` or `-h` comes before any `--` (after which every argument is the command's own). */
function asksForHelp(argv: readonly string[]): boolean {
  const end = argv.indexOf('--');
  return (end < 0 ? argv : argv.slice(0, end)).some((arg) => arg === '--help' || arg === '-h');
}

process.exitCode = await runCli(process.argv.slice(2));
