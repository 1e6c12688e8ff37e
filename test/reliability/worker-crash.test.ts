import path from 'node:path';
import { afterAll, beforeAll, expect, it, onTestFailed } from 'vitest';
import { inject } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { bySize, reliabilitySeed, seededRandom, writeResults } from './reliability-kit.js';
import type { ChildModule } from './reliability-kit.js';
import { decideOnce, scratchDirectory, startLedgerWorker, writeWorkflowBundle } from './relay-processes.js';
import type { LedgerWorkerSettings } from './relay-processes.js';
import { callOfIdempotencyKey, TransferLedger } from './transfer-ledger.js';
import { scopedRunId } from '../../src/shared/run-ids.js';
import { chosenPart } from '../helpers/chosen-run-id.js';

// Faults come in a window (a number of random kills, and kills right after commits until the window closes),
// then stop, as in Jepsen-style tests: while kills outpace Temporal's 10 s workflow task timeout, runs whose
// tasks sat on a killed worker cannot move, so "every run completes" is checked once the workers are left alone.
const size = bySize({
  small: { runs: 8, workers: 2, randomKills: 4, killEveryMs: [1_000, 3_000] as const, killAfterCommitEvery: 6 },
  large: { runs: 200, workers: 3, randomKills: 60, killEveryMs: [500, 2_000] as const, killAfterCommitEvery: 4 },
});

const timeoutMs = bySize({ small: 150_000, large: 1_800_000 });
const seed = reliabilitySeed();
const random = seededRandom(seed);
const directory = scratchDirectory('crash');
const settings: LedgerWorkerSettings = {
  address: inject('temporalAddress'),
  taskQueue: uniqueTaskQueue('crash'),
  ledgerFile: path.join(directory, 'ledger.sqlite'),
  bundleFile: '',
};
const workers: ChildModule[] = [];
/** Per worker slot, the replacement in progress, so a random and a targeted kill never race on one slot. */
const replacing: Array<Promise<void>> = [];
const kills = { random: 0, afterCommit: 0 };
let commitsSeen = 0;
/** Set when the fault window closes: from then on no worker is killed. */
let healed = false;
let client: RelayClient;
let ledger: TransferLedger;

beforeAll(async () => {
  settings.bundleFile = await writeWorkflowBundle(directory);
  client = await RelayClient.connect({ address: settings.address, taskQueue: settings.taskQueue });
  ledger = new TransferLedger(settings.ledgerFile);
  for (let slot = 0; slot < size.workers; slot++) {
    workers.push(await startLedgerWorker(settings, watchCommits(slot)));
    replacing.push(Promise.resolve());
  }
});

afterAll(async () => {
  healed = true;
  await Promise.all(replacing);
  await Promise.all(workers.map((worker) => worker.kill()));
  ledger?.close();
  await client?.close();
});

/** SIGKILLs the worker in `slot` and starts a fresh one in its place. */
function replaceWorker(slot: number, reason: keyof typeof kills): Promise<void> {
  replacing[slot] = (replacing[slot] ?? Promise.resolve()).then(async () => {
    if (healed) return;
    await workers[slot]?.kill();
    kills[reason] += 1;
    workers[slot] = await startLedgerWorker(settings, watchCommits(slot));
  });
  return replacing[slot];
}

/**
 * Kills a worker right after some of the transfers it commits, before its activity completes: the retry on
 * another worker must find the transfer made and not pay again.
 */
function watchCommits(slot: number): (line: string) => void {
  return (line) => {
    if (line.startsWith('committed ') && commitsSeen++ % size.killAfterCommitEvery === 0)
      void replaceWorker(slot, 'afterCommit');
  };
}

/** Every third run has its second transfer rejected; everything else is approved. */
function decisionFor(runIndex: number, toolCallId: string): 'approve' | 'reject' {
  return toolCallId === 'call_2_1' && runIndex % 3 === 0 ? 'reject' : 'approve';
}

const between = ([low, high]: readonly [number, number]) => low + Math.floor(random() * (high - low));

it(
  'completes every run and makes each approved transfer exactly once while workers are SIGKILLed at random moments',
  async () => {
    const startedAt = Date.now();
    const runIds = Array.from({ length: size.runs }, (_, index) => scopedRunId('crash', `crash-${seed}-${index}`));
    onTestFailed(async () => console.error(`The runs still open:\n${await describeOpenRuns(runIds)}`));
    await Promise.all(
      runIds.map((runId) =>
        client.startRun({
          runId: chosenPart(runId),
          tenantId: 'crash',
          model: 'scripted:bank',
          prompt: 'pay',
          approvalTimeout: '1h',
        }),
      ),
    );

    const decided = new Map<string, 'approve' | 'reject'>();
    const decisions: Array<Promise<unknown>> = [];
    let healedAt = 0;

    const faultWindow = (async () => {
      while (kills.random < size.randomKills) {
        await new Promise((resolve) => setTimeout(resolve, between(size.killEveryMs)));
        await replaceWorker(Math.floor(random() * workers.length), 'random');
      }
      // Runs may reach their transfers only after the random kills are done: the window stays open until a worker
      // has also died right after a commit (the first commit always kills one).
      while (kills.afterCommit === 0) await new Promise((resolve) => setTimeout(resolve, 100));
      healed = true;
      healedAt = Date.now();
    })();

    // Decide every pending call as soon as it shows up, while the killer keeps going.
    const expectedDecisions = size.runs * 2;
    while (decided.size < expectedDecisions) {
      const snapshots = await Promise.all(runIds.map((runId) => client.getRun(runId).catch(() => undefined)));
      for (const snapshot of snapshots.filter((item): item is RunSnapshot => item !== undefined)) {
        for (const { toolCallId } of snapshot.pendingApprovals) {
          const key = `${snapshot.runId}/${toolCallId}`;
          if (decided.has(key)) continue;
          const decision = decisionFor(runIds.indexOf(snapshot.runId), toolCallId);
          decided.set(key, decision);
          decisions.push(decideOnce(client, snapshot.runId, toolCallId, decision, 'ops'));
        }
      }
      if (Date.now() - startedAt > timeoutMs) {
        throw new Error(
          `Only ${decided.size} decisions in time; the runs still open:\n${await describeOpenRuns(runIds)}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await Promise.all(decisions);
    await faultWindow;
    await Promise.all(replacing);

    const results = await Promise.all(runIds.map((runId) => client.result(runId)));
    const durationMs = Date.now() - startedAt;
    const faultWindowMs = healedAt - startedAt;
    const trouble = await workflowTaskTrouble(runIds);
    const transfers = ledger.transfers();
    const attempts = ledger.attempts().filter((attempt) => attempt.tool === 'transfer_funds');
    const approved = [...decided].filter(([, decision]) => decision === 'approve').map(([key]) => key);
    const rejected = [...decided].filter(([, decision]) => decision === 'reject').map(([key]) => key);
    const madeByKey = new Map<string, number>();
    for (const { key } of transfers) {
      const call = callOfIdempotencyKey(key);
      madeByKey.set(call, (madeByKey.get(call) ?? 0) + 1);
    }
    const lost = approved.filter((key) => !madeByKey.has(key));
    // A transfer the run reported as done must be in the ledger; one that ran out of retries must say so.
    const reportedDone = new Set<string>();
    for (const runId of runIds) {
      for (const event of await client.events(runId)) {
        if (event.type === 'tool_succeeded' && event.toolName === 'transfer_funds') {
          reportedDone.add(`${runId}/${event.toolCallId}`);
        }
      }
    }
    const silentlyLost = [...reportedDone].filter((key) => !madeByKey.has(key));
    const reportedFailed = approved.filter((key) => !reportedDone.has(key));
    const duplicated = [...madeByKey].filter(([, count]) => count > 1).map(([key]) => key);
    const unapproved = [...madeByKey.keys()].filter((key) => decided.get(key) !== 'approve');

    await writeResults('worker-crash', {
      seed,
      runsHeld: size.runs,
      runsCompleted: results.filter((result) => result.status === 'completed').length,
      faultsInjected: kills.random + kills.afterCommit,
      workerSigkillsAtRandom: kills.random,
      workerSigkillsAfterCommit: kills.afterCommit,
      workerProcesses: size.workers,
      decisionsMade: decided.size,
      approved: approved.length,
      rejected: rejected.length,
      transfersMade: transfers.length,
      transferAttempts: attempts.length,
      retriesAbsorbedByIdempotency: attempts.filter((attempt) => attempt.outcome === 'already_done').length,
      workerProcessesThatTransferred: new Set(transfers.map((transfer) => transfer.pid)).size,
      lost: lost.length,
      silentlyLost: silentlyLost.length,
      reportedFailedAfterRetries: reportedFailed.length,
      duplicated: duplicated.length,
      unapprovedExecuted: unapproved.length,
      ...trouble,
      faultWindowMs,
      completedAfterFaultsMs: durationMs - faultWindowMs,
      durationMs,
    });

    expect(results.map((result) => result.status)).toEqual(runIds.map(() => 'completed'));
    expect(kills.random).toBe(size.randomKills);
    expect(kills.afterCommit).toBeGreaterThan(0);
    expect(silentlyLost).toEqual([]);
    expect(reportedFailed).toEqual([]);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(unapproved).toEqual([]);
    expect(transfers).toHaveLength(approved.length);
    expect(rejected.length).toBeGreaterThan(0);
  },
  timeoutMs + 60_000,
);

/** How the runs' workflow tasks fared: timeouts are what a killed worker leaves; failures name their cause. */
async function workflowTaskTrouble(runIds: readonly string[]) {
  let workflowTasksTimedOut = 0;
  const workflowTaskFailures: Record<string, number> = {};
  for (const runId of runIds) {
    const events = (await client.temporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
    for (const event of events) {
      if (event.workflowTaskTimedOutEventAttributes) workflowTasksTimedOut += 1;
      const failed = event.workflowTaskFailedEventAttributes;
      if (failed) {
        const key = `${String(failed.cause)}: ${failed.failure?.message?.split('\n')[0] ?? ''}`;
        workflowTaskFailures[key] = (workflowTaskFailures[key] ?? 0) + 1;
      }
    }
  }
  return { workflowTasksTimedOut, workflowTaskFailures };
}

/** For a stalled suite: each open run's pending work and last history events, to tell a slow run from a stuck one. */
async function describeOpenRuns(runIds: readonly string[]): Promise<string> {
  const lines: string[] = [];
  for (const runId of runIds) {
    const handle = client.temporal.workflow.getHandle(runId);
    const { raw, status } = await handle.describe();
    if (status.name !== 'RUNNING') continue;
    const events = (await handle.fetchHistory()).events ?? [];
    const last = events.slice(-6).map((event) => Object.keys(event).find((key) => key.endsWith('Attributes')));
    const activities = (raw.pendingActivities ?? []).map(
      (activity) =>
        `${activity.activityType?.name} state=${String(activity.state)} attempt=${activity.attempt} ` +
        `failure=${activity.lastFailure?.message ?? '-'}`,
    );
    const task = raw.pendingWorkflowTask;
    const lastFailure = events.findLast(
      (event) => event.workflowTaskFailedEventAttributes,
    )?.workflowTaskFailedEventAttributes;
    lines.push(
      `${runId}: last events ${last.join(', ')}; activities [${activities.join('; ')}]; ` +
        `workflow task ${task ? `state=${String(task.state)} attempt=${task.attempt}` : 'none'}` +
        (lastFailure
          ? `; last workflow task failure ${String(lastFailure.cause)}: ${lastFailure.failure?.message ?? ''}\n` +
            `${lastFailure.failure?.stackTrace ?? ''}`
          : ''),
    );
  }
  return lines.join('\n');
}
