import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { tsToMs } from '@temporalio/common/lib/time.js';
import type { WorkflowHandle } from '@temporalio/client';
import { NativeConnection, Worker } from '@temporalio/worker';
import { describe, expect, it, vi } from 'vitest';
import { workerCatalogMemoKey } from '../../src/shared/worker-catalog.js';
import type { WorkerCatalog, WorkerCatalogPublication } from '../../src/shared/worker-catalog.js';
import { relayWorkflowBundle } from '../../src/testing/relay-workflow-bundle.js';
import { publishWorkerCatalogSignal } from '../../workflows/worker-catalog.js';
import type { relayWorkerCatalog } from '../../workflows/worker-catalog.js';
import { recordHistoryIfRequested, workerCatalogHistories } from '../helpers/replay-histories.js';
import { useDevServerSuggestingFrom } from '../helpers/suggesting-dev-server.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue, uniqueWorkflowId } from '../helpers/temporal-test-env.js';

const kit = useRelayTestKit();

/** An announcement that never lapses within a test. */
function announcement(workerId: string): WorkerCatalogPublication {
  return { workerId, tools: [], modelPrefixes: [workerId], refreshMs: 3_600_000 };
}

/**
 * Catalog workflows on one task queue, worked by plain workers (which announce nothing themselves), announced to by
 * the test.
 */
class Catalogs {
  constructor(
    readonly temporal: Client,
    readonly address: string,
    readonly taskQueue = uniqueTaskQueue('catalog-under-query'),
  ) {}

  async startWorker(): Promise<{ stop: () => Promise<void> }> {
    const connection = await NativeConnection.connect({ address: this.address });
    const worker = await Worker.create({
      connection,
      taskQueue: this.taskQueue,
      workflowBundle: await relayWorkflowBundle(),
    });
    const running = worker.run().finally(() => connection.close());
    return {
      stop: async () => {
        worker.shutdown();
        await running;
      },
    };
  }

  announce(workflowId: string, workerId: string): Promise<unknown> {
    return this.temporal.workflow.signalWithStart<typeof relayWorkerCatalog, [WorkerCatalogPublication]>(
      'relayWorkerCatalog',
      {
        workflowId,
        taskQueue: this.taskQueue,
        args: [],
        signal: publishWorkerCatalogSignal,
        signalArgs: [announcement(workerId)],
      },
    );
  }

  /** Announces the worker to each catalog, and waits until each catalog's memo names it. */
  async announceToAll(workflowIds: readonly string[], workerId: string): Promise<void> {
    await Promise.all(workflowIds.map((workflowId) => this.announce(workflowId, workerId)));
    await Promise.all(workflowIds.map((workflowId) => this.shows(workflowId, workerId)));
  }

  /** Waits until the catalog's memo, as its latest execution wrote it, names the worker. */
  async shows(workflowId: string, workerId: string): Promise<void> {
    await vi.waitFor(
      async () => {
        const { memo } = await this.temporal.workflow.getHandle(workflowId).describe();
        const catalog = memo?.[workerCatalogMemoKey] as WorkerCatalog | undefined;
        expect(catalog?.workerIds).toContain(workerId);
      },
      { timeout: 30_000, interval: 100 },
    );
  }
}

/** How many events a catalog's history holds once it took its first announcement, read on the shared server. */
async function eventsAfterFirstAnnouncement(): Promise<number> {
  const catalogs = new Catalogs(kit.temporal, kit.address);
  const worker = await catalogs.startWorker();
  const workflowId = uniqueWorkflowId('relay-e-worker-catalog');
  try {
    await catalogs.announce(workflowId, 'a');
    await catalogs.shows(workflowId, 'a');
    return (await kit.temporal.workflow.getHandle(workflowId).describe()).historyLength;
  } finally {
    await kit.temporal.workflow.getHandle(workflowId).terminate();
    await worker.stop();
  }
}

/** Whether the execution took the workflow task of an announcement of `workerId`, read from its history. */
async function tookAnnouncementOf(execution: WorkflowHandle, workerId: string): Promise<boolean> {
  const converter = execution.client.options.loadedDataConverter;
  for (const event of (await execution.fetchHistory()).events ?? []) {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (!signal) continue;
    const publication = await decodeFromPayloadsAtIndex<WorkerCatalogPublication>(
      converter,
      0,
      signal.input?.payloads ?? [],
    );
    if (publication.workerId === workerId) return true;
  }
  return false;
}

/**
 * What an execution carried from the one before it (the announcements it was started with), and how long the timers
 * its first workflow task started run.
 */
async function carriedAndFirstTimers(execution: WorkflowHandle): Promise<{ carried: number; timersMs: number[] }> {
  const converter = execution.client.options.loadedDataConverter;
  const events = (await execution.fetchHistory()).events ?? [];
  const input = events[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  const carried = input.length > 0 ? await decodeFromPayloadsAtIndex<unknown[]>(converter, 0, input) : [];
  const firstTask = events.find((event) => event.workflowTaskCompletedEventAttributes)?.eventId;
  const timersMs = events.flatMap((event) => {
    const timer = event.timerStartedEventAttributes;
    return timer && String(timer.workflowTaskCompletedEventId) === String(firstTask)
      ? [tsToMs(timer.startToFireTimeout)]
      : [];
  });
  return { carried: carried.length, timersMs };
}

// The task that takes the second announcement is the first to start with this many events.
const server = useDevServerSuggestingFrom(async () => (await eventsAfterFirstAnnouncement()) + 2);

describe('a worker catalog whose announcement brings the suggestion to continue as new while a query waits', () => {
  /**
   * With no worker polling and no workflow task pending, the server hands a query to a worker as a task of its own,
   * whose history is read when a worker takes it: an announcement signalled meanwhile is in it, and a worker without
   * the catalog in cache applies it to answer the query under the previous task's suggestion (none), then carries what
   * it reached into the task that takes the announcement, which carries the suggestion. Whether a worker takes the
   * query or that task first is the server's choice, so several catalogs are raced.
   */
  it('replays as it ran, whether it continued as new at that announcement or the one after', async () => {
    const catalogs = new Catalogs(server.temporal, server.address);
    const workflowIds = Array.from({ length: 12 }, () => uniqueWorkflowId('relay-e-worker-catalog'));
    const first = await catalogs.startWorker();
    await catalogs.announceToAll(workflowIds, 'a');
    const firstExecutions = await Promise.all(
      workflowIds.map(async (workflowId) => (await server.temporal.workflow.getHandle(workflowId).describe()).runId),
    );
    await first.stop();
    const asked = workflowIds.map((workflowId) =>
      server.temporal.workflow
        .getHandle(workflowId)
        .query('__stack_trace')
        .catch(() => undefined),
    );
    // The queries reach the server, which finds no task pending and waits for a worker to take them as tasks.
    await sleep(1_000);
    await Promise.all(workflowIds.map((workflowId) => catalogs.announce(workflowId, 'b')));
    const second = await catalogs.startWorker();
    try {
      await Promise.all(asked);
      await Promise.all(workflowIds.map((workflowId) => catalogs.shows(workflowId, 'b')));
      // A catalog that took the second announcement without continuing as new does at the next.
      await catalogs.announceToAll(workflowIds, 'c');
      const late: number[] = [];
      const bundle = await relayWorkflowBundle();
      for (const [index, workflowId] of workflowIds.entries()) {
        const firstExecution = server.temporal.workflow.getHandle(workflowId, firstExecutions[index]);
        expect((await firstExecution.describe()).status.name).toBe('CONTINUED_AS_NEW');
        if (await tookAnnouncementOf(firstExecution, 'c')) late.push(index);
        await Worker.runReplayHistory({ workflowBundle: bundle }, await firstExecution.fetchHistory(), workflowId);
      }
      // At least one catalog applied the announcement to answer a query first, so it went on to the next.
      expect(late.length).toBeGreaterThan(0);
      const onTime = workflowIds.findIndex((_, index) => !late.includes(index));
      // Every catalog carried its announcements into the next execution, where each lapses when it would have.
      for (const workflowId of workflowIds) {
        const { memo } = await server.temporal.workflow.getHandle(workflowId).describe();
        expect((memo?.[workerCatalogMemoKey] as WorkerCatalog | undefined)?.workerIds?.sort()).toEqual(['a', 'b', 'c']);
      }
      // Each lapses three of its hour-long periods after it arrived: its timer runs for less by the time since.
      for (const workflowId of workflowIds) {
        const { carried, timersMs } = await carriedAndFirstTimers(server.temporal.workflow.getHandle(workflowId));
        expect(carried).toBeGreaterThan(0);
        expect(timersMs.filter((lapseMs) => lapseMs < 3 * 3_600_000)).toHaveLength(carried);
        for (const lapseMs of timersMs) expect(lapseMs).toBeGreaterThan(3 * 3_600_000 - 60_000);
        for (const lapseMs of timersMs) expect(lapseMs).toBeLessThanOrEqual(3 * 3_600_000);
      }
      for (const [index, name] of [
        [late[0] ?? -1, 'suggestion-read-while-query-waits'],
        [onTime, 'continued-as-suggested'],
      ] as const) {
        const firstExecution = server.temporal.workflow.getHandle(workflowIds[index] ?? '', firstExecutions[index]);
        if (index >= 0)
          await recordHistoryIfRequested(firstExecution, path.join(workerCatalogHistories, `${name}.json`));
      }
    } finally {
      await Promise.all(workflowIds.map((workflowId) => server.temporal.workflow.getHandle(workflowId).terminate()));
      await second.stop();
    }
  }, 180_000);
});

/**
 * When the workflow task that took the `nth` announcement of `workerId` completed, and the announcements it took.
 */
async function taskThatTook(
  execution: WorkflowHandle,
  workerId: string,
  nth: number,
): Promise<{ completedAt: number; announcements: string[] }> {
  const converter = execution.client.options.loadedDataConverter;
  let announcements: string[] = [];
  let seen = 0;
  for (const event of (await execution.fetchHistory()).events ?? []) {
    const signal = event.workflowExecutionSignaledEventAttributes;
    if (signal) {
      const publication = await decodeFromPayloadsAtIndex<WorkerCatalogPublication>(
        converter,
        0,
        signal.input?.payloads ?? [],
      );
      announcements.push(publication.workerId);
      if (publication.workerId === workerId) seen += 1;
    }
    if (!event.workflowTaskCompletedEventAttributes) continue;
    if (seen >= nth) return { completedAt: tsToMs(event.eventTime), announcements };
    announcements = [];
  }
  throw new Error(`No workflow task of ${execution.workflowId} took announcement ${nth} of ${workerId}`);
}

describe('a worker catalog whose announcements a waiting query splits from the rest of their task', () => {
  /**
   * A worker that takes the query task applies the announcement that came before it to answer the query, keeps that
   * state, and applies the announcements that come after its poll, in the same workflow task, in an activation of
   * their own, while replay applies the whole task in one: the catalog's commands must not depend on that grouping.
   * Announcements are sent every few milliseconds as the new worker starts, so some fall on either side of its poll;
   * among them a worker announcing again, whose earlier lapse is left to fire for nothing rather than cancelled (a
   * cancellation's command comes a turn after the announcement's, in an order grouping changes).
   */
  it('replays as it ran', async () => {
    const catalogs = new Catalogs(kit.temporal, kit.address);
    const workflowIds = Array.from({ length: 12 }, () => uniqueWorkflowId('relay-e-worker-catalog'));
    const first = await catalogs.startWorker();
    await catalogs.announceToAll(workflowIds, 'a');
    await catalogs.announceToAll(workflowIds, 'b');
    await first.stop();
    const asked = workflowIds.map(async (workflowId) => {
      const answered = await kit.temporal.workflow
        .getHandle(workflowId)
        .query('__stack_trace')
        .catch(() => undefined);
      return answered === undefined ? Infinity : Date.now();
    });
    await sleep(1_000);
    // b announces again, as a running worker does every period: the task that takes it lapses b by a new timer.
    await Promise.all(workflowIds.map((workflowId) => catalogs.announce(workflowId, 'b')));
    const second = await catalogs.startWorker();
    try {
      // Each round a new worker joins and the first announces again, as a running worker does every period.
      for (let round = 0; round < 40; round += 1) {
        await Promise.all(workflowIds.map((workflowId) => catalogs.announce(workflowId, `c${round}`)));
        await Promise.all(workflowIds.map((workflowId) => catalogs.announce(workflowId, 'a')));
        await sleep(5);
      }
      const answeredAt = await Promise.all(asked);
      await Promise.all(workflowIds.map((workflowId) => catalogs.shows(workflowId, 'c39')));
      const bundle = await relayWorkflowBundle();
      let split = 0;
      for (const [index, workflowId] of workflowIds.entries()) {
        const execution = kit.temporal.workflow.getHandle(workflowId);
        await Worker.runReplayHistory({ workflowBundle: bundle }, await execution.fetchHistory(), workflowId);
        const { completedAt, announcements } = await taskThatTook(execution, 'b', 2);
        // Answered before the task that took b completed, which took later announcements too: split there.
        if ((answeredAt[index] ?? Infinity) < completedAt && announcements.length > 1) split += 1;
      }
      expect(split).toBeGreaterThan(0);
    } finally {
      await Promise.all(workflowIds.map((workflowId) => kit.temporal.workflow.getHandle(workflowId).terminate()));
      await second.stop();
    }
  }, 120_000);
});
