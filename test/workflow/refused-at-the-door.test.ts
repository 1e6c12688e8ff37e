import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { tsToMs } from '@temporalio/common/lib/time.js';
import { beforeAll, describe, expect, it, vi } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { RelayError } from '../../src/shared/errors.js';
import { workerCatalogMemoKey } from '../../src/shared/worker-catalog.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { waitForWorkerCatalog } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import path from 'node:path';
import { currentHistoryFile, recordHistoryIfRequested, workerCatalogHistories } from '../helpers/replay-histories.js';
import { useHttpTestApi } from '../http/http-test-kit.js';

const { tenantA, keys, kit, api } = useHttpTestApi();

beforeAll(async () => {
  await waitForWorkerCatalog(api.worker.client);
});

/** Whether Temporal has a workflow with this id at all. */
async function runExists(runId: string): Promise<boolean> {
  return kit.temporal.workflow
    .getHandle(runId)
    .describe()
    .then(
      () => true,
      () => false,
    );
}

/** A catalog as its workflow writes it to the memo. */
interface WrittenCatalog {
  modelPrefixes: string[];
  workerIds: string[];
  lastAnnouncedAt: string;
  lapseAfterMs?: number;
}

/** One completed workflow task of a catalog workflow, from its history. */
interface CatalogTask {
  /** The workflow's clock in the task (its `Date.now()`): the time the task's WorkflowTaskStarted event records. */
  now: number;
  /** The catalog the task wrote to the memo, when it wrote one. */
  catalog?: WrittenCatalog;
  /** How long the timer the task started to wake the workflow again runs, when it started one. */
  timerMs?: number;
}

/**
 * The history of the task queue's catalog workflow: its completed workflow tasks in order, and the withdrawals it
 * received after the last of them (which no task has applied), each with the time the server recorded it.
 */
async function catalogHistory(taskQueue: string) {
  const converter = kit.temporal.options.loadedDataConverter;
  const handle = kit.temporal.workflow.getHandle(`relay-e-worker-catalog:${taskQueue}`);
  const events = (await handle.fetchHistory()).events ?? [];
  const startedAt = new Map<string, number>();
  const tasks = new Map<string, CatalogTask>();
  let pendingWithdrawals: Array<{ workerId: unknown; at: number }> = [];
  for (const event of events) {
    if (event.workflowTaskStartedEventAttributes) startedAt.set(String(event.eventId), tsToMs(event.eventTime));
    const completed = event.workflowTaskCompletedEventAttributes;
    if (completed) {
      tasks.set(String(event.eventId), { now: startedAt.get(String(completed.startedEventId)) ?? Number.NaN });
      pendingWithdrawals = [];
    }
    const memo = event.workflowPropertiesModifiedEventAttributes;
    const written = memo?.upsertedMemo?.fields?.[workerCatalogMemoKey];
    const memoTask = tasks.get(String(memo?.workflowTaskCompletedEventId));
    if (memoTask && written) memoTask.catalog = await decodeFromPayloadsAtIndex(converter, 0, [written]);
    const timer = event.timerStartedEventAttributes;
    const timerTask = tasks.get(String(timer?.workflowTaskCompletedEventId));
    if (timerTask && timer) timerTask.timerMs = tsToMs(timer.startToFireTimeout);
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signal?.signalName === 'withdrawWorkerCatalog') {
      const workerId = await decodeFromPayloadsAtIndex<unknown>(converter, 0, signal.input?.payloads ?? []);
      pendingWithdrawals.push({ workerId, at: tsToMs(event.eventTime) });
    }
  }
  return { tasks: [...tasks.values()], pendingWithdrawals };
}

/** A worker of the `add` tool and a scripted model, once the catalog holds its announcement (the kit stops it). */
async function startAnnouncedWorker() {
  const worker = await kit.startWorker({
    tools: createTestTools(createLedger()).filter((tool) => tool.name === 'add'),
    models: { scripted: scriptedModel([{ text: 'done' }]) },
  });
  await waitForWorkerCatalog(worker.client);
  return worker;
}

async function refusal(start: Promise<unknown>): Promise<RelayError> {
  const error = await start.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  if (!RelayError.isInstance(error)) throw new Error(`Expected a RelayError, got ${String(error)}`);
  return error;
}

describe('a run the workers cannot serve', () => {
  it('is refused with unknown_tool when its allow-list names a tool no worker serves, and never starts', async () => {
    const error = await refusal(
      api.worker.client.startRun({
        runId: 'refused-tool',
        tenantId: tenantA,
        model: 'scripted:test',
        prompt: 'hi',
        tools: ['add', 'launch_rocket'],
      }),
    );

    expect(error.code).toBe('unknown_tool');
    expect(error.message).toContain("'launch_rocket'");
    expect(error.details).toEqual({ names: ['launch_rocket'] });
    expect(await runExists('refused-tool')).toBe(false);
  });

  it('is refused with model_not_configured when no worker has the model’s provider, and never starts', async () => {
    const error = await refusal(
      api.worker.client.startRun({ runId: 'refused-model', tenantId: tenantA, model: 'openai:gpt-4.1', prompt: 'hi' }),
    );

    expect(error.code).toBe('model_not_configured');
    expect(error.message).toContain('scripted:…');
    expect(await runExists('refused-model')).toBe(false);
  });

  it('answers 422 over HTTP with the same codes', async () => {
    const unknownTool = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      json: { model: 'scripted:test', prompt: 'hi', tools: ['launch_rocket'] },
    });
    const unknownModel = await api.request('/v1/runs', {
      method: 'POST',
      key: keys.alice,
      json: { model: 'anthropic:claude', prompt: 'hi' },
    });

    expect([unknownTool.status, ((await unknownTool.json()) as { code: string }).code]).toEqual([422, 'unknown_tool']);
    expect([unknownModel.status, ((await unknownModel.json()) as { code: string }).code]).toEqual([
      422,
      'model_not_configured',
    ]);
  });

  it('starts a run whose tools and model the workers serve', async () => {
    const { runId } = await api.worker.client.startRun({
      tenantId: tenantA,
      model: 'scripted:test',
      prompt: 'add',
      tools: ['add'],
    });

    expect((await api.worker.client.result(runId)).output).toBe('done');
  });

  it('reuses a recent catalog for runs it serves, and reads it afresh before refusing anything', async () => {
    const models = { scripted: scriptedModel([{ text: 'done' }]) };
    const only = (name: string) => createTestTools(createLedger()).filter((tool) => tool.name === name);
    const first = await kit.startWorker({ tools: only('add'), models });
    const { client, taskQueue } = first;
    await waitForWorkerCatalog(client);
    const reads = vi.spyOn(client, 'getWorkerCatalog');
    const start = (tools: string[]) => client.startRun({ tenantId: tenantA, model: 'scripted:t', prompt: 'hi', tools });
    await start(['add']);
    await start(['add']);
    expect(reads).toHaveBeenCalledTimes(1);

    // Another worker takes the queue with another tool: the recent catalog lacks it, so the check reads again.
    await first.stop();
    const second = await kit.startWorker({ taskQueue, tools: only('echo_after'), models });
    try {
      await expect
        .poll(async () => (await second.client.getWorkerCatalog())?.tools.map((tool) => tool.name), { timeout: 10_000 })
        .toContain('echo_after');
      await start(['echo_after']);
      expect(reads).toHaveBeenCalledTimes(2);
      await expect(start(['launch_rocket'])).rejects.toMatchObject({ code: 'unknown_tool' });
      expect(reads).toHaveBeenCalledTimes(3);
    } finally {
      await second.stop();
    }
  });

  it('reads no catalog once the last worker has stopped, though no worker is left to apply its withdrawal', async () => {
    const only = createTestTools(createLedger()).filter((tool) => tool.name === 'add');
    const worker = await kit.startWorker({ tools: only, models: { scripted: scriptedModel([{ text: 'done' }]) } });
    await waitForWorkerCatalog(worker.client);
    await worker.stop();

    const catalogWorkflow = await kit.temporal.workflow
      .getHandle(`relay-e-worker-catalog:${worker.taskQueue}`)
      .describe();
    // The withdrawal waits in history for a workflow task no worker runs; the memo still names the stopped worker.
    expect([catalogWorkflow.status.name, Boolean(catalogWorkflow.raw.pendingWorkflowTask)]).toEqual(['RUNNING', true]);
    const written = catalogWorkflow.memo?.[workerCatalogMemoKey] as WrittenCatalog;
    expect(written.workerIds).toHaveLength(1);
    // History has the stopped worker's withdrawal after the last task, sent before its announcement lapsed: what
    // leaves the catalog empty is the withdrawal no task applied, not the lapse.
    const { pendingWithdrawals } = await catalogHistory(worker.taskQueue);
    expect(pendingWithdrawals.map((withdrawal) => withdrawal.workerId)).toEqual(written.workerIds);
    const withdrawnAfterMs = (pendingWithdrawals[0]?.at ?? Infinity) - Date.parse(written.lastAnnouncedAt);
    expect(withdrawnAfterMs).toBeLessThan(written.lapseAfterMs ?? 0);
    expect(await worker.client.getWorkerCatalog()).toBeUndefined();
    // So a run naming a tool the stopped worker lacked is let through to wait for a worker, not refused.
    const { runId } = await worker.client.startRun({
      tenantId: tenantA,
      model: 'scripted:t',
      prompt: 'hi',
      tools: ['echo_after'],
    });
    expect(await runExists(runId)).toBe(true);
    await worker.client.cancel(runId);
  });

  it('reads no catalog once its newest announcement is older than the lapse, though no worker is left to lapse it', async () => {
    const taskQueue = `catalog-lapse-${Date.now()}`;
    const client = await RelayClient.connect({ connection: kit.env.connection, namespace: kit.namespace, taskQueue });
    // A catalog as its workflow last wrote it, on a task queue no worker polls any more.
    const catalogAnnouncedAgo = async (ms: number, suffix: string, lapse: { lapseAfterMs?: number } = {}) => {
      const workflowId = `relay-e-worker-catalog:${taskQueue}`;
      await kit.temporal.workflow
        .getHandle(workflowId)
        .terminate()
        .catch(() => undefined);
      await kit.temporal.workflow.start('relayWorkerCatalog', {
        workflowId,
        taskQueue,
        args: [],
        memo: {
          relayWorkerCatalog: {
            tools: [],
            modelPrefixes: ['scripted'],
            workers: 1,
            workerIds: [`killed-worker-${suffix}`],
            lastAnnouncedAt: new Date(Date.now() - ms).toISOString(),
            ...lapse,
          },
        },
      });
    };
    await catalogAnnouncedAgo(60_000, 'recent');
    expect(await client.getWorkerCatalog()).toMatchObject({ workers: 1, modelPrefixes: ['scripted'] });
    await catalogAnnouncedAgo(31 * 60_000, 'lapsed');
    expect(await client.getWorkerCatalog()).toBeUndefined();
    // Today's catalogs say when they lapse: three of their workers' one-minute refresh periods.
    await catalogAnnouncedAgo(60_000, 'recent-minutes', { lapseAfterMs: 180_000 });
    expect(await client.getWorkerCatalog()).toMatchObject({ workers: 1 });
    await catalogAnnouncedAgo(4 * 60_000, 'lapsed-minutes', { lapseAfterMs: 180_000 });
    expect(await client.getWorkerCatalog()).toBeUndefined();
    await kit.temporal.workflow.getHandle(`relay-e-worker-catalog:${taskQueue}`).terminate();
  });

  it('drops a worker that stopped announcing after three of its refresh periods, while the others stay', async () => {
    const worker = await startAnnouncedWorker();
    try {
      // A worker killed right after it announced itself, saying it would announce again every half second.
      await kit.temporal.workflow
        .getHandle(`relay-e-worker-catalog:${worker.taskQueue}`)
        .signal('publishWorkerCatalog', { workerId: 'killed', tools: [], modelPrefixes: ['ghost'], refreshMs: 500 });
      await vi.waitFor(async () => expect((await worker.client.getWorkerCatalog())?.modelPrefixes).toContain('ghost'));
      await vi.waitFor(
        async () => expect((await worker.client.getWorkerCatalog())?.modelPrefixes).toEqual(['scripted']),
        { timeout: 15_000, interval: 200 },
      );
      expect(await worker.client.getWorkerCatalog()).toMatchObject({ workers: 1, lapseAfterMs: 180_000 });
      // When, by the workflow's own clock as history records it, the ghost came and went.
      const { tasks } = await catalogHistory(worker.taskQueue);
      const receivedIn = tasks.findIndex((task) => task.catalog?.workerIds.includes('killed'));
      const droppedIn = tasks.findIndex(
        (task, index) => index > receivedIn && task.catalog && !task.catalog.workerIds.includes('killed'),
      );
      expect([receivedIn >= 0, droppedIn > receivedIn]).toEqual([true, true]);
      // The memo's lastAnnouncedAt is the ghost's receipt by the workflow's clock, the time of the task that took it.
      const receivedAt = Date.parse(tasks[receivedIn]?.catalog?.lastAnnouncedAt ?? '');
      expect(tasks[receivedIn]?.now).toBe(receivedAt);
      const sinceReceived = (task: CatalogTask | undefined) => (task?.now ?? Number.NaN) - receivedAt;
      // The task that took it started its lapse, three of its half-second periods, and a task after that timer
      // fired dropped it; no task in between woke for anything else.
      expect(tasks[receivedIn]?.timerMs).toBe(1_500);
      expect(sinceReceived(tasks[droppedIn])).toBeGreaterThanOrEqual(1_500);
      expect(droppedIn).toBe(receivedIn + 1);
      // Two announcements and a lapse: its history is replayed by test/replay/worker-catalog-replay.test.ts.
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(`relay-e-worker-catalog:${worker.taskQueue}`),
        path.join(workerCatalogHistories, 'lapsed-by-timer.json'),
      );
    } finally {
      await worker.stop();
    }
  });

  it('keeps a worker that announces again before its lapse, and lapses it three periods after the last time', async () => {
    const worker = await startAnnouncedWorker();
    try {
      const catalog = kit.temporal.workflow.getHandle(`relay-e-worker-catalog:${worker.taskQueue}`);
      // A worker that announces itself twice, saying it would every two seconds, then is killed.
      const slow = { workerId: 'slow', tools: [], modelPrefixes: ['slow'], refreshMs: 2_000 };
      await catalog.signal('publishWorkerCatalog', slow);
      await vi.waitFor(async () => expect((await worker.client.getWorkerCatalog())?.modelPrefixes).toContain('slow'));
      await catalog.signal('publishWorkerCatalog', slow);
      await vi.waitFor(
        async () => expect((await worker.client.getWorkerCatalog())?.modelPrefixes).toEqual(['scripted']),
        { timeout: 20_000, interval: 200 },
      );
      const { tasks } = await catalogHistory(worker.taskQueue);
      // Each announcement's task started its lapse of three periods; the second replaced the first's, which was left
      // to fire for nothing rather than cancelled (a cancellation's command would follow how signals were grouped).
      const announcedIn = tasks.flatMap((task, index) => (task.timerMs === 6_000 ? [index] : []));
      expect(announcedIn).toHaveLength(2);
      const events = (await catalog.fetchHistory()).events ?? [];
      expect(events.filter((event) => event.timerCanceledEventAttributes)).toEqual([]);
      const lastAnnouncedAt = tasks[announcedIn[1] ?? -1]?.now ?? Number.NaN;
      const droppedIn = tasks.findIndex(
        (task, index) =>
          index > (announcedIn[1] ?? Infinity) && task.catalog && !task.catalog.workerIds.includes('slow'),
      );
      expect(droppedIn).toBeGreaterThan(0);
      // Dropped three periods after its last announcement, not its first.
      expect((tasks[droppedIn]?.now ?? Number.NaN) - lastAnnouncedAt).toBeGreaterThanOrEqual(6_000);
      // Replayed by test/replay/worker-catalog-replay.test.ts.
      await recordHistoryIfRequested(catalog, path.join(workerCatalogHistories, 'announced-again-by-timer.json'));
    } finally {
      await worker.stop();
    }
  });

  it('keeps taking announcements after one it cannot read (a raw signal of null)', async () => {
    const worker = await startAnnouncedWorker();
    try {
      const catalog = kit.temporal.workflow.getHandle(`relay-e-worker-catalog:${worker.taskQueue}`);
      await catalog.signal('publishWorkerCatalog', null);
      await catalog.signal('publishWorkerCatalog', { workerId: 'broken', tools: [null], modelPrefixes: [] });
      // A period no timer can run would leave the announcement to never lapse.
      await catalog.signal('publishWorkerCatalog', {
        workerId: 'no-period',
        tools: [],
        modelPrefixes: [],
        refreshMs: 'soon',
      });
      await catalog.signal('publishWorkerCatalog', { workerId: 'late', tools: [], modelPrefixes: ['late'] });
      // Before, the null failed every workflow task after it: the late worker's announcement was never applied.
      await vi.waitFor(async () => expect((await worker.client.getWorkerCatalog())?.modelPrefixes).toContain('late'));
      expect((await worker.client.getWorkerCatalog())?.workerIds).not.toContain('broken');
      expect((await worker.client.getWorkerCatalog())?.workerIds).not.toContain('no-period');
      const history = (await catalog.fetchHistory()).events ?? [];
      expect(history.filter((event) => event.workflowTaskFailedEventAttributes)).toEqual([]);
    } finally {
      await worker.stop();
    }
  });

  it('is let through when no worker has announced a catalog, since nothing can be told', async () => {
    expect(await kit.client.getWorkerCatalog()).toBeUndefined();
    const { runId } = await kit.client.startRun({ tenantId: tenantA, model: 'nobody:serves', prompt: 'hi' });

    expect(await runExists(runId)).toBe(true);
    await kit.client.cancel(runId);
  });

  it('fails, when let through, with one run_failed event naming what the worker lacks', async () => {
    const model = scriptedModel([{ text: 'done' }]);
    const silent = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: model },
      publishCatalog: false,
    });
    try {
      const unknownTool = await silent.client.startRun({
        tenantId: tenantA,
        model: 'scripted:test',
        prompt: 'hi',
        tools: ['add', 'launch_rocket'],
      });
      const unknownModel = await silent.client.startRun({ tenantId: tenantA, model: 'nobody:serves', prompt: 'hi' });

      for (const [runId, code] of [
        [unknownTool.runId, 'unknown_tool'],
        [unknownModel.runId, 'model_not_configured'],
      ] as const) {
        await expect(silent.client.result(runId)).rejects.toThrow();
        const events = await silent.client.events(runId, { tenantId: tenantA });
        expect(events).toEqual([expect.objectContaining({ seq: 1, type: 'run_failed', code })]);
        expect(await silent.client.getRun(runId, { tenantId: tenantA })).toMatchObject({
          status: 'failed',
          error: events[0]?.type === 'run_failed' ? events[0].error : 'no run_failed event',
        });
      }
      const toolFailure = await silent.client.events(unknownTool.runId, { tenantId: tenantA });
      expect(toolFailure[0]).toMatchObject({ error: "Unknown tool(s): 'launch_rocket'" });
      // The first model call's activity read the catalog and refused before it called the model.
      expect(model.requestsOf(unknownTool.runId)).toEqual([]);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(unknownTool.runId),
        currentHistoryFile('refused-unknown-tool'),
      );
    } finally {
      await silent.stop();
    }
  });
});
