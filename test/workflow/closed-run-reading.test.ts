import { randomBytes } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { EncryptionOptions } from '../../src/security/encryption-keys.js';
import {
  closedRunMemoKey,
  maxPlainClosedRunRecordBytes,
  readClosedRunMemo,
} from '../../src/shared/closed-run-record.js';
import { RelayError } from '../../src/shared/errors.js';
import { queriedEvents } from '../helpers/queried-events.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { snapshotQuery } from '../../workflows/messages.js';
import { rawRunRecord } from '../security/security-test-kit.js';

// Every read below happens after the run's only worker has stopped: a closed run answers from the record it left
// in its memo, not from a query some worker would have to answer.

const kit = useRelayTestKit();

const transferThenAnswer: ScriptedTurn[] = [
  { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
  { text: 'Transferred 5 from A to B.' },
];

async function startWorker(script: ScriptedTurn[], encryption?: EncryptionOptions): Promise<RunningWorker> {
  return kit.startWorker({
    tools: createTestTools(createLedger()),
    models: { scripted: scriptedModel(script) },
    ...(encryption ? { encryption } : {}),
  });
}

/** A client of its own on a task queue (a stopped worker's, in the reads below). */
async function connectClient(taskQueue: string, encryption?: EncryptionOptions): Promise<RelayClient> {
  return RelayClient.connect({
    connection: kit.env.connection,
    namespace: kit.namespace,
    taskQueue,
    ...(encryption ? { encryption } : {}),
  });
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/** Runs an approved transfer to its end, stops the worker, and returns the run id and its task queue. */
async function completedRunWithoutWorker(
  encryption?: EncryptionOptions,
): Promise<{ runId: string; taskQueue: string }> {
  const worker = await startWorker(transferThenAnswer, encryption);
  const client = await connectClient(worker.taskQueue, encryption);
  try {
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
    await client.approve(runId, 'call_1_0', { approver: 'alice', input: { from: 'A', to: 'B', amount: 4 } });
    await client.result(runId);
    return { runId, taskQueue: worker.taskQueue };
  } finally {
    await Promise.all([worker.stop(), client.close()]);
  }
}

/** Thirty additions, one a step, then the answer: a record well over the 4 KiB a memo keeps plain. */
const thirtyToolSteps = (call: { step: number }): ScriptedTurn =>
  call.step <= 30
    ? { toolCalls: [{ name: 'add', input: { a: call.step, b: 1_000 } }] }
    : { text: 'Added thirty times.' };

describe('reading a closed run with every worker stopped', () => {
  it('gives the same snapshot and event log as the open run did', async () => {
    const { runId, taskQueue } = await completedRunWithoutWorker();
    const client = await connectClient(taskQueue);
    try {
      const snapshot = await client.getRun(runId, { tenantId: 'acme' });
      expect(snapshot).toMatchObject({
        runId,
        tenantId: 'acme',
        status: 'completed',
        stopReason: 'final_answer',
        output: 'Transferred 5 from A to B.',
        pendingApprovals: [],
      });
      const events = await client.events(runId, { tenantId: 'acme' });
      expect(eventTypes(events)).toEqual([
        'run_started',
        'model_responded',
        'tool_call_validated',
        'tool_awaiting_approval',
        'tool_approved',
        'tool_succeeded',
        'model_responded',
        'run_completed',
      ]);
      expect(events.find((event) => event.type === 'tool_approved')).toMatchObject({
        approver: 'alice',
        edited: true,
        input: { from: 'A', to: 'B', amount: 4 },
      });
      expect(snapshot.lastEventSeq).toBe(events.at(-1)?.seq);
      expect(eventTypes(await client.events(runId, { after: 6 }))).toEqual(['model_responded', 'run_completed']);
    } finally {
      await client.close();
    }
  });

  it('follows a closed run to its end and refuses it to another tenant', async () => {
    const { runId, taskQueue } = await completedRunWithoutWorker();
    const client = await connectClient(taskQueue);
    try {
      const followed = [];
      for await (const event of client.watch(runId, { after: 5, tenantId: 'acme' })) followed.push(event.type);
      expect(followed).toEqual(['tool_succeeded', 'model_responded', 'run_completed']);
      const refused = await errorOf(client.events(runId, { tenantId: 'other' }));
      expect(RelayError.isInstance(refused) && refused.code).toBe('run_not_found');
      expect(RelayError.isInstance(await errorOf(client.getRun(runId, { tenantId: 'other' })))).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('serves a closed run over HTTP, its event stream included', async () => {
    const { runId, taskQueue } = await completedRunWithoutWorker();
    const client = await connectClient(taskQueue);
    const api = await startApiServer({ client, apiKeys: new Map([['key-acme-0123456789', { tenantId: 'acme' }]]) });
    const headers = { authorization: 'Bearer key-acme-0123456789' };
    try {
      const snapshot = await fetch(`${api.url}/v1/runs/${runId}`, { headers });
      expect(snapshot.status).toBe(200);
      expect(await snapshot.json()).toMatchObject({ status: 'completed' });
      const stream = await fetch(`${api.url}/v1/runs/${runId}/events`, {
        headers: { ...headers, 'last-event-id': '6' },
      });
      const sent = [...(await stream.text()).matchAll(/^event: (\w+)\ndata: .*\nid: (\d+)$/gm)];
      expect(sent.map(([, type, id]) => `${id} ${type}`)).toEqual(['7 model_responded', '8 run_completed']);
    } finally {
      await api.close();
      await client.close();
    }
  });

  it('reads an encrypted closed run and its tool catalog with the keys, and shows nothing of it without them', async () => {
    const encryption: EncryptionOptions = { keys: { k1: randomBytes(32).toString('base64') } };
    const { runId, taskQueue } = await completedRunWithoutWorker(encryption);
    const client = await connectClient(taskQueue, encryption);
    const keyless = await connectClient(taskQueue);
    try {
      expect(await client.getRun(runId)).toMatchObject({ status: 'completed', output: 'Transferred 5 from A to B.' });
      expect(eventTypes(await client.events(runId, { after: 7 }))).toEqual(['run_completed']);
      const catalog = await client.toolCatalog(runId);
      expect(catalog.find((tool) => tool.name === 'transfer_funds')?.inputSchema).toMatchObject({
        required: ['from', 'to', 'amount'],
      });
      expect(await rawRunRecord(kit.temporal, runId)).not.toContain('Transferred');
      // Without the keys the memo does not decode into a record, so the client falls back to asking a worker.
      expect(await errorOf(keyless.getRun(runId))).toBeInstanceOf(Error);
    } finally {
      await Promise.all([client.close(), keyless.close()]);
    }
  });

  it('reads a long run from its deflated record, equal to what the run itself held', async () => {
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(thirtyToolSteps) },
    });
    const { runId } = await worker.client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'add',
      maxSteps: 31,
    });
    await worker.client.result(runId);
    const handle = kit.temporal.workflow.getHandle(runId);
    // One query at a time: each query of a closed run is a task of its own, and while the SDK's core is busy with a run
    // it buffers one task of it and drops the rest, which then time out (temporalio/sdk-rust#578). Two at once
    // timed out once in CI here.
    const heldEvents = await queriedEvents(kit.temporal, runId);
    const heldSnapshot = await handle.query(snapshotQuery);
    await worker.stop();
    const memo = (await handle.describe()).memo?.[closedRunMemoKey];
    expect(memo).toBeInstanceOf(Uint8Array);
    const record = readClosedRunMemo(memo, runId);
    const plainBytes = Buffer.byteLength(JSON.stringify(record));
    expect(plainBytes).toBeGreaterThan(maxPlainClosedRunRecordBytes);
    expect((memo as Uint8Array).byteLength).toBeLessThan(plainBytes / 4);
    const client = await connectClient(worker.taskQueue);
    try {
      expect(heldEvents.filter((event) => event.type === 'tool_succeeded')).toHaveLength(30);
      expect(await client.events(runId, { tenantId: 'acme' })).toEqual(heldEvents);
      expect(await client.getRun(runId, { tenantId: 'acme' })).toEqual(heldSnapshot);
    } finally {
      await client.close();
    }
  });

  it('reads a long encrypted run from its deflated record with the keys, and shows nothing of it without them', async () => {
    const encryption: EncryptionOptions = { keys: { k1: randomBytes(32).toString('base64') } };
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(thirtyToolSteps) },
      encryption,
    });
    const client = await connectClient(worker.taskQueue, encryption);
    try {
      const { runId } = await client.startRun({
        tenantId: 'acme',
        model: 'scripted:test',
        prompt: 'add',
        maxSteps: 31,
      });
      await client.result(runId);
      await worker.stop();
      expect(await client.getRun(runId)).toMatchObject({ status: 'completed', output: 'Added thirty times.' });
      const events = eventTypes(await client.events(runId));
      expect(events.filter((type) => type === 'tool_succeeded')).toHaveLength(30);
      expect(events.slice(-3)).toEqual(['tool_succeeded', 'model_responded', 'run_completed']);
      expect(await rawRunRecord(kit.temporal, runId)).not.toContain('Added thirty times');
    } finally {
      await client.close();
    }
  });

  it('reads a run Temporal terminated as failed, with nothing waiting, where a replay would show it waiting', async () => {
    const worker = await startWorker(transferThenAnswer);
    const client = await connectClient(worker.taskQueue);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay B' });
      await waitForRun(client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
      await kit.temporal.workflow.getHandle(runId).terminate('an operator stopped it from the Temporal UI');

      const snapshot = await client.getRun(runId, { tenantId: 'acme' });

      expect(snapshot).toMatchObject({ status: 'failed', stopReason: 'error', pendingApprovals: [] });
      expect(snapshot.error).toContain('Temporal terminated the run');
      // The run's own log stops where it was: the wait, with no end recorded by the run.
      expect((await client.events(runId)).at(-1)).toMatchObject({ type: 'tool_awaiting_approval' });
    } finally {
      await Promise.all([worker.stop(), client.close()]);
    }
  });

  it('reads a cancelled run, with the cancellation as its last event', async () => {
    const worker = await startWorker(transferThenAnswer);
    const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(worker.client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
    await worker.client.cancel(runId);
    await waitForRun(worker.client, runId, (snapshot) => snapshot.status === 'cancelled');
    await worker.stop();
    const client = await connectClient(worker.taskQueue);
    try {
      expect(await client.getRun(runId)).toMatchObject({ status: 'cancelled', stopReason: 'cancelled' });
      expect(eventTypes(await client.events(runId)).slice(-2)).toEqual(['tool_cancelled', 'run_cancelled']);
    } finally {
      await client.close();
    }
  });

  it('reads a failed run, with the failure as its last event', async () => {
    // One turn only: the model has nothing to say at step 2, a non-retryable failure.
    const worker = await startWorker([{ toolCalls: [{ name: 'add', input: { a: 1, b: 2 } }] }]);
    const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'add' });
    await errorOf(worker.client.result(runId));
    await worker.stop();
    const client = await connectClient(worker.taskQueue);
    try {
      const snapshot = await client.getRun(runId);
      expect(snapshot).toMatchObject({ status: 'failed', stopReason: 'error' });
      expect(snapshot.error).toContain('Scripted model has 1 turn(s)');
      const events = await client.events(runId);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed' });
      expect(eventTypes(events)).toContain('tool_succeeded');
    } finally {
      await client.close();
    }
  });
});
