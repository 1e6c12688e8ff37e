import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { bundleWorkflowCode, DefaultLogger, NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { findTemporalExecutable } from '../../src/dev/temporal-dev-server.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createWorker } from '../../src/worker/create-worker.js';
import {
  compileWorkflowSourceAsBuilt,
  relaySharedWorkflowModules,
  relayWorkflowsPath,
} from '../../src/worker/relay-workflows.js';
import { relayECliArgs } from '../helpers/relay-e-process.js';
import { readServerSentEvents } from '../http/http-test-kit.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const apiKey = `reset-test-key-${randomUUID()}`;

const here = path.dirname(fileURLToPath(import.meta.url));

/** Relay-E's workflows bundled with one memo update more on each signal (the interceptor beside determinism's). */
function divergingBundle() {
  return bundleWorkflowCode({
    logger: new DefaultLogger('WARN'),
    workflowsPath: relayWorkflowsPath(),
    preloadModules: relaySharedWorkflowModules(),
    webpackConfigHook: compileWorkflowSourceAsBuilt,
    workflowInterceptorModules: [path.join(here, '../fixtures/nondeterministic/extra-memo-on-signal-interceptor.ts')],
  });
}

/** Two transfers, each waiting for a human, then an answer. */
const turns = [
  { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
  { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'C', amount: 7 } }] },
  { text: 'paid' },
];

/**
 * The task whose commands the shipped code does not give, as an operator would find it by hand: the diverging memo
 * update is that task's first command, so its event follows the task's `WorkflowTaskCompleted`.
 */
async function divergedTaskCompleted(runId: string): Promise<number> {
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const diverged = (history.events ?? []).find(
    (event) => event.workflowPropertiesModifiedEventAttributes?.upsertedMemo?.fields?.['divergedFromShippedCode'],
  );
  if (!diverged) throw new Error(`No diverging memo update in ${runId}'s history`);
  return Number(diverged.eventId) - 1;
}

/** `relay-e inspect <runId>` as an operator runs it, against the test's server and task queue. */
function inspectWithCli(runId: string, taskQueue: string): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    const env = { ...process.env, TEMPORAL_ADDRESS: kit.address, RELAY_E_TASK_QUEUE: taskQueue };
    execFile(process.execPath, [...relayECliArgs, 'inspect', runId], { env }, (error, _stdout, stderr) =>
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr }),
    );
  });
}

describe('a run whose history its workers can no longer replay', () => {
  /**
   * The first worker runs a build that records one command more on each signal, so its history diverges from the
   * shipped code's at the task that took the first decision; the second, with the shipped code and no cache, fails
   * every task of the run with a nondeterminism error. The operator's recovery (docs/operations.md): reset the run to
   * the workflow task before the event the error names, with the Temporal CLI.
   */
  it('goes on after a reset to the task before the event the error names, doing again what came after', async () => {
    const taskQueue = uniqueTaskQueue('reset-after-nondeterminism');
    const ledger = createLedger();
    const options = { taskQueue, namespace: kit.namespace, tools: createTestTools(ledger) };
    const models = () => ({ scripted: scriptedModel(turns) });
    const connection = await NativeConnection.connect({ address: kit.address });
    const diverging = await createWorker({
      ...options,
      connection,
      models: models(),
      workflowBundle: await divergingBundle(),
    });
    const divergingRun = diverging.run();
    const client = await RelayClient.connect({ connection: kit.env.connection, namespace: kit.namespace, taskQueue });
    const { runId } = await client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'pay',
      approvalTimeout: '1h',
    });
    let shipped: Awaited<ReturnType<typeof kit.startWorker>> | undefined;
    try {
      await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_1_0'));
      await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
      await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_2_0'));
      diverging.shutdown();
      await divergingRun;

      shipped = await kit.startWorker({ ...options, models: models() });
      await client.signalDecision(runId, { toolCallId: 'call_2_0', decision: 'approve', approver: 'alice' });
      const failure = await expect
        .poll(() => client.workflowTaskFailure(runId), { timeout: 30_000, interval: 250 })
        .toBeDefined()
        .then(() => client.workflowTaskFailure(runId));
      expect(failure).toMatchObject({ nondeterministic: true, resetEventId: await divergedTaskCompleted(runId) });
      expect(failure?.message).toContain('TMPRL1100');
      expect(ledger.transfers).toHaveLength(1);

      // A decision sent by update now is refused at once, naming the reset; it is not recorded (no decision_ignored
      // for it after the reset, below).
      const refused = await client.approve(runId, 'call_2_0', { approver: 'bob' }).then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(refused).toMatchObject({ code: 'run_unavailable' });
      expect((refused as Error).message).toContain(`--event-id ${failure?.resetEventId}`);
      expect((refused as Error).message).toMatch(
        /\nThe decision was not recorded: decide again once the run answers\.$/,
      );

      // The API's read of the run says so too, to the run's own tenant.
      const api = await startApiServer({ client, apiKeys: new Map([[apiKey, { tenantId: 'acme' }]]) });
      try {
        const read = await fetch(`${api.url}/v1/runs/${runId}`, { headers: { authorization: `Bearer ${apiKey}` } });
        expect(read.status).toBe(503);
        const problem = (await read.json()) as { code?: string; detail?: string };
        expect(problem.code).toBe('run_unavailable');
        expect(problem.detail).toContain(`--event-id ${failure?.resetEventId}`);

        // Its event stream opens all the same and says the same.
        const stream = await fetch(`${api.url}/v1/runs/${runId}/events`, {
          headers: { authorization: `Bearer ${apiKey}` },
        });
        expect(stream.status).toBe(200);
        let told: unknown;
        for await (const message of readServerSentEvents(stream)) {
          if ('comment' in message || message.event !== 'run_unavailable') continue;
          told = JSON.parse(message.data);
          break;
        }
        expect(told).toMatchObject({ type: 'run_unavailable', problem: { detail: problem.detail } });
      } finally {
        await api.close();
      }

      // relay-e inspect names the failure and prints the reset; the operator runs it as printed.
      const inspected = await inspectWithCli(runId, taskQueue);
      expect(inspected, inspected.stderr).toMatchObject({ code: 5 });
      expect(inspected.stderr).toContain('its history no longer replays');
      const printed = /^\s+(temporal workflow reset .*)$/m.exec(inspected.stderr)?.[1] ?? '';
      expect(printed).toContain(`--event-id ${failure?.resetEventId}`);
      const temporalCli = await findTemporalExecutable();
      const resetArgs = [
        ...printed
          .replace(/ --reason .*$/, '')
          .split(' ')
          .slice(1),
        '--reason',
        'history no longer replays',
      ];
      await promisify(execFile)(temporalCli, [...resetArgs, '--address', kit.address, '--namespace', kit.namespace]);

      // The decision signalled after that point is applied again at once, before its call is asked again: ignored.
      await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_2_0'));
      const ignored = (await client.events(runId)).filter((event) => event.type === 'decision_ignored');
      expect(ignored).toMatchObject([{ toolCallId: 'call_2_0', code: 'approval_not_pending' }]);
      await client.signalDecision(runId, { toolCallId: 'call_2_0', decision: 'approve', approver: 'alice' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'paid' });

      // The first transfer, approved before that point, ran again after the reset, under the key it had.
      expect(ledger.transfers.map((transfer) => transfer.to)).toEqual(['B', 'B', 'C']);
      expect(ledger.transfers[1]?.idempotencyKey).toBe(ledger.transfers[0]?.idempotencyKey);
      expect(eventTypes(await client.events(runId))).toContain('run_completed');
    } finally {
      if (diverging.getState() === 'RUNNING') diverging.shutdown();
      await divergingRun.catch(() => undefined);
      await shipped?.stop();
      await connection.close();
    }
  }, 120_000);
});
