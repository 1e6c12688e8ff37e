import { Connection } from '@temporalio/client';
import type { ConnectionOptions } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { maxRecordedOutputBytes } from '../../src/shared/closed-run-record.js';
import { RelayError } from '../../src/shared/errors.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// `inspect` reads a run from one description: the calls below are counted on the wire, where reading the snapshot and
// then the events describes the run twice (and fetches a closed run's long output twice).

const kit = useRelayTestKit();

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** A client on `taskQueue` whose connection (closed by `close`) counts the calls it sends, by gRPC method name. */
async function countingClient(
  taskQueue: string,
): Promise<{ client: RelayClient; calls: Map<string, number>; close: () => Promise<void> }> {
  const calls = new Map<string, number>();
  const count: GrpcInterceptor = (options, nextCall) => {
    const method = options.method_definition.path.split('/').at(-1) ?? '';
    calls.set(method, (calls.get(method) ?? 0) + 1);
    // The next call passed on as it is: grpc-js takes any call here, though its type names the class it wraps one in.
    return nextCall(options) as ReturnType<GrpcInterceptor>;
  };
  const connection = await Connection.connect({ address: kit.address, interceptors: [count] });
  const client = await RelayClient.connect({ connection, namespace: kit.namespace, taskQueue });
  return { client, calls, close: () => connection.close() };
}

async function errorCodeOf(promise: Promise<unknown>): Promise<string | undefined> {
  return promise.then(
    () => undefined,
    (error: unknown) => (RelayError.isInstance(error) ? error.code : String(error)),
  );
}

describe('RelayClient.inspect', () => {
  it('reads an open run waiting for a human from one description, and refuses it to another tenant', async () => {
    const script: ScriptedTurn[] = [
      { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
      { text: 'Done.' },
    ];
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(script) },
    });
    const { client, calls, close } = await countingClient(worker.taskQueue);
    try {
      const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay B' });
      await waitForRun(worker.client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
      calls.clear();
      const { snapshot, events, handedOffNotices } = await client.inspect(runId, { tenantId: 'acme' });
      expect(snapshot).toMatchObject({ runId, tenantId: 'acme', status: 'awaiting_approval' });
      expect(snapshot.pendingApprovals.map((pending) => pending.toolCallId)).toEqual(['call_1_0']);
      expect(eventTypes(events)).toEqual([
        'run_started',
        'model_responded',
        'tool_call_validated',
        'tool_awaiting_approval',
      ]);
      expect(snapshot.lastEventSeq).toBe(events.at(-1)?.seq);
      expect(handedOffNotices).toEqual([]);
      // One description; one query for the snapshot and one for the only page of events.
      expect(calls.get('DescribeWorkflowExecution')).toBe(1);
      expect(calls.get('QueryWorkflow')).toBe(2);

      expect(await errorCodeOf(client.inspect(runId, { tenantId: 'other' }))).toBe('run_not_found');
      expect(await errorCodeOf(client.watch(runId, { tenantId: 'other' }).next())).toBe('run_not_found');
      const first = await client.watch(runId, { tenantId: 'acme' }).next();
      expect(first.value).toMatchObject({ seq: 1, type: 'run_started' });
    } finally {
      await Promise.all([worker.stop(), close()]);
    }
  });

  it("reads a closed run's snapshot and events from its record, a long output fetched once, without a worker", async () => {
    const answer = 'c'.repeat(maxRecordedOutputBytes + 1_000);
    const worker = await kit.startWorker({ tools: [], models: { scripted: scriptedModel(() => ({ text: answer })) } });
    const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'long' });
    await worker.client.result(runId);
    await worker.stop();
    const { client, calls, close } = await countingClient(worker.taskQueue);
    try {
      const { snapshot, events } = await client.inspect(runId, { tenantId: 'acme' });
      expect(snapshot).toMatchObject({ status: 'completed', output: answer, lastEventSeq: 3 });
      expect(eventTypes(events)).toEqual(['run_started', 'model_responded', 'run_completed']);
      expect(events.slice(1)).toMatchObject([{ text: answer }, { output: answer }]);
      // The output was left to the run's result: one read of the close event's history serves both.
      expect(calls.get('DescribeWorkflowExecution')).toBe(1);
      expect(calls.get('GetWorkflowExecutionHistory')).toBe(1);
      expect(calls.get('QueryWorkflow')).toBeUndefined();
    } finally {
      await close();
    }
  });
});
