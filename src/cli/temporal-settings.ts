import { NativeConnection } from '@temporalio/worker';
import type { TLSConfig } from '@temporalio/client';
import { loadClientConnectConfig } from '@temporalio/envconfig';
import type { ClientConnectConfig } from '@temporalio/envconfig';
import { RelayClient } from '../client/relay-client.js';
import { encryptionOptionsFromEnv } from '../security/encryption-keys.js';
import { rememberConnectionAddress } from '../worker/connection-address.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import type { RelayConfig } from '../config/define-config.js';
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
    throw usageError(`Temporal connection settings: ${error instanceof Error ? error.message : String(error)}`);
  }
}

/** Opens a RelayClient with these settings. */
export function connectRelayClient(settings: TemporalSettings): Promise<RelayClient> {
  return RelayClient.connect({
    address: settings.address,
    namespace: settings.namespace,
    taskQueue: settings.taskQueue,
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
    ...(settings.encryption ? { encryption: settings.encryption } : {}),
  });
}

/** Opens the native connection a worker needs with these settings; messages that name its server name this address. */
export async function connectWorkerConnection(settings: TemporalSettings): Promise<NativeConnection> {
  const connection = await NativeConnection.connect({
    address: settings.address,
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
  });
  return rememberConnectionAddress(connection, settings.address);
}
