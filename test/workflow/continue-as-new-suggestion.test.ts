import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { relayWorkflowBundle } from '../../src/testing/relay-workflow-bundle.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { eventPageQuery } from '../../workflows/messages.js';
import { latch } from '../helpers/latch.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { useDevServerSuggestingFrom } from '../helpers/suggesting-dev-server.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', model: 'scripted:test', prompt: 'add' } as const;

/**
 * A model whose first answer (one `add` call) waits for `held`, then answers: the run continues as new after that
 * step when Temporal suggests it, and otherwise its second step ends it.
 */
function heldModel(held: Promise<void>, reached: () => void) {
  return scriptedModel(async (request): Promise<ScriptedTurn> => {
    if (request.step > 1) return { text: 'done' };
    reached();
    await held;
    return { toolCalls: [{ id: 'call_1', name: 'add', input: { a: 1, b: 2 } }] };
  });
}

/** How many events a run's history holds while its first model call runs, read from a run on the shared server. */
async function eventsWhileFirstModelCallRuns(): Promise<number> {
  const hold = latch();
  const worker = await kit.startWorker({
    tools: createTestTools(createLedger()),
    models: { scripted: heldModel(hold.released, hold.reached) },
  });
  try {
    const { runId } = await worker.client.startRun(base);
    await hold.started;
    const { historyLength } = await kit.temporal.workflow.getHandle(runId).describe();
    hold.release();
    await worker.client.result(runId);
    return historyLength;
  } finally {
    await worker.stop();
  }
}

/**
 * Which workflow task of an execution first carried Temporal's suggestion to continue as new, and which delivered its
 * first model answer (the first to start after that activity completed), counted from 0.
 */
async function suggestionTasks(handle: WorkflowHandle): Promise<{ firstSuggested: number; firstAnswer: number }> {
  const history = await handle.fetchHistory();
  const found = { firstSuggested: -1, firstAnswer: -1 };
  let tasks = 0;
  const modelCalls = new Set<string>();
  let answered = false;
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') {
      modelCalls.add(String(event.eventId));
    }
    const completed = event.activityTaskCompletedEventAttributes;
    answered ||= completed !== undefined && completed !== null && modelCalls.has(String(completed.scheduledEventId));
    const started = event.workflowTaskStartedEventAttributes;
    if (!started) continue;
    if (started.suggestContinueAsNew && found.firstSuggested < 0) found.firstSuggested = tasks;
    if (answered && found.firstAnswer < 0) found.firstAnswer = tasks;
    tasks += 1;
  }
  return found;
}

// Temporal suggests continuing as new from this many events: the task that delivers the first model answer is the
// first to start with that many (two events of the activity and the task's own), the tasks before it with fewer.
const server = useDevServerSuggestingFrom(async () => (await eventsWhileFirstModelCallRuns()) + 2);

describe('the suggestion to continue as new, when a query of the run waits for a worker', () => {
  /**
   * With no worker polling and no workflow task pending, the server hands a query to a worker as a task of its own,
   * whose history is read when a worker takes it: a model answer that arrives meanwhile is in it, and a worker
   * without the run in cache applies it to answer the query under the previous task's suggestion (none), then carries
   * what it reached into the task that delivers the answer, which carries the suggestion. Whether a worker takes the
   * query or that task first is the server's choice, so several runs are raced.
   */
  it('is read as the run read it live when the run replays, though the task that applied the answer had it', async () => {
    const taskQueue = uniqueTaskQueue('suggestion-under-query');
    const bundle = await relayWorkflowBundle();
    const runs = 12;
    const hold = latch();
    let reached = 0;
    const model = heldModel(hold.released, () => {
      reached += 1;
      if (reached === runs) hold.reached();
    });
    const start = async () => {
      const native = await NativeConnection.connect({ address: server.address });
      const worker = await createWorker({
        connection: native,
        taskQueue,
        tools: createTestTools(createLedger()),
        models: { scripted: model },
        workflowBundle: bundle,
        // Long enough for the held model calls to finish after the worker stopped taking tasks.
        workerOptions: { shutdownGraceTime: '1m' },
      });
      const running = worker.run().finally(() => native.close());
      return { worker, running };
    };
    const client = await RelayClient.connect({ address: server.address, taskQueue });
    const first = await start();
    const runIds = await Promise.all(Array.from({ length: runs }, async () => (await client.startRun(base)).runId));
    await hold.started;
    const firstExecutions = await Promise.all(
      runIds.map(async (runId) => (await server.temporal.workflow.getHandle(runId).describe()).runId),
    );
    // The worker stops taking tasks; the model calls it runs go on until released.
    first.worker.shutdown();
    await sleep(500);
    const asked = runIds.map((runId) =>
      server.temporal.workflow
        .getHandle(runId)
        .query(eventPageQuery, {})
        .catch(() => undefined),
    );
    // The queries reach the server, which finds no task pending and waits for a worker to take them as tasks.
    await sleep(1_000);
    hold.release();
    await first.running;
    const second = await start();
    try {
      await Promise.all(asked);
      await Promise.all(runIds.map((runId) => waitForRun(client, runId, (run) => run.status === 'completed')));
      const lateRuns: number[] = [];
      for (const [index, runId] of runIds.entries()) {
        const firstExecution = server.temporal.workflow.getHandle(runId, firstExecutions[index]);
        // The suggestion first came with the task that delivered the first model answer.
        const { firstSuggested, firstAnswer } = await suggestionTasks(firstExecution);
        expect({ runId, firstSuggested }).toEqual({ runId, firstSuggested: firstAnswer });
        expect(firstAnswer).toBeGreaterThan(0);
        const { status } = await firstExecution.describe();
        if (status.name !== 'CONTINUED_AS_NEW') lateRuns.push(index);
        // Every execution of the run replays to the history it recorded, in a worker that never ran it.
        for (const execution of [firstExecution, server.temporal.workflow.getHandle(runId)]) {
          await Worker.runReplayHistory({ workflowBundle: bundle }, await execution.fetchHistory(), runId);
        }
      }
      // At least one run applied the answer to answer a query first, so it did not continue as new at that step.
      expect(lateRuns.length).toBeGreaterThan(0);
      // A run that took its task first continued as new there, under the marker its suggestion recorded.
      const onTime = runIds.findIndex((_, index) => !lateRuns.includes(index));
      for (const [index, name] of [
        [lateRuns[0] ?? -1, 'suggestion-read-while-query-waits'],
        [onTime, 'continued-as-suggested'],
      ] as const) {
        const firstExecution = server.temporal.workflow.getHandle(runIds[index] ?? '', firstExecutions[index]);
        if (index >= 0) await recordHistoryIfRequested(firstExecution, currentHistoryFile(name));
      }
    } finally {
      second.worker.shutdown();
      await second.running;
    }
  }, 180_000);
});
