import { RelayError } from '../shared/errors.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { createFilePayloadStore } from './file-payload-store.js';
import { createMemoryPayloadStore } from './memory-payload-store.js';
import type { PayloadStore } from './payload-store.js';
import { createPostgresPayloadStore } from './postgres-payload-store.js';

/** Which payload store to use, as plain data (a config file or environment can hold it). */
export type PayloadStoreConfig = (
  | { kind: 'memory'; maxBytes?: number }
  | { kind: 'file'; directory: string }
  | { kind: 'postgres'; connectionString: string; tableName?: string; connectTimeoutMs?: number }
) & {
  /** Keys to encrypt payloads with, the same as the payload codec's. */
  encryption?: EncryptionOptions;
  /**
   * How long a payload outlives the last run that used it, in milliseconds.
   * @default defaultPayloadRetentionMs (7 days)
   */
  retentionMs?: number;
};

/** What a store reports on besides its answers, kept out of {@link PayloadStoreConfig}, which is plain data. */
export interface PayloadStoreReporting {
  /**
   * Where a PostgreSQL store reports a connection of its pool that broke while idle, and a file store a damaged run
   * file it skipped.
   * @default console
   */
  logger?: Pick<Console, 'warn'>;
}

/**
 * The payload store a config names: `memory` for tests and a single-process worker, `file` for the dev stack,
 * `postgres` for workers on several machines.
 */
export function createPayloadStore(config: PayloadStoreConfig, { logger }: PayloadStoreReporting = {}): PayloadStore {
  const reporting = logger ? { logger } : {};
  switch (config.kind) {
    case 'memory':
      return createMemoryPayloadStore(config);
    case 'file':
      return createFilePayloadStore({ ...config, ...reporting });
    case 'postgres':
      return createPostgresPayloadStore({ ...config, ...reporting });
    default:
      // A config file is loaded without type checking: a misspelt kind must not leave the worker without a store.
      throw new RelayError(
        'invalid_input',
        `Unknown payload store kind ${JSON.stringify((config as { kind?: unknown }).kind)}: expected 'memory', 'file' or 'postgres'`,
      );
  }
}
