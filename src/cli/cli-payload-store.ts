import path from 'node:path';
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { createPayloadStore } from '../store/create-payload-store.js';
import type { PayloadStoreConfig } from '../store/create-payload-store.js';
import { toEncryptionKeyRing } from '../security/encryption-keys.js';
import { startPayloadJanitor } from '../store/payload-janitor.js';
import { defaultPayloadRetentionMs } from '../store/payload-retention.js';
import type { PayloadStore } from '../store/payload-store.js';
import { isPayloadStoreUnreachable } from '../store/store-unreachable.js';
import { errorMessage } from '../shared/error-message.js';
import { CliError, exitCodes } from './cli-error.js';
import { cliLineLogger } from './one-line-log.js';
import type { ProjectConfig } from './project-config.js';
import type { TemporalSettings } from './temporal-settings.js';

/**
 * Where `relay-e dev` and `relay-e worker` keep model-call contexts without a `payloadStore` in the project's
 * config: a folder beside the dev stack's runs, which every worker on this machine shares.
 */
export const defaultPayloadDirectory = path.join('.relay-e', 'payloads');

/** How often the CLI's janitor marks closed runs and sweeps unless told otherwise: the janitor's own default. */
export const defaultJanitorIntervalMs = 10 * 60 * 1000;

/** The store a CLI worker uses; `close` stops its janitor, once started, and closes it. */
export interface CliPayloadStore {
  readonly store: PayloadStore;
  /**
   * What the store is, whether it encrypts and with which current key, and what its janitor does once started, for
   * the worker's ready line; without a secret (a connection string's password).
   */
  readonly description: string;
  /** The same, as data for the ready line's JSON. */
  readonly facts: PayloadStoreFacts;
  /** Whether every worker of the task queue reads this store, so tools may keep their large outputs in it. */
  readonly sharedByEveryWorker: boolean;
  close(): Promise<void>;
}

/**
 * Creates the project's payload store (or the default folder), encrypted with the settings' keys like every payload
 * unless the store's config names its own. Nothing connects yet, so a store config it refuses fails before the
 * worker connects.
 */
export function createCliPayloadStore(
  settings: TemporalSettings,
  project: ProjectConfig | undefined,
  { defaultFolderShared }: { defaultFolderShared: boolean },
): CliPayloadStore {
  const config = projectPayloadStoreConfig(settings, project);
  const store = createPayloadStore(config, { logger: cliLineLogger() });
  const facts = payloadStoreFacts(config);
  return {
    store,
    description: describePayloadStore(facts),
    facts,
    // A store the config names is the deployment's choice, so taken as every worker's; the default folder is this
    // machine's, which only a single-machine stack can count on.
    sharedByEveryWorker: project?.config.payloadStore !== undefined || defaultFolderShared,
    close: () => store.close(),
  };
}

/**
 * `payloads` with the janitor that expires closed runs' payloads, passing every `janitorIntervalMs`, started on the
 * worker's own connection (it only describes runs, so it needs no keys and no connection of its own); `close` stops
 * both. Without an interval, `payloads` as they are: another worker's janitor serves the store.
 */
export function withPayloadJanitor(
  payloads: CliPayloadStore,
  connection: NativeConnection,
  { namespace, janitorIntervalMs }: { namespace: string; janitorIntervalMs: number | undefined },
): CliPayloadStore {
  if (janitorIntervalMs === undefined) return payloads;
  const client = new Client({ connection, namespace });
  const janitor = startPayloadJanitor({
    store: payloads.store,
    client,
    intervalMs: janitorIntervalMs,
    logger: cliLineLogger(),
  });
  const facts = { ...payloads.facts, janitorIntervalMs };
  return {
    ...payloads,
    description: describePayloadStore(facts),
    facts,
    async close() {
      await janitor.stop();
      await payloads.close();
    },
  };
}

/**
 * The project's payload store config (or the default folder's), encrypted with the settings' keys like every payload
 * unless the store's config names its own: what the workers open, and what `relay-e serve` reads stored payloads from.
 */
export function projectPayloadStoreConfig(
  settings: TemporalSettings,
  project: ProjectConfig | undefined,
): PayloadStoreConfig {
  const config = project?.config.payloadStore ?? { kind: 'file', directory: defaultPayloadDirectory };
  return { ...(settings.encryption ? { encryption: settings.encryption } : {}), ...config };
}

/**
 * Makes sure the store works before the worker connects (it connects and makes its tables or folder, as its first call
 * would), closing it when it does not: a store that refuses the password, cannot be reached or lacks a privilege would
 * otherwise fail every model call, after the worker said it was ready. The refusal says which store and why: exit 5
 * when it cannot be reached (it may answer later), 2 when it refused (set-up to fix).
 */
export async function prepareCliPayloadStore(payloads: CliPayloadStore): Promise<void> {
  try {
    await payloads.store.prepare?.();
  } catch (error) {
    await payloads.close().catch(() => undefined); // the refusal below is the news; the store was never used
    const exitCode = isPayloadStoreUnreachable(error) ? exitCodes.unavailable : exitCodes.usage;
    throw new CliError(
      exitCode,
      `The payload store (${payloads.facts.store}) cannot be used: ${errorMessage(error)}` +
        (isMissingPrivilege(error) ? `. ${privilegesHint}` : ''),
    );
  }
}

const privilegesHint =
  "Grant the user CREATE on the schema, or make the tables ahead and grant it SELECT, INSERT, UPDATE and DELETE on them (docs/configuration.md, 'Payload store')";

/** PostgreSQL's insufficient_privilege, as creating the tables without the right to create in the schema fails. */
function isMissingPrivilege(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === '42501';
}

/** What the worker's ready line says of its payload store. */
export interface PayloadStoreFacts {
  /** Which store: `PostgreSQL relay@db.internal:5432/relay (table relay_payloads)`, `files in .relay-e/payloads`. */
  readonly store: string;
  /** The id of the key payloads are encrypted with, or undefined when they are kept in the clear. */
  readonly currentKeyId: string | undefined;
  /** How long a payload outlives the last run that used it. */
  readonly retentionMs: number;
  /** How often the janitor passes, once started. */
  readonly janitorIntervalMs?: number;
}

function payloadStoreFacts(config: PayloadStoreConfig): PayloadStoreFacts {
  return {
    store: describeStore(config),
    currentKeyId: config.encryption ? toEncryptionKeyRing(config.encryption).currentKeyId : undefined,
    retentionMs: config.retentionMs ?? defaultPayloadRetentionMs,
  };
}

/** The ready line's words for the store: `PostgreSQL … (table …), encrypted (current key k2); janitor every …`. */
export function describePayloadStore(facts: PayloadStoreFacts): string {
  const encryption =
    facts.currentKeyId === undefined ? 'not encrypted' : `encrypted (current key ${facts.currentKeyId})`;
  const janitor =
    facts.janitorIntervalMs === undefined
      ? 'no janitor'
      : `janitor every ${describeMs(facts.janitorIntervalMs)}, payloads kept ${describeMs(facts.retentionMs)} after their runs close`;
  return `${facts.store}, ${encryption}; ${janitor}`;
}

function describeStore(config: PayloadStoreConfig): string {
  if (config.kind === 'file') return `files in ${config.directory}`;
  if (config.kind === 'postgres') {
    return `PostgreSQL ${describeDatabase(config.connectionString)} (table ${config.tableName ?? 'relay_payloads'})`;
  }
  return 'this process (memory)';
}

/** Where a connection string points, without its password: `user@host:port/database`, from a URL or key=value pairs. */
function describeDatabase(connectionString: string): string {
  if (!/^postgres(ql)?:/.test(connectionString)) {
    const pairs = new Map(
      [...connectionString.matchAll(/(\w+)\s*=\s*('(?:[^'\\]|\\.)*'|\S*)/g)].map(([, key, value]) => [
        key,
        value?.replace(/^'|'$/g, ''),
      ]),
    );
    return describeParts(pairs.get('user'), pairs.get('host'), pairs.get('port'), pairs.get('dbname'));
  }
  let url: URL;
  try {
    url = new URL(connectionString);
  } catch {
    // Never echoed: a string that is no URL may still hold the password where the URL's would be.
    return '(a connection string that is not a URL)';
  }
  return describeParts(decodeURIComponent(url.username), url.hostname, url.port, url.pathname.slice(1));
}

function describeParts(...[user, host, port, database]: Array<string | undefined>): string {
  return `${user ? `${user}@` : ''}${host || 'localhost'}${port ? `:${port}` : ''}${database ? `/${database}` : ''}`;
}

/** `10 minutes`, `7 days`: the largest unit that divides the duration, else milliseconds. */
/** `ms` in words: `10 minutes`, `1 hour`, `1500 ms`. */
export function describeMs(ms: number): string {
  const units: Array<[string, number]> = [
    ['day', 86_400_000],
    ['hour', 3_600_000],
    ['minute', 60_000],
    ['second', 1000],
  ];
  for (const [unit, size] of units) {
    if (ms >= size && ms % size === 0) return `${ms / size} ${unit}${ms === size ? '' : 's'}`;
  }
  return `${ms} ms`;
}
