import { randomBytes, randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import type { EncryptionOptions } from '../../src/security/encryption-keys.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createMemoryPayloadStore } from '../../src/store/memory-payload-store.js';
import { startPayloadJanitor } from '../../src/store/payload-janitor.js';
import type { PayloadScope } from '../../src/store/payload-store.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// The janitor against the real dev server: real runs, one closed and one open after a continue-as-new, described by a
// real client; only the payload store is in memory.

const kit = useRelayTestKit();

const scope = (runId: string): PayloadScope => ({ tenantId: 'acme', runId });
const text = (value: string) => new TextEncoder().encode(value);
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('payload janitor on a real Temporal server', () => {
  it('marks closed the run that completed and the run Temporal never knew, keeps the open one, and sweeps only theirs', async () => {
    const { client, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: {
        done: scriptedModel([{ text: 'Done.' }]),
        // Step 1 ends the first execution (continue-as-new after every step); step 2 waits for approval in the next.
        waiting: scriptedModel([
          { toolCalls: [{ name: 'add', input: { a: 1, b: 2 } }] },
          { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
        ]),
      },
    });
    const base = { tenantId: 'acme', prompt: 'go' } as const;
    const completed = await client.startRun({ ...base, model: 'done:test' });
    const waiting = await client.startRun({
      ...base,
      model: 'waiting:test',
      continueAsNewAfterSteps: 1,
      approvalTimeout: '1h',
    });
    const missingRunId = `run_${randomUUID()}`;
    try {
      await client.result(completed.runId);
      await waitForRun(client, waiting.runId, (run) => run.status === 'awaiting_approval');
      const waitingDescription = await kit.temporal.workflow.getHandle(waiting.runId).describe();
      expect(waitingDescription.runId, 'the open run continued as new').not.toBe(
        waitingDescription.raw.workflowExecutionInfo?.firstRunId,
      );

      const store = createMemoryPayloadStore();
      // Stored in this order so the janitor checks the missing run first, and a close at its "now" is in the past by
      // the time the second pass sweeps.
      const missingRef = await store.put(scope(missingRunId), text('context of a run Temporal never had'));
      const completedRef = await store.put(scope(completed.runId), text('context of a completed run'));
      const waitingRef = await store.put(scope(waiting.runId), text('context of a run waiting for approval'));
      await pause(5);
      const lines: string[] = [];
      const janitor = startPayloadJanitor({
        store,
        client: kit.temporal,
        retentionMs: 0,
        logger: { info: (line: string) => lines.push(line), warn: (line: string) => lines.push(`warn: ${line}`) },
      });

      try {
        const first = await janitor.runOnce();
        expect(first).toMatchObject({ checked: 3, markedClosed: 2, notFound: 1, failed: 0 });
        expect((await store.listUnclosedRuns({ limit: 10 })).map((run) => run.runId)).toEqual([waiting.runId]);
        await pause(5);
        const second = await janitor.runOnce();
        expect(second).toMatchObject({ checked: 1, markedClosed: 0, failed: 0 });

        expect(first.swept + second.swept).toBe(2);
        expect(new TextDecoder().decode(await store.get(scope(waiting.runId), waitingRef))).toBe(
          'context of a run waiting for approval',
        );
        for (const [runId, ref] of [
          [completed.runId, completedRef],
          [missingRunId, missingRef],
        ] as const) {
          await expect(store.get(scope(runId), ref)).rejects.toMatchObject({ code: 'payload_not_found' });
        }
        expect(lines[0]).toMatch(/^Relay-E payload janitor: checked 3 unclosed runs, marked 2 closed \(1 no longer/);
        expect(lines.filter((line) => line.startsWith('warn'))).toEqual([]);
      } finally {
        await janitor.stop();
      }
    } finally {
      await client.cancel(waiting.runId);
      await stop();
    }
  });

  it('marks nothing closed when its client names a namespace Temporal does not have, and warns', async () => {
    const store = createMemoryPayloadStore();
    const runId = `run_${randomUUID()}`;
    const ref = await store.put(scope(runId), text('context of a run in the namespace the janitor should read'));
    const misnamed = new Client({ connection: kit.temporal.connection, namespace: `no-such-${randomUUID()}` });
    const warnings: string[] = [];
    const janitor = startPayloadJanitor({
      store,
      client: misnamed,
      retentionMs: 0,
      logger: { info: () => undefined, warn: (line: string) => warnings.push(line) },
    });
    try {
      const pass = await janitor.runOnce();

      expect(pass).toMatchObject({ checked: 1, markedClosed: 0, notFound: 0, failed: 1, swept: 0 });
      expect(new TextDecoder().decode(await store.get(scope(runId), ref))).toMatch(/^context of a run/);
      expect(warnings).toEqual([
        expect.stringMatching(new RegExp(`first run '${runId}': .*Namespace no-such-\\S+ is not found`)),
      ]);
    } finally {
      await janitor.stop();
    }
  });

  it('reads a run whose memo is encrypted with a client that holds no keys, on a worker connection as relay-e worker runs it, and marks it closed', async () => {
    const encryption: EncryptionOptions = { keys: { k1: randomBytes(32).toString('base64') } };
    const { taskQueue, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { done: scriptedModel([{ text: 'Done.' }]) },
      encryption,
    });
    const client = await RelayClient.connect({
      connection: kit.env.connection,
      namespace: kit.namespace,
      taskQueue,
      encryption,
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', prompt: 'go', model: 'done:test' });
      await client.result(runId);
      const store = createMemoryPayloadStore();
      await store.put(scope(runId), text('context of an encrypted run'));
      const workerConnection = await NativeConnection.connect({ address: kit.address });
      const keyless = new Client({ connection: workerConnection, namespace: kit.namespace });
      const janitor = startPayloadJanitor({ store, client: keyless, logger: { info: () => {}, warn: () => {} } });

      try {
        expect(await janitor.runOnce()).toMatchObject({ checked: 1, markedClosed: 1, notFound: 0, failed: 0 });
        expect(await store.listUnclosedRuns({ limit: 10 })).toEqual([]);
      } finally {
        await janitor.stop();
        await workerConnection.close();
      }
    } finally {
      await Promise.all([client.close(), stop()]);
    }
  });
});
