import { readFile } from 'node:fs/promises';
import { NativeConnection } from '@temporalio/worker';
import type { TLSConfig } from '@temporalio/client';
import { RelayClient } from '../client/relay-client.js';
import { encryptionOptionsFromEnv } from '../security/encryption-keys.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { usageError } from './cli-error.js';

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
  'task-queue'?: string | undefined;
  tenant?: string | undefined;
}

/** Reads the connection settings; mTLS certificate files are read here so a wrong path fails before connecting. */
export async function readTemporalSettings(
  flags: TemporalFlags,
  env: NodeJS.ProcessEnv = process.env,
): Promise<TemporalSettings> {
  const tenant = flags.tenant ?? env['RELAY_E_TENANT'];
  const apiKey = env['TEMPORAL_API_KEY'];
  const tls = await readTls(env);
  const encryption = encryptionOptionsFromEnv(env);
  return {
    address: flags.address ?? env['TEMPORAL_ADDRESS'] ?? 'localhost:7233',
    namespace: flags.namespace ?? env['TEMPORAL_NAMESPACE'] ?? 'default',
    taskQueue: flags['task-queue'] ?? env['RELAY_E_TASK_QUEUE'] ?? 'relay-e',
    tenantId: tenant ?? 'demo',
    tenantGiven: tenant !== undefined,
    ...(apiKey ? { apiKey } : {}),
    ...(tls !== undefined ? { tls } : apiKey ? { tls: true } : {}),
    ...(encryption ? { encryption } : {}),
  };
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

/** Opens the native connection a worker needs with these settings. */
export function connectWorkerConnection(settings: TemporalSettings): Promise<NativeConnection> {
  return NativeConnection.connect({
    address: settings.address,
    ...(settings.apiKey !== undefined ? { apiKey: settings.apiKey } : {}),
    ...(settings.tls !== undefined ? { tls: settings.tls } : {}),
  });
}

async function readTls(env: NodeJS.ProcessEnv): Promise<TLSConfig | undefined> {
  const certPath = env['TEMPORAL_TLS_CLIENT_CERT_PATH'];
  const keyPath = env['TEMPORAL_TLS_CLIENT_KEY_PATH'];
  if (!certPath && !keyPath) return undefined;
  if (!certPath || !keyPath) {
    throw usageError('mTLS needs both TEMPORAL_TLS_CLIENT_CERT_PATH and TEMPORAL_TLS_CLIENT_KEY_PATH');
  }
  const caPath = env['TEMPORAL_TLS_SERVER_CA_CERT_PATH'];
  const [crt, key, ca] = await Promise.all([
    readFile(certPath),
    readFile(keyPath),
    caPath ? readFile(caPath) : Promise.resolve(undefined),
  ]);
  return { clientCertPair: { crt, key }, ...(ca ? { serverRootCACertificate: ca } : {}) };
}
