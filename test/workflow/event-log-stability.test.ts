import { setTimeout as sleep } from 'node:timers/promises';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { eventPageQuery } from '../../workflows/messages.js';
import type { RelayClient } from '../../src/client/relay-client.js';
import type { RunEvent, RunSnapshot } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import type { StartRunOptions } from '../../src/client/relay-client.js';
import { createRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RelayTestKit } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

let kit: RelayTestKit;

beforeAll(async () => {
  kit = await createRelayTestKit();
});

afterAll(async () => {
  await kit.close();
});

const base = { tenantId: 'acme', model: 'scripted:test' } as const;

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

/** The run's whole event log as a worker reads it through the events query; on a closed run that is a replay. */
async function replayedEvents(runId: string): Promise<RunEvent[]> {
  const handle = kit.temporal.workflow.getHandle(runId);
  const events: RunEvent[] = [];
  for (let after = 0; ;) {
    const page = await handle.query(eventPageQuery, { after });
    events.push(...page.events);
    after = page.nextAfter;
    if (!page.hasMore) return events;
  }
}

/**
 * Reads a run's events as a follower does, from the instant it starts until it ends: a query can arrive while the
 * first workflow task is pending, which is what once split that task and changed the first events' times on replay.
 */
async function followLive(client: RelayClient, runId: string): Promise<Map<number, RunEvent>> {
  const seen = new Map<number, RunEvent>();
  for (;;) {
    const events = await client.events(runId, { after: Math.max(0, ...seen.keys()) }).catch(() => []);
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
      input: {
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
          { role: 'assistant', content: 'Read it.' },
          { role: 'user', content: 'now add' },
        ],
      },
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
    const following = followLive(client, runId);
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
      const again: RunSnapshot = await client.getRun(runId);
      expectSameEvents(new Map(liveBeforeDecisions.map((event) => [event.seq, event])), await client.events(runId));
      expect(again.pendingApprovals).toEqual(waiting.pendingApprovals);
      expect(again.updatedAt).toBe(waiting.updatedAt);
      await client.approve(runId, 'call_1_0', { approver: 'update' });
      await client.signalDecision(runId, { toolCallId: 'call_1_1', decision: 'approve', approver: 'signal' });
      const live = await following;
      await client.result(runId);
      expectSameEvents(live, await replayedEvents(runId));
      expect(ledger.transfers).toHaveLength(2);
    } finally {
      await replaying.stop();
    }
  });
});
