import { InterceptingCall } from '@grpc/grpc-js';
import type { Interceptor } from '@grpc/grpc-js';
import { Connection } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

/**
 * What a worker does to a query still waiting for a run it evicts as the run ends (the SDK's core replays only the
 * first of a run's buffered tasks): nobody answers it, and the server times it out. Here the first query this
 * connection sends ends, once `closed`, as the server's timeout does (its answer is dropped by the failed status).
 */
function firstQueryLeftUnanswered(closed: Promise<void>): Interceptor {
  let dropped = false;
  return (options, nextCall): InterceptingCall => {
    if (dropped || !options.method_definition.path.endsWith('/QueryWorkflow'))
      return nextCall(options) as InterceptingCall;
    dropped = true;
    return new InterceptingCall(nextCall(options), {
      start(metadata, listener, next) {
        next(metadata, {
          onReceiveStatus: (status, nextStatus) => {
            const details = 'query timed out before a worker could process it';
            void closed.then(() => nextStatus({ ...status, code: 4, details }));
          },
        });
      },
    });
  };
}

describe('a read of a running run whose query a worker leaves unanswered as the run closes', () => {
  it.each([
    { read: 'snapshot', queryEnds: 'as the server times it out' },
    { read: 'events', queryEnds: 'as the server times it out' },
    // The server holds such a query for about half a minute; the read does not wait for it.
    { read: 'snapshot', queryEnds: 'only after the read' },
    { read: 'events', queryEnds: 'only after the read' },
  ] as const)(
    'answers the $read from the closed run’s record, the query ending $queryEnds',
    async ({ read, queryEnds }) => {
      const turns = [
        { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
        { text: 'Paid.' },
      ];
      const running = await kit.startWorker({
        tools: createTestTools(createLedger()),
        models: { scripted: scriptedModel(turns) },
      });
      let closeRun = () => undefined as void;
      const closed = new Promise<void>((resolve) => (closeRun = resolve));
      const connection = await Connection.connect({
        address: kit.address,
        interceptors: [firstQueryLeftUnanswered(closed)],
      });
      try {
        const { client } = running;
        const reader = await RelayClient.connect({
          connection,
          namespace: kit.namespace,
          taskQueue: running.taskQueue,
        });
        const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
        await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');

        const reading = read === 'snapshot' ? reader.getRun(runId) : reader.events(runId);
        await client.approve(runId, 'call_1_0', { approver: 'alice' });
        await client.result(runId);
        if (queryEnds === 'as the server times it out') closeRun();

        const answer = await reading;
        if (read === 'snapshot') expect(answer).toMatchObject({ status: 'completed', output: 'Paid.' });
        else expect((answer as Array<{ type: string }>).at(-1)?.type).toBe('run_completed');
      } finally {
        closeRun();
        await connection.close();
        await running.stop();
      }
    },
  );
});
