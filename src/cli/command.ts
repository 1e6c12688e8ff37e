import { parseArgs } from 'node:util';
import type { ParseArgsOptionsConfig } from 'node:util';
import { errorMessage } from '../shared/error-message.js';
import { usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import { envSetting } from './env-setting.js';
import { configOption, configOptionHelp } from './project-config.js';

/** One `relay-e` subcommand. */
export interface Command {
  readonly name: string;
  /** One line for `relay-e --help`. */
  readonly summary: string;
  /** The full `relay-e <name> --help` text. */
  readonly help: string;
  /** Runs the command and resolves to its exit code. */
  run(argv: string[]): Promise<number>;
}

/**
 * The connection flags of `worker` and `serve`: no `--tenant`, since a worker serves every tenant and the API takes
 * each caller's tenant from its key, so the flag would be silently ignored.
 */
export const serverConnectionOptions = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  profile: { type: 'string' },
  'task-queue': { type: 'string' },
  json: { type: 'boolean' },
} as const satisfies ParseArgsOptionsConfig;

/** {@link serverConnectionOptions} with `--tenant`, for the commands that work under a tenant. */
export const connectionOptions = {
  ...serverConnectionOptions,
  tenant: { type: 'string' },
} as const satisfies ParseArgsOptionsConfig;

/**
 * {@link connectionOptions} with `--config`, for the commands that start, list, inspect or decide runs: the project's
 * config gives them its task queue and encryption keys, as it gives the workers.
 */
export const runConnectionOptions = { ...connectionOptions, ...configOption } as const satisfies ParseArgsOptionsConfig;

const configLines = `${configOptionHelp}
                         (its taskQueue and encryption keys; flags and the environment win over it)`;

function connectionHelp(tenantLine: string | undefined, withConfig = false): string {
  const tenant = tenantLine === undefined ? '' : `\n  --tenant ID            ${tenantLine}`;
  const config = withConfig ? `\n${configLines}` : '';
  return `Connection:
  --address HOST:PORT    Temporal frontend (env TEMPORAL_ADDRESS, default localhost:7233)
  --namespace NAME       Temporal namespace (env TEMPORAL_NAMESPACE, default default)
  --profile NAME         profile of the Temporal config file (env TEMPORAL_PROFILE, file TEMPORAL_CONFIG_FILE)
  --task-queue NAME      task queue of the Relay-E workers (env RELAY_E_TASK_QUEUE, default relay-e)${tenant}${config}
  --json                 machine-readable output, no spinner
  -h, --help             this help
  Temporal Cloud: TEMPORAL_API_KEY, or mTLS with TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH;
  a profile's address, namespace, API key and TLS settings (@temporalio/envconfig) apply, and flags win over them.`;
}

/** The help lines of {@link serverConnectionOptions}. */
export const serverConnectionOptionsHelp = connectionHelp(undefined);

/** The help lines of {@link connectionOptions} for commands that start runs under a tenant. */
export const connectionOptionsHelp = connectionHelp('tenant of the runs (env RELAY_E_TENANT, default demo)');

/** The help lines of {@link runConnectionOptions} for commands that start runs or list their approvals. */
export const runConnectionOptionsHelp = connectionHelp('tenant of the runs (env RELAY_E_TENANT, default demo)', true);

/** The help lines of {@link runConnectionOptions} for commands that read or decide runs, where a tenant only narrows. */
export const scopedConnectionOptionsHelp = connectionHelp(
  'only runs of this tenant (env RELAY_E_TENANT; default: runs of every tenant)',
  true,
);

/** {@link parseCommandArgs} for a command that takes flags only: an argument left over is a usage error too. */
export function parseCommandFlags<T extends ParseArgsOptionsConfig>(command: string, argv: string[], options: T) {
  const parsed = parseCommandArgs(command, argv, options);
  const [extra] = parsed.positionals;
  if (extra !== undefined)
    throw usageError(`Unexpected argument '${extra}'. See '${cliInvocation()} ${command} --help'.`);
  return parsed;
}

/** The API's bind address: the flag, else `RELAY_E_HOST` (see envSetting), else loopback. */
export function apiHost(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): string {
  return flag ?? envSetting(env, 'RELAY_E_HOST') ?? '127.0.0.1';
}

/** Parses a command's argv strictly; a bad flag is a usage error that names the command's help. */
export function parseCommandArgs<T extends ParseArgsOptionsConfig>(command: string, argv: string[], options: T) {
  try {
    return parseArgs({ args: argv, options, allowPositionals: true, strict: true });
  } catch (error) {
    throw usageError(`${errorMessage(error)}\nSee '${cliInvocation()} ${command} --help'.`);
  }
}

/** Parses a flag's JSON value; invalid JSON is a usage error. */
export function parseJsonFlag(flag: string, text: string): unknown {
  try {
    return JSON.parse(text);
  } catch (error) {
    throw usageError(`${flag} is not valid JSON: ${errorMessage(error)}`);
  }
}
