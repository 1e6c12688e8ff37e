import { NativeConnection } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  createCliPayloadStore,
  defaultJanitorIntervalMs,
  defaultPayloadDirectory,
  withPayloadJanitor,
} from '../../src/cli/cli-payload-store.js';
import type { TemporalSettings } from '../../src/cli/temporal-settings.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';

// Which store a CLI worker keeps tool outputs in: only one every worker of the task queue reads. The janitor it
// starts connects over a real worker connection to the dev server.

const kit = useRelayTestKit();
let connection: NativeConnection;

beforeAll(async () => {
  connection = await NativeConnection.connect({ address: kit.address });
});

afterAll(async () => {
  await connection.close();
});

function settings(): TemporalSettings {
  return {
    address: kit.address,
    namespace: kit.namespace,
    taskQueue: 'cli-store',
    tenantId: 'default',
    tenantGiven: false,
  };
}

const project = {
  file: 'relay-e.config.ts',
  config: { tools: [], payloadStore: { kind: 'memory' as const } },
};

describe('the CLI worker’s payload store', () => {
  it.each([
    { command: 'relay-e worker, default folder', project: undefined, defaultFolderShared: false, shared: false },
    { command: 'relay-e dev, default folder', project: undefined, defaultFolderShared: true, shared: true },
    { command: 'relay-e worker, the config’s store', project, defaultFolderShared: false, shared: true },
  ])('$command: shared by every worker is $shared', async ({ project: config, defaultFolderShared, shared }) => {
    const created = createCliPayloadStore(settings(), config, { defaultFolderShared });
    const payloads = withPayloadJanitor(created, connection, {
      namespace: kit.namespace,
      janitorIntervalMs: defaultJanitorIntervalMs,
    });
    try {
      expect(payloads.sharedByEveryWorker).toBe(shared);
      expect(payloads.facts.store).toBe(config ? 'this process (memory)' : `files in ${defaultPayloadDirectory}`);
      expect(payloads.description).toContain('; janitor every 10 minutes, payloads kept 7 days after their runs close');
    } finally {
      await payloads.close();
    }
  });
});
