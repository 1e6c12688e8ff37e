import { NativeConnection } from '@temporalio/worker';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
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

describe('the CLI worker’s payload janitor', () => {
  it('writes its lines as the SDK’s one-line log beside them does, with the time and the level', async () => {
    const written: string[] = [];
    const stdout = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
      written.push(String(chunk));
      return true;
    });
    const created = createCliPayloadStore(settings(), project, { defaultFolderShared: false });
    const payloads = withPayloadJanitor(created, connection, { namespace: kit.namespace, janitorIntervalMs: 50 });
    try {
      await payloads.store.put({ tenantId: 'default', runId: `run_${randomUUID()}` }, new TextEncoder().encode('x'));
      await vi.waitFor(() => expect(written.some((line) => line.includes('payload janitor'))).toBe(true), {
        timeout: 5_000,
      });
    } finally {
      stdout.mockRestore();
      await payloads.close();
    }

    expect(written.find((line) => line.includes('payload janitor'))).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z \[INFO\] Relay-E payload janitor: checked 1 unclosed runs, marked 1 closed/,
    );
  });
});
