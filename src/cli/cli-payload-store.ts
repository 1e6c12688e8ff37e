import path from 'node:path';
import { Client } from '@temporalio/client';
import type { NativeConnection } from '@temporalio/worker';
import { createPayloadStore } from '../store/create-payload-store.js';
import type { PayloadStoreConfig } from '../store/create-payload-store.js';
import { startPayloadJanitor } from '../store/payload-janitor.js';
import type { PayloadStore } from '../store/payload-store.js';
import type { ProjectConfig } from './project-config.js';
import type { TemporalSettings } from './temporal-settings.js';

/**
 * Where `relay-e dev` and `relay-e worker` keep model-call contexts without a `payloadStore` in the project's
 * config: a folder beside the dev stack's runs, which every worker on this machine shares.
 */
export const defaultPayloadDirectory = path.join('.relay-e', 'payloads');

/** The store a CLI worker uses; `close` stops its janitor, once started, and closes it. */
export interface CliPayloadStore {
  readonly store: PayloadStore;
  /** What the store is, for the worker's ready line. */
  readonly description: string;
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
  const store = createPayloadStore(config);
  return {
    store,
    description: describeStore(config),
    // A store the config names is the deployment's choice, so taken as every worker's; the default folder is this
    // machine's, which only a single-machine stack can count on.
    sharedByEveryWorker: project?.config.payloadStore !== undefined || defaultFolderShared,
    close: () => store.close(),
  };
}

/**
 * `payloads` with the janitor that expires closed runs' payloads, started on the worker's own connection (it only
 * describes runs, so it needs no keys and no connection of its own); `close` stops both.
 */
export function withPayloadJanitor(
  payloads: CliPayloadStore,
  connection: NativeConnection,
  namespace: string,
): CliPayloadStore {
  const janitor = startPayloadJanitor({ store: payloads.store, client: new Client({ connection, namespace }) });
  return {
    ...payloads,
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

function describeStore(config: PayloadStoreConfig): string {
  if (config.kind === 'file') return `files in ${config.directory}`;
  if (config.kind === 'postgres') return 'PostgreSQL';
  return 'this process (memory)';
}
