import { NativeConnection } from '@temporalio/worker';
import type { TLSConfig } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { RelayClient } from '../client/relay-client.js';
import type { RelayClientOptions } from '../client/relay-client.js';
import { encryptionOptionsFromEnv } from '../security/encryption-keys.js';
import { rememberConnectionAddress } from '../worker/connection-address.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import type { RelayConfig } from '../config/define-config.js';
import { findTlsMismatch, TlsMismatchError } from '../dev/temporal-dev-server.js';
import type { ConnectionCredentials } from '../dev/temporal-dev-server.js';
import { errorMessage } from '../shared/error-message.js';
import { usageError } from './cli-error.js';
import { envSetting } from './env-setting.js';
import { loadProjectConfig } from './project-config.js';

/** Where the Temporal server is and which runs a command works on, from flags first, then the environment. */
export interface TemporalSettings {
  address: string;
  namespace: string;
  taskQueue: string;
  tenantId: string;
  /** Whether `--tenant` or RELAY_E_TENANT was given, so listing and decisions scope to it only then. */
  tenantGiven: boolean;
  apiKey?: string;
  tls?: TLSConfig | boolean;
  /** Payload encryption keys from RELAY_E_ENCRYPTION_KEYS / RELAY_E_ENCRYPTION_KEY_ID, for workers and clients alike. */
  encryption?: EncryptionOptions;
}

/** Flag values the settings are read from. */
export interface TemporalFlags {
  address?: string | undefined;
  namespace?: string | undefined;
  profile?: string | undefined;
  'task-queue'?: string | undefined;
  tenant?: string | undefined;
}

/** What the project's config file adds to the settings; flags and the environment win over it. */
export type ConfigSettings = Pick<RelayConfig, 'taskQueue' | 'encryption'>;

/**
 * Reads the connection settings the way Temporal's own tools do (`@temporalio/envconfig`: the profile in the Temporal
 * config file, then `TEMPORAL_ADDRESS`, `TEMPORAL_NAMESPACE`, `TEMPORAL_API_KEY`, `TEMPORAL_TLS*`), with flags
 * winning; certificate files are read here, so a wrong path fails before connecting.
 */
export async function readTemporalSettings(
  flags: TemporalFlags,
  env: NodeJS.ProcessEnv = process.env,
  config: ConfigSettings = {},
): Promise<TemporalSettings> {
  const tenant = flags.tenant ?? envSetting(env, 'RELAY_E_TENANT');
  const temporal = loadTemporalProfile(flags.profile, env);
  const { apiKey, tls } = temporal.connectionOptions;
  const encryption = encryptionOptionsFromEnv(env) ?? config.encryption;
  return {
    address: flags.address ?? temporal.connectionOptions.address ?? 'localhost:7233',
    namespace: flags.namespace ?? temporal.namespace ?? 'default',
    taskQueue: flags['task-queue'] ?? envSetting(env, 'RELAY_E_TASK_QUEUE') ?? config.taskQueue ?? 'relay-e',
    tenantId: tenant ?? 'demo',
    tenantGiven: tenant !== undefined,
    ...(typeof apiKey === 'string' ? { apiKey } : {}),
    ...(tls !== undefined && tls !== null ? { tls } : {}),
    ...(encryption ? { encryption } : {}),
  };
}

/**
 * The settings of a command that starts, lists, inspects or decides runs: {@link readTemporalSettings} over the
 * project's config (`--config FILE`, else the one in the working folder), so it finds the workers' task queue and
 * reads their encrypted payloads without repeating either in flags.
 */
export async function readRunCommandSettings(
  flags: TemporalFlags & { config?: string | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Promise<TemporalSettings> {
  const project = await loadProjectConfig(flags.config);
  return readTemporalSettings(flags, env, project?.config);
}

function loadTemporalProfile(profile: string | undefined, env: NodeJS.ProcessEnv): ClientConnectConfig {
  // An empty variable is unset here as everywhere in the CLI: envconfig would take TEMPORAL_ADDRESS= as the address ''
  // and TEMPORAL_API_KEY= as a key, which turns TLS on.
  const overrideEnvVars = Object.fromEntries(
    Object.entries(env).filter((entry): entry is [string, string] => entry[1] !== undefined && entry[1] !== ''),
  );
  try {
    return loadClientConnectConfig({ ...(profile !== undefined ? { profile } : {}), overrideEnvVars });
  } catch (error) {
    throw usageError(`Temporal connection settings: ${errorMessage(error)}`);
  }
}

/** The TLS settings and API key the settings connect with. */
export function connectionCredentials(settings: TemporalSettings): ConnectionCredentials {
  return {
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
  };
}

/** Opens a RelayClient with these settings; a server whose TLS does not match theirs is named as such (exit 2). */
export async function connectRelayClient(
  settings: TemporalSettings,
  { callRetry }: Pick<RelayClientOptions, 'callRetry'> = {},
): Promise<RelayClient> {
  try {
    return await RelayClient.connect({
      ...(callRetry ? { callRetry } : {}),
      address: settings.address,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      ...connectionCredentials(settings),
      ...(settings.encryption ? { encryption: settings.encryption } : {}),
    });
  } catch (error) {
    throw await explainConnectFailure(error, settings);
  }
}

/**
 * How the HTTP API's client (`serve`, `dev`) retries a call Temporal did not answer: 6 attempts, about 3 seconds of
 * backoff, so a request fails with 503 `temporal_unavailable` and `Retry-After` while its caller still waits, instead
 * of after the SDK's 20 seconds, past many callers' and load balancers' timeouts.
 */
export const apiCallRetry = { maxAttempts: 6 } as const;

/**
 * Opens the native connection a worker needs with these settings; messages that name its server name this address,
 * and a server whose TLS does not match theirs is named as such (exit 2).
 */
export async function connectWorkerConnection(settings: TemporalSettings): Promise<NativeConnection> {
  try {
    const connection = await NativeConnection.connect({
      address: settings.address,
      ...connectionCredentials(settings),
    });
    return rememberConnectionAddress(connection, settings.address);
  } catch (error) {
    throw await explainConnectFailure(error, settings);
  }
}

async function explainConnectFailure(error: unknown, settings: TemporalSettings): Promise<unknown> {
  const mismatch = await findTlsMismatch(error, settings.address, connectionCredentials(settings));
  return mismatch ? explainTlsMismatch(mismatch) : error;
}

/**
 * A server whose TLS does not match the connection's, as a sentence naming the setting that changes it (a set-up
 * problem, exit 2); other errors pass through. TEMPORAL_TLS wins over what else turns TLS on (an API key, a
 * certificate, the profile's TLS settings).
 */
export function explainTlsMismatch(error: unknown): unknown {
  if (!(error instanceof TlsMismatchError)) return error;
  return usageError(
    error.clientTls
      ? `TLS is on for the connection to ${error.address}, but the server there does not speak TLS: turn it off ` +
          "with TEMPORAL_TLS=false (TLS is on with TEMPORAL_TLS, an API key, a TLS certificate or the profile's TLS " +
          'settings).'
      : `The server at ${error.address} speaks TLS, but the connection to it does not use TLS: turn it on with ` +
          'TEMPORAL_TLS=true (and TEMPORAL_TLS_SERVER_CA_CERT_PATH for a private CA), or pick a profile with TLS ' +
          'settings (--profile).',
  );
}
