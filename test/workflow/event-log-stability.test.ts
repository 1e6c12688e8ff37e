import { setTimeout as sleep } from 'node:timers/promises';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { status } from '@grpc/grpc-js';
import { Client, Connection, isGrpcServiceError } from '@temporalio/client';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import { decideUpdate, eventPageQuery } from '../../workflows/messages.js';
import { RelayClient } from '../../src/client/relay-client.js';
import { RelayError } from '../../src/shared/errors.js';
import { queriedEvents } from '../helpers/queried-events.js';
import { latch } from '../helpers/latch.js';
import type { RunEvent, RunSnapshot } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import type { StartRunOptions } from '../../src/client/relay-client.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', model: 'scripted:test' } as const;
/**
 * A run input whose earlier turns outgrow its transcript budget, so a compaction precedes its first model call (or,
 * with `reply: false`, the run fails before that call).
 */
function compactingInput(prompt: string, options: { reply?: boolean } = {}): Partial<StartRunOptions> {
  return {
    maxTranscriptBytes: 4_096,
    messages: [
      { role: 'user', content: 'earlier' },
      { role: 'assistant', content: '', toolCalls: [{ id: 'old', name: 'add', input: {} }] },
      {
        role: 'tool',
        toolCallId: 'old',
        toolName: 'add',
        result: { success: true, toolName: 'add', data: { text: 'q'.repeat(6_000) } },
      },
      ...(options.reply === false ? [] : [{ role: 'assistant' as const, content: 'Read it.' }]),
      { role: 'user', content: prompt },
    ],
  };
}

/**
 * Holds the tool-catalog snapshot (a local activity) for a moment, so that the followers' queries land while the
 * run's first workflow task is still open: that is what splits the task and, before the fix, moved the first events'
 * times on replay.
 */
const slowCatalog: ActivityInterceptorsFactory = (context) => ({
  inbound: {
    async execute(input, next) {
      if (context.info.activityType === 'snapshotToolCatalog') await sleep(300);
      return next(input);
    },
  },
});

/** Pauses a follower: `asking` says whether its last query is still in flight (pausing does not recall it). */
interface FollowerControl {
  paused: boolean;
  asking?: boolean;
}

/**
 * Reads a run's events as a follower does, from the instant it starts until it ends: a query can arrive while the
 * first workflow task is pending, which is what once split that task and changed the first events' times on replay.
 */
async function followLive(
  client: RelayClient,
  runId: string,
  control: FollowerControl = { paused: false },
): Promise<Map<number, RunEvent>> {
  const seen = new Map<number, RunEvent>();
  for (;;) {
    if (control.paused) {
      await sleep(20);
      continue;
    }
    control.asking = true;
    const events = await client.events(runId, { after: Math.max(0, ...seen.keys()) }).catch(() => []);
    control.asking = false;
    for (const event of events) seen.set(event.seq, event);
    if (events.some((event) => event.type === 'run_completed' || event.type === 'run_failed')) return seen;
    await sleep(5);
  }
}

function expectSameEvents(live: Map<number, RunEvent>, again: readonly RunEvent[]): void {
  const replayed = new Map(again.map((event) => [event.seq, event]));
  for (const [seq, event] of live) expect({ seq, event: replayed.get(seq) }).toEqual({ seq, event });
  const times = again.map((event) => event.at);
  expect(times).toEqual([...times].sort());
}

describe('the event log under replay', () => {
  const scripts: Record<
    string,
    { turns: (ledger: ReturnType<typeof createLedger>) => ScriptedTurn[]; input: Partial<StartRunOptions> }
  > = {
    'a compaction before the first model call and parallel calls': {
      turns: () => [
        {
          toolCalls: [
            { name: 'add', input: { a: 1, b: 2 } },
            { name: 'echo_after', input: { value: 'v', delayMs: 20 } },
          ],
        },
        { text: 'done' },
      ],
      input: compactingInput('now add'),
    },
    'continue-as-new': {
      turns: () => [
        { toolCalls: [{ name: 'add', input: { a: 1, b: 1 } }] },
        { toolCalls: [{ name: 'add', input: { a: 2, b: 2 } }] },
        { toolCalls: [{ name: 'add', input: { a: 3, b: 3 } }] },
        { text: 'done' },
      ],
      input: { prompt: 'count', continueAsNewAfterSteps: 1 },
    },
  };

  for (const [name, { turns, input }] of Object.entries(scripts)) {
    it(`returns every field of every event unchanged once the run is read again after it closed: ${name}`, async () => {
      for (let round = 0; round < 3; round++) {
        const ledger = createLedger();
        const { client, stop } = await kit.startWorker({
          tools: createTestTools(ledger),
          models: { scripted: scriptedModel(turns(ledger)) },
          workerOptions: { interceptors: { activity: [slowCatalog] } },
        });
        try {
          const { runId } = await client.startRun({ ...base, ...input });
          const live = await followLive(client, runId);
          await client.result(runId);
          // The run left the worker's cache when it closed: this read replays it.
          expectSameEvents(live, await client.events(runId));
        } finally {
          await stop();
        }
      }
    });
  }

  it('keeps approval times and every event the same on a worker that replays each task (maxCachedWorkflows: 0)', async () => {
    const taskQueue = uniqueTaskQueue('replaying');
    const ledger = createLedger();
    const turns: ScriptedTurn[] = [
      {
        toolCalls: [
          { name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 1 } },
          { name: 'transfer_funds', input: { from: 'A', to: 'C', amount: 2 } },
        ],
      },
      { text: 'done' },
    ];
    const caching = await kit.startWorker({
      taskQueue,
      tools: createTestTools(ledger),
      models: { scripted: scriptedModel(turns) },
    });
    const { client } = caching;
    const { runId } = await client.startRun({ ...base, prompt: 'pay both' });
    const follower: FollowerControl = { paused: false };
    const following = followLive(client, runId, follower);
    const waiting = await waitForRun(client, runId, (run) => run.pendingApprovals.length === 2);
    const liveBeforeDecisions = await client.events(runId);
    await caching.stop();
    const replaying = await kit.startWorker({
      taskQueue,
      tools: createTestTools(ledger),
      models: { scripted: scriptedModel(turns) },
      workerOptions: { maxCachedWorkflows: 0 },
    });
    try {
      // A worker with no cache replays the whole run for each query, and the SDK's core drops a query that arrives
      // while it replays for another (temporalio/sdk-rust#578): the follower, which asks without pause, waits
      // while these reads are made (the run waits for its decisions meanwhile, so it misses nothing). On a loaded
      // machine a read can still time out, so it is asked again. Its query in flight is waited for, too.
      follower.paused = true;
      while (follower.asking === true) await sleep(10);
      const again: RunSnapshot = await onceAnswered(() => client.getRun(runId));
      const replayedBefore = await onceAnswered(() => client.events(runId));
      follower.paused = false;
      expectSameEvents(new Map(liveBeforeDecisions.map((event) => [event.seq, event])), replayedBefore);
      expect(again.pendingApprovals).toEqual(waiting.pendingApprovals);
      expect(again.updatedAt).toBe(waiting.updatedAt);
      // The signal follows the update at once, often while the update's workflow task is still in flight: the
      // clock of the activation that applies it could then differ on replay, so decisions take a recorded time.
      await client.approve(runId, 'call_1_0', { approver: 'update' });
      await client.signalDecision(runId, { toolCallId: 'call_1_1', decision: 'approve', approver: 'signal' });
      const live = await following;
      await client.result(runId);
      const replayed = await queriedEvents(kit.temporal, runId);
      expectSameEvents(live, replayed);
      expect(ledger.transfers).toHaveLength(2);
      expectDecisionsAtRecordedTimes(replayed, await recordedDecisionTimes(runId));
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('decisions-recorded-when-accepted'),
      );
    } finally {
      await replaying.stop();
    }
  });
});

const payOnce: ScriptedTurn[] = [
  { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
  { text: 'paid' },
];

describe('the time of a decision', () => {
  const turns: ScriptedTurn[] = [
    { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
    { text: 'done' },
  ];

  it('is the time its client sent it, with no clock activity; a decision sent without one reads a worker’s clock', async () => {
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(turns) },
    });
    const { client } = worker;
    try {
      const stamped = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
      const unstamped = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
      for (const { runId } of [stamped, unstamped]) {
        await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      }
      const before = new Date().toISOString();
      await client.approve(stamped.runId, 'call_1_0', { approver: 'alice' });
      const after = new Date().toISOString();
      // As the Temporal UI's "Send Signal" sends it: no decidedAt.
      await kit.temporal.workflow
        .getHandle(unstamped.runId)
        .signal('decide', { toolCallId: 'call_1_0', decision: 'approve', approver: 'ui' });
      await Promise.all([client.result(stamped.runId), client.result(unstamped.runId)]);
      const approvedAt = async (runId: string) =>
        (await client.events(runId)).find((event) => event.type === 'tool_approved')?.at;

      const [sent] = await recordedDecisionTimes(stamped.runId);
      expect(sent?.at !== undefined && sent.at >= before && sent.at <= after).toBe(true);
      expect(await approvedAt(stamped.runId)).toBe(sent?.at);
      expect(await scheduledActivityTypes(stamped.runId)).not.toContain('readClock');
      const clock = await recordedActivityResults(unstamped.runId, 'readClock');
      expect(clock).toHaveLength(1);
      expect(await approvedAt(unstamped.runId)).toBe(clock[0]?.at);
    } finally {
      await worker.stop();
    }
  });

  it('of an approval before the last, signalled without one, is the reading of the clock activity that dated it', async () => {
    const tools = createTestTools(createLedger()).map((tool) =>
      tool.name === 'transfer_funds' ? defineTool({ ...(tool as ToolDefinition), approvalsRequired: 2 }) : tool,
    );
    const worker = await kit.startWorker({ tools, models: { scripted: scriptedModel(turns) } });
    const { client } = worker;
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      // As the Temporal UI's "Send Signal" sends it: no decidedAt.
      await kit.temporal.workflow
        .getHandle(runId)
        .signal('decide', { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
      await waitForRun(client, runId, (run) => (run.pendingApprovals[0]?.approvals ?? []).length === 1);
      await client.approve(runId, 'call_1_0', { approver: 'bob' });
      await client.result(runId);
      const clock = await recordedActivityResults(runId, 'readClock');
      const added = (await client.events(runId)).find((event) => event.type === 'tool_approval_added');
      expect(clock).toHaveLength(1);
      expect(added).toMatchObject({ approver: 'alice', at: clock[0]?.at });
    } finally {
      await worker.stop();
    }
  });

  it('refuses a decision whose decidedAt is not a time as toISOString writes it', async () => {
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(turns) },
    });
    try {
      const { runId } = await worker.client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
      await waitForRun(worker.client, runId, (run) => run.status === 'awaiting_approval');
      const handle = kit.temporal.workflow.getHandle(runId);
      for (const decidedAt of ['yesterday', '2026-12-04', '2026-13-40T99:00:00.000Z']) {
        await expect(
          handle.executeUpdate(decideUpdate, { args: [{ toolCallId: 'call_1_0', decision: 'approve', decidedAt }] }),
        ).rejects.toMatchObject({ cause: { type: 'invalid_input' } });
      }
      expect((await worker.client.getRun(runId)).status).toBe('awaiting_approval');
      await worker.client.cancel(runId);
    } finally {
      await worker.stop();
    }
  });
});

describe('a decision from a client whose clock runs ahead', () => {
  it('is dated at the workflow task that took it, so nothing in the run is dated in the future', async () => {
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
          { text: 'paid' },
        ]),
      },
    });
    try {
      const { runId } = await worker.client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
      await waitForRun(worker.client, runId, (run) => run.status === 'awaiting_approval');
      const handle = kit.temporal.workflow.getHandle(runId);
      const ahead = '2099-01-01T00:00:00.000Z';
      await handle.executeUpdate(decideUpdate, {
        args: [{ toolCallId: 'call_1_0', decision: 'approve', decidedAt: ahead }],
      });
      await worker.client.result(runId);
      const now = new Date().toISOString();
      const events = await worker.client.events(runId);
      expect(events.map((event) => event.type)).toContain('tool_approved');
      // Each event is stamped no earlier than the one before: the decision's 2099 would have dated all that follows.
      expect(events.filter((event) => event.at > now)).toEqual([]);
      await recordHistoryIfRequested(handle, currentHistoryFile('decision-from-a-clock-ahead'));
    } finally {
      await worker.stop();
    }
  });
});

describe('a decision signalled from a client whose clock runs ahead', () => {
  it('is dated when its client says, and ignored when that is after its call expires', async () => {
    const worker = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(payOnce) },
    });
    const { client } = worker;
    try {
      const [ahead, far] = await Promise.all(
        [0, 1].map(async () => (await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' })).runId),
      );
      const decision = { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' } as const;
      for (const runId of [ahead, far]) {
        await waitForRun(client, runId ?? '', (run) => run.status === 'awaiting_approval');
      }
      // A signal is judged by no workflow task's clock (a query's replay can show an earlier one): two minutes ahead
      // is taken as sent, a time after the call's expiry is refused as sent after it.
      const twoMinutesAhead = new Date(Date.now() + 120_000).toISOString();
      await client.signalDecision(ahead ?? '', { ...decision, decidedAt: twoMinutesAhead });
      await client.signalDecision(far ?? '', { ...decision, decidedAt: '2099-01-01T00:00:00.000Z' });
      await client.result(ahead ?? '');
      const approved = (await client.events(ahead ?? '')).find((event) => event.type === 'tool_approved');
      expect(approved?.at).toBe(twoMinutesAhead);
      await expect
        .poll(async () => (await client.events(far ?? '')).find((event) => event.type === 'decision_ignored'))
        .toMatchObject({ code: 'approval_not_pending', decidedAt: '2099-01-01T00:00:00.000Z' });
      expect((await client.getRun(far ?? '')).status).toBe('awaiting_approval');
      await client.cancel(far ?? '');
    } finally {
      await worker.stop();
    }
  });
});

describe('a decision delivered in the workflow task that cancels its run', () => {
  it('is in the log before the cancellation', async () => {
    const taskQueue = uniqueTaskQueue('decided-then-cancelled');
    const ledger = createLedger();
    const turns: ScriptedTurn[] = [
      { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
      { text: 'never asked' },
    ];
    const start = () =>
      kit.startWorker({ taskQueue, tools: createTestTools(ledger), models: { scripted: scriptedModel(turns) } });
    const first = await start();
    const { client } = first;
    const { runId } = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    // No worker polls while the decision and the cancellation arrive: the next workflow task delivers both.
    await first.stop();
    await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' });
    await client.cancel(runId);
    const second = await start();
    try {
      await expect(client.result(runId)).rejects.toThrow();
      expect(await eventTypesBetweenTwoTasks(runId)).toEqual([
        'WorkflowExecutionSignaled',
        'WorkflowExecutionCancelRequested',
      ]);
      const events = await client.events(runId);
      const afterWait = events.slice(events.findIndex((event) => event.type === 'tool_awaiting_approval') + 1);
      expect(afterWait.map((event) => event.type)).toEqual(['tool_approved', 'tool_cancelled', 'run_cancelled']);
      const [sent] = await recordedDecisionTimes(runId);
      expect(afterWait[0]).toMatchObject({ approver: 'alice', at: sent?.at });
      expect(ledger.transfers).toEqual([]);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('decided-then-cancelled-in-one-task'),
      );
    } finally {
      await second.stop();
    }
  });
});

describe('decisions signalled while queries of their runs wait for a worker', () => {
  /**
   * With no worker polling and no workflow task pending, the server hands a query to a worker as a task of its own,
   * whose history is read when a worker takes it: a signal sent meanwhile is in that history, and a worker without the
   * run in cache applies it to answer the query under the clock of the run's last task, then carries what it reached
   * into the task that takes the signal. Whether a worker takes the query or that task first is the server's choice,
   * so several runs are raced, and at least one of each kind must have had its query answered before that task
   * completed.
   */
  it('show no decision at a time, and record no step, that the run replays otherwise', async () => {
    const taskQueue = uniqueTaskQueue('query-before-signal');
    const start = () =>
      kit.startWorker({
        taskQueue,
        tools: createTestTools(createLedger()),
        models: { scripted: scriptedModel(payOnce) },
      });
    const first = await start();
    const { client } = first;
    const runIds = await Promise.all(
      Array.from(
        { length: 24 },
        async () => (await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' })).runId,
      ),
    );
    await Promise.all(runIds.map((runId) => waitForRun(client, runId, (run) => run.status === 'awaiting_approval')));
    await first.stop();
    // A query the server gave up on (a loaded machine) leaves its run out of the comparison.
    const asked = runIds.map(async (runId) => {
      const page = await kit.temporal.workflow
        .getHandle(runId)
        .query(eventPageQuery, {})
        .catch(() => undefined);
      return page && { events: page.events, answeredAt: Date.now() };
    });
    // The queries reach the server, which finds no task pending and waits for a worker to take them as tasks.
    await sleep(1_000);
    for (const [index, runId] of runIds.entries()) {
      const decision = { toolCallId: 'call_1_0', decision: 'approve', approver: 'alice' } as const;
      // Every other as the Temporal UI sends it, without its time: the run takes it once a worker's clock dates it.
      if (index % 2 === 1) await kit.temporal.workflow.getHandle(runId).signal('decide', decision);
      else await client.signalDecision(runId, decision);
    }
    const second = await start();
    try {
      const shown = await Promise.all(asked);
      await Promise.all(runIds.map((runId) => client.result(runId)));
      const answeredBeforeDecision = { dated: 0, undated: 0 };
      for (const [index, runId] of runIds.entries()) {
        // The run left the worker's cache when it closed: this read replays its whole history.
        const recorded = await queriedEvents(kit.temporal, runId);
        const { events = [], answeredAt = Infinity } = shown[index] ?? {};
        expectSameEvents(new Map(events.map((event) => [event.seq, event])), recorded);
        if (answeredAt < (await taskAfterSignalCompletedAt(runId))) {
          answeredBeforeDecision[index % 2 === 1 ? 'undated' : 'dated'] += 1;
        }
      }
      expect(answeredBeforeDecision.dated).toBeGreaterThan(0);
      expect(answeredBeforeDecision.undated).toBeGreaterThan(0);
      for (const [index, name] of [
        [0, 'decision-signalled-while-query-waits'],
        [1, 'undated-decision-signalled-while-query-waits'],
      ] as const) {
        await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runIds[index] ?? ''), currentHistoryFile(name));
      }
    } finally {
      await second.stop();
    }
  });
});

describe('a decision delivered in one workflow task with a tool result that arrived after it', () => {
  it('comes before the result, as it does when the two arrive in separate tasks', async () => {
    const taskQueue = uniqueTaskQueue('decision-beside-result');
    const ledger = createLedger();
    const held = holdingTool();
    const turns: ScriptedTurn[] = [
      {
        toolCalls: [
          { id: 'slow', name: 'held', input: {} },
          { id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } },
        ],
      },
      { text: 'done' },
    ];
    const start = (workerOptions = {}) =>
      kit.startWorker({
        taskQueue,
        tools: [...createTestTools(ledger), held.tool],
        models: { scripted: scriptedModel(turns) },
        workerOptions,
      });
    // The first worker finishes the tool it is running after it stops taking workflow tasks.
    const first = await start({ shutdownGraceTime: '1 minute' });
    const { client } = first;
    const { runId } = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
    await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);
    await held.started;
    const stopping = first.stop();
    await sleep(1_000);
    await client.signalDecision(runId, { toolCallId: 'call_1_1', decision: 'approve', approver: 'alice' });
    held.release();
    await stopping;
    const second = await start();
    try {
      await client.result(runId);
      expect(await eventTypesBetweenTwoTasks(runId)).toEqual([
        'WorkflowExecutionSignaled',
        'ActivityTaskStarted',
        'ActivityTaskCompleted',
      ]);
      const events = await client.events(runId);
      const order = events
        .filter((event) => event.type === 'tool_approved' || event.type === 'tool_succeeded')
        .map((event) => `${event.type} ${event.toolCallId}`);
      expect(order).toEqual(['tool_approved call_1_1', 'tool_succeeded call_1_0', 'tool_succeeded call_1_1']);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('decision-beside-tool-result'),
      );
    } finally {
      await second.stop();
    }
  });
});

describe('a decision sent before the run has applied the model answer that proposes its call', () => {
  it('is refused by the run at first, and RelayClient sends it once more when the call shows waiting', async () => {
    const taskQueue = uniqueTaskQueue('decided-before-proposed');
    const ledger = createLedger();
    const answer = latch();
    const turns: ScriptedTurn[] = [
      { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
      { text: 'done' },
    ];
    const model = scriptedModel(async (call) => {
      if (call.step === 1) {
        answer.reached();
        await answer.released;
      }
      return turns[call.step - 1] ?? { text: 'done' };
    });
    const start = (workerOptions = {}) =>
      kit.startWorker({ taskQueue, tools: createTestTools(ledger), models: { scripted: model }, workerOptions });
    // The first worker finishes the model call it is making after it stops taking workflow tasks.
    const first = await start({ shutdownGraceTime: '1 minute' });
    const { client } = first;
    const { runId } = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
    await answer.started;
    const stopping = first.stop();
    await sleep(1_000);
    // The call's id is known before the model proposes it (call_<step>_<index>): the update waits for a worker.
    const { decider, sends } = countingDecider(taskQueue);
    const deciding = decider.approve(runId, 'call_1_0', { approver: 'alice' });
    await sleep(1_000);
    answer.release();
    await stopping;
    const second = await start();
    try {
      await expect(deciding).resolves.toMatchObject({ toolCallId: 'call_1_0', decision: 'approve' });
      // The premise and the retry: refused while the call was not waiting yet, accepted when sent again.
      expect(sends).toEqual(['approval_not_pending', 'accepted']);
      await client.result(runId);
      expect(ledger.transfers).toHaveLength(1);
      const decisions = (await client.events(runId)).filter((event) => event.type === 'tool_approved');
      expect(decisions).toMatchObject([{ toolCallId: 'call_1_0', approver: 'alice' }]);
    } finally {
      await second.stop();
    }
  });
});

/**
 * A RelayClient whose decisions are counted as Temporal answers them: each update sent is recorded as `accepted` or
 * as the run's refusal code.
 */
function countingDecider(taskQueue: string): { decider: RelayClient; sends: string[] } {
  const sends: string[] = [];
  const { connection, namespace } = kit.temporal.options;
  const temporal = new Client({
    connection,
    namespace,
    interceptors: {
      workflow: [
        {
          async startUpdate(input, next) {
            const output = await next(input);
            const refusal = output.outcome?.failure?.applicationFailureInfo?.type;
            sends.push(refusal ?? 'accepted');
            return output;
          },
        },
      ],
    },
  });
  return { decider: RelayClient.fromClient(temporal, { taskQueue }), sends };
}

/** A tool that answers once the test releases it, and says when it has started. */
function holdingTool() {
  const held = latch();
  const tool = defineTool({
    name: 'held',
    description: 'Answers when the test lets it.',
    inputSchema: z.object({}),
    execute: async () => {
      held.reached();
      await held.released;
      return { released: true };
    },
  });
  return { tool, started: held.started, release: held.release };
}

/**
 * The types of the events between the workflow task that completed last before the signal and the next one that
 * started: what that task delivered to the run, in history's order.
 */
async function eventTypesBetweenTwoTasks(runId: string): Promise<string[]> {
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const events = history.events ?? [];
  const signaled = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
  const types: string[] = [];
  for (const event of events.slice(signaled)) {
    if (event.workflowTaskStartedEventAttributes) return types;
    const [attributes] = Object.keys(event).filter((key) => key.endsWith('EventAttributes'));
    if (attributes && !event.workflowTaskScheduledEventAttributes) {
      types.push(attributes.replace(/EventAttributes$/, '').replace(/^./, (first) => first.toUpperCase()));
    }
  }
  return types;
}

/** `read`'s answer, asked again while the run answers `run_unavailable` (for up to 30 s); any other error is thrown. */
async function onceAnswered<T>(read: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    try {
      return await read();
    } catch (error) {
      if (!RelayError.isInstance(error) || error.code !== 'run_unavailable' || Date.now() > deadline) throw error;
    }
  }
}

/**
 * Each decision event carries a time history recorded: the `decidedAt` its client sent with the update or signal, or
 * one a clock-reading activity recorded (other events read the clock that way too: a failure, a resent model
 * context), unless an event recorded later came before it (times never go back along seq).
 */
function expectDecisionsAtRecordedTimes(events: readonly RunEvent[], recorded: ReadonlyArray<{ at?: string }>): void {
  const decisions = events.flatMap((event, index) =>
    event.type === 'tool_approved' || event.type === 'tool_rejected'
      ? [{ event, before: events[index - 1]?.at ?? '' }]
      : [],
  );
  const times = recorded.map(({ at }) => at ?? '');
  expect(decisions.length).toBeGreaterThan(0);
  for (const { event, before } of decisions) {
    expect({ at: event.at, recordedOrCarriedOver: times.includes(event.at) || event.at === before }).toEqual({
      at: event.at,
      recordedOrCarriedOver: true,
    });
  }
}

/** The results of a run's local activities of one type, as their markers recorded them, oldest first. */
async function recordedLocalResults(runId: string, activityType: string): Promise<Array<{ at?: string }>> {
  const converter = kit.temporal.options.loadedDataConverter;
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const results: Array<{ at?: string }> = [];
  for (const event of history.events ?? []) {
    const details = event.markerRecordedEventAttributes?.details;
    const data = details?.['data']?.payloads;
    if (!data?.length) continue;
    const marker = await decodeFromPayloadsAtIndex<{ activity_type?: string }>(converter, 0, data);
    if (marker?.activity_type !== activityType) continue;
    results.push(await decodeFromPayloadsAtIndex<{ at?: string }>(converter, 0, details?.['result']?.payloads ?? []));
  }
  return results;
}

/** The type of every activity the run scheduled (not local activities), in order. */
async function scheduledActivityTypes(runId: string): Promise<string[]> {
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  return (history.events ?? []).flatMap((event) => {
    const name = event.activityTaskScheduledEventAttributes?.activityType?.name;
    return name ? [name] : [];
  });
}

/** The results of a run's activities of one type, as history recorded them, in the order they completed. */
async function recordedActivityResults(runId: string, activityType: string): Promise<RecordedResult[]> {
  const converter = kit.temporal.options.loadedDataConverter;
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const ofType = new Set<string>();
  const results: RecordedResult[] = [];
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === activityType) {
      ofType.add(String(event.eventId));
    }
    const completed = event.activityTaskCompletedEventAttributes;
    if (completed && ofType.has(String(completed.scheduledEventId))) {
      results.push(await decodeFromPayloadsAtIndex<RecordedResult>(converter, 0, completed.result?.payloads ?? []));
    }
  }
  return results;
}

/**
 * The times history holds for a run's decisions: the `decidedAt` of each decision its updates and signals carried, and
 * the results of its clock-reading activities.
 */
async function recordedDecisionTimes(runId: string): Promise<Array<{ at?: string }>> {
  const converter = kit.temporal.options.loadedDataConverter;
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const sent: Array<{ at?: string }> = [];
  for (const event of history.events ?? []) {
    const payloads =
      event.workflowExecutionUpdateAcceptedEventAttributes?.acceptedRequest?.input?.args?.payloads ??
      (event.workflowExecutionSignaledEventAttributes?.signalName === 'decide'
        ? event.workflowExecutionSignaledEventAttributes.input?.payloads
        : undefined);
    if (!payloads) continue;
    const decision = await decodeFromPayloadsAtIndex<{ decidedAt?: string }>(converter, 0, payloads);
    if (decision.decidedAt !== undefined) sent.push({ at: decision.decidedAt });
  }
  return [...sent, ...(await recordedActivityResults(runId, 'readClock'))];
}

/** What the tests read of an activity's result: its time, and the catalog a run's first model call brings. */
interface RecordedResult {
  at?: string;
  catalog?: { at?: string };
}

/** When the workflow task that took the run's first signal completed (by the server's clock, this machine's). */
async function taskAfterSignalCompletedAt(runId: string): Promise<number> {
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const events = history.events ?? [];
  const signalled = events.findIndex((event) => event.workflowExecutionSignaledEventAttributes);
  const completed = events.slice(signalled).find((event) => event.workflowTaskCompletedEventAttributes);
  if (signalled < 0 || !completed?.eventTime) throw new Error(`Run ${runId} completed no task after a signal`);
  return Number(completed.eventTime.seconds) * 1_000 + Math.floor((completed.eventTime.nanos ?? 0) / 1e6);
}

/** How many workflow tasks the run started before it scheduled its first model call. */
async function tasksBeforeFirstModelCall(runId: string): Promise<number> {
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  let tasks = 0;
  for (const event of history.events ?? []) {
    if (event.activityTaskScheduledEventAttributes?.activityType?.name === 'callModel') return tasks;
    if (event.workflowTaskStartedEventAttributes) tasks += 1;
  }
  throw new Error(`Run ${runId} never called its model`);
}

/**
 * Starts runs while no worker polls their task queue, each with a follower's query already waiting, then the worker:
 * the query rides on the first workflow task, so the worker answers it while the catalog snapshot (a local activity)
 * runs, and the catalog's result reaches the workflow in a later task than the one that asked for it. The worker must
 * hold the snapshot ({@link slowCatalog}): one that resolved before the query was answered would leave the task whole.
 */
async function startWithFollowersWaiting(
  client: RelayClient,
  inputs: ReadonlyArray<Partial<StartRunOptions>>,
  startWorker: () => Promise<RunningWorker>,
): Promise<{ runIds: string[]; worker: RunningWorker }> {
  const runIds = await Promise.all(inputs.map(async (input) => (await client.startRun({ ...base, ...input })).runId));
  // Without retries: a query the server refuses must say so at once, not be sent again until it is let in.
  const connection = await Connection.connect({ address: kit.address, interceptors: [] });
  try {
    const asking = new Client({ connection, namespace: kit.namespace });
    const waitingAtTheDoor = await Promise.all(runIds.map((runId) => queryHeldForFirstTask(asking, runId)));
    const worker = await startWorker();
    await Promise.all(waitingAtTheDoor.map(({ held }) => held));
    return { runIds, worker };
  } finally {
    await connection.close();
  }
}

/**
 * Asks a run no worker has taken yet for its events twice, and resolves once the server holds one of the two for the
 * run's first workflow task (`held`, its answer to come). Until a worker takes that task the server holds at most one
 * query of the run (history.MaxBufferedQueryCount, 1 by default) and refuses any other at once: one of the two
 * refused says the other is held, which no wait for a while could say.
 */
async function queryHeldForFirstTask(temporal: Client, runId: string): Promise<{ held: Promise<unknown> }> {
  const handle = temporal.workflow.getHandle(runId);
  const asked = [handle.query(eventPageQuery, {}), handle.query(eventPageQuery, {})] as const;
  const refused = await new Promise<0 | 1>((resolve, reject) => {
    for (const index of [0, 1] as const) {
      asked[index].then(
        () => reject(new Error(`Run ${runId} answered a query before any worker polled its task queue`)),
        (error: unknown) => (isQueryBufferFull(error) ? resolve(index) : reject(error as Error)),
      );
    }
  });
  return { held: asked[refused === 0 ? 1 : 0] };
}

/** Whether the server refused a query because it already holds one for the run's next workflow task. */
function isQueryBufferFull(error: unknown): boolean {
  const cause = error instanceof Error ? error.cause : undefined;
  return (
    isGrpcServiceError(cause) &&
    cause.code === status.RESOURCE_EXHAUSTED &&
    /consistent query buffer is full/.test(cause.message)
  );
}

describe('the event log when a follower splits the first workflow task', () => {
  // Step 1: a call that needs approval (its input is checked by an activity first) beside two that do not.
  const turns: ScriptedTurn[] = [
    {
      toolCalls: [
        { name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 1 } },
        { name: 'add', input: { a: 1, b: 2 } },
        { name: 'echo_after', input: { value: 'v', delayMs: 20 } },
      ],
    },
    { text: 'done' },
  ];
  const runs: Array<{ input: Partial<StartRunOptions>; decideBy: 'update' | 'signal'; compacts?: true }> = [
    { input: { prompt: 'pay' }, decideBy: 'update' },
    {
      input: compactingInput('now pay'),
      decideBy: 'signal',
      compacts: true,
    },
    { input: { prompt: 'pay again' }, decideBy: 'update' },
  ];

  /** Follows every run from the start, decides each one's approval (by update or by signal), and returns what it saw. */
  async function followAndDecide(client: RelayClient, runIds: string[]): Promise<Array<Map<number, RunEvent>>> {
    const following = runIds.map((runId) => followLive(client, runId));
    await Promise.all(
      runIds.map(async (runId, index) => {
        await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);
        const decision = { toolCallId: 'call_1_0', approver: 'test' } as const;
        if (runs[index]?.decideBy === 'signal') {
          await client.signalDecision(runId, { ...decision, decision: 'approve' });
        } else {
          await client.approve(runId, decision.toolCallId, { approver: decision.approver });
        }
      }),
    );
    return Promise.all(following);
  }

  /**
   * Before the fix, the first events took the clock of the task that delivered the catalog when live, and the
   * marker's completion time on replay (see startWithFollowersWaiting).
   */
  it('stamps every event with a time from history, so live and replayed reads agree', async () => {
    const taskQueue = uniqueTaskQueue('split-first-task');
    const client = RelayClient.fromClient(kit.temporal, { taskQueue });
    const ledger = createLedger();
    const { runIds, worker: live } = await startWithFollowersWaiting(
      client,
      runs.map(({ input }) => input),
      () =>
        kit.startWorker({
          taskQueue,
          tools: createTestTools(ledger),
          models: { scripted: scriptedModel(turns) },
          workerOptions: { interceptors: { activity: [slowCatalog] } },
        }),
    );
    const followed = await followAndDecide(client, runIds).finally(() => live.stop());
    expect(ledger.transfers).toHaveLength(runs.length);

    const replaying = await kit.startWorker({
      taskQueue,
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel(turns) },
      workerOptions: { maxCachedWorkflows: 0 },
    });
    try {
      for (const [index, runId] of runIds.entries()) {
        const compacts = runs[index]?.compacts === true;
        // Only a run that compacts before its first model call snapshots the catalog in a (local) activity of its
        // own, which the follower's query splits from the first task; the others get it with the first model call.
        if (compacts) expect(await tasksBeforeFirstModelCall(runId)).toBeGreaterThan(1);
        const again = await queriedEvents(kit.temporal, runId);
        expectSameEvents(followed[index] ?? new Map<number, RunEvent>(), again);
        const [catalog] = compacts
          ? await recordedLocalResults(runId, 'snapshotToolCatalog')
          : (await recordedActivityResults(runId, 'callModel')).map((result) => result.catalog);
        const firstEvents = again.filter(
          (event) => event.type === 'run_started' || event.type === 'transcript_compacted',
        );
        expect(firstEvents.map((event) => event.type)).toEqual(
          compacts ? ['run_started', 'transcript_compacted'] : ['run_started'],
        );
        expect(await scheduledActivityTypes(runId)).not.toContain('snapshotToolCatalog');
        if (!compacts) expect(await recordedLocalResults(runId, 'snapshotToolCatalog')).toEqual([]);
        expect(catalog?.at).toEqual(expect.any(String));
        expect(firstEvents.map((event) => event.at)).toEqual(firstEvents.map(() => catalog?.at));
        // The input check before approval is a regular activity, ordered in history with the parallel calls' results.
        expect(await recordedLocalResults(runId, 'checkToolCallInput')).toEqual([]);
        expect(await scheduledActivityTypes(runId)).toContain('checkToolCallInput');
        expectDecisionsAtRecordedTimes(again, await recordedDecisionTimes(runId));
      }
    } finally {
      await replaying.stop();
    }
  });
});

describe('a run that ends in the task that delivers the catalog, when a follower split the first task', () => {
  /**
   * The run fails at once (its newest turn alone is over maxTranscriptBytes), in the continuation of the catalog
   * snapshot. A patch first asked for there (the closed-run record's) was recorded in the second task, while replay
   * resolves the snapshot in the first one: replay failed with a nondeterminism error until the run's patches were
   * decided in its first task.
   */
  it('replays to the events the live run showed', async () => {
    const taskQueue = uniqueTaskQueue('split-first-task-failed');
    const client = RelayClient.fromClient(kit.temporal, { taskQueue });
    // Without the assistant's reply the large output is part of the newest turn, which compaction keeps: the run
    // fails before its first model call.
    const tooLarge = compactingInput('now', { reply: false });
    const start = () =>
      kit.startWorker({
        taskQueue,
        tools: createTestTools(createLedger()),
        models: { scripted: scriptedModel([{ text: 'never asked' }]) },
        workerOptions: { interceptors: { activity: [slowCatalog] } },
      });
    const { runIds, worker: live } = await startWithFollowersWaiting(client, [tooLarge], start);
    const [runId = ''] = runIds;
    const followed = await followLive(client, runId).finally(() => live.stop());
    const handle = kit.temporal.workflow.getHandle(runId);
    await recordHistoryIfRequested(handle, currentHistoryFile('split-first-task-failed'));

    const replaying = await kit.startWorker({
      taskQueue,
      tools: createTestTools(createLedger()),
      models: {},
      workerOptions: { maxCachedWorkflows: 0 },
    });
    try {
      const again = await queriedEvents(kit.temporal, runId);
      expect(again.map((event) => event.type)).toEqual(['run_started', 'transcript_compacted', 'run_failed']);
      expectSameEvents(followed, again);
      // The start and the compaction carry the catalog's own time; the failure the time its clock activity read.
      const [catalog] = await recordedLocalResults(runId, 'snapshotToolCatalog');
      const [failedAt] = await recordedActivityResults(runId, 'readClock');
      expect(again.map((event) => event.at)).toEqual([catalog?.at, catalog?.at, failedAt?.at]);
    } finally {
      await replaying.stop();
    }
    // The premise: the snapshot's result came in a task of its own, before the one that scheduled the failure's clock
    // (unsplit, one task records the snapshot and schedules the clock; the clock's result always brings another).
    const events = (await handle.fetchHistory()).events ?? [];
    const clockScheduled = events.findIndex(
      (event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'readClock',
    );
    expect(clockScheduled).toBeGreaterThan(0);
    const tasksBeforeClock = events
      .slice(0, clockScheduled)
      .filter((event) => event.workflowTaskStartedEventAttributes);
    expect(tasksBeforeClock.length).toBeGreaterThan(1);
  });
});
