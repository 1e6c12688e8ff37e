import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { inject } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { bySize, reliabilitySeed, seededRandom, writeResults } from './reliability-kit.js';
import type { ChildModule } from './reliability-kit.js';
import { decideOnce, scratchDirectory, startLedgerWorker, writeWorkflowBundle } from './relay-processes.js';
import type { LedgerWorkerSettings } from './relay-processes.js';
import { TransferLedger } from './transfer-ledger.js';

const size = bySize({
  small: { runs: 8, workers: 2, minKills: 2, killEveryMs: [1_000, 3_000] as const, killAfterCommitEvery: 6 },
  large: { runs: 200, workers: 3, minKills: 40, killEveryMs: [500, 2_000] as const, killAfterCommitEvery: 4 },
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
let stopping = false;
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
  stopping = true;
  await Promise.all(replacing);
  await Promise.all(workers.map((worker) => worker.kill()));
  ledger?.close();
  await client?.close();
});

/** SIGKILLs the worker in `slot` and starts a fresh one in its place. */
function replaceWorker(slot: number, reason: keyof typeof kills): Promise<void> {
  replacing[slot] = (replacing[slot] ?? Promise.resolve()).then(async () => {
    if (stopping) return;
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
  return toolCallId === 'pay_b' && runIndex % 3 === 0 ? 'reject' : 'approve';
}

const between = ([low, high]: readonly [number, number]) => low + Math.floor(random() * (high - low));

it(
  'completes every run and makes each approved transfer exactly once while workers are SIGKILLed at random moments',
  async () => {
    const startedAt = Date.now();
    const runIds = Array.from({ length: size.runs }, (_, index) => `crash-${seed}-${index}`);
    await Promise.all(
      runIds.map((runId) =>
        client.startRun({ runId, tenantId: 'crash', model: 'scripted:bank', prompt: 'pay', approvalTimeout: '1h' }),
      ),
    );

    const decided = new Map<string, 'approve' | 'reject'>();
    const decisions: Array<Promise<unknown>> = [];
    let done = false;

    const killer = (async () => {
      while (!done || kills.random < size.minKills) {
        await new Promise((resolve) => setTimeout(resolve, between(size.killEveryMs)));
        await replaceWorker(Math.floor(random() * workers.length), 'random');
      }
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
      if (Date.now() - startedAt > timeoutMs) throw new Error(`Only ${decided.size} decisions in time`);
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    await Promise.all(decisions);
    done = true;
    await killer;
    await Promise.all(replacing);

    const results = await Promise.all(runIds.map((runId) => client.result(runId)));
    const durationMs = Date.now() - startedAt;
    const transfers = ledger.transfers();
    const attempts = ledger.attempts().filter((attempt) => attempt.tool === 'transfer_funds');
    const approved = [...decided].filter(([, decision]) => decision === 'approve').map(([key]) => key);
    const rejected = [...decided].filter(([, decision]) => decision === 'reject').map(([key]) => key);
    const madeByKey = new Map<string, number>();
    for (const { key } of transfers) madeByKey.set(key, (madeByKey.get(key) ?? 0) + 1);
    const lost = approved.filter((key) => !madeByKey.has(key));
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
      duplicated: duplicated.length,
      unapprovedExecuted: unapproved.length,
      durationMs,
    });

    expect(results.map((result) => result.status)).toEqual(runIds.map(() => 'completed'));
    expect(kills.random).toBeGreaterThanOrEqual(size.minKills);
    expect(kills.afterCommit).toBeGreaterThan(0);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(unapproved).toEqual([]);
    expect(transfers).toHaveLength(approved.length);
    expect(rejected.length).toBeGreaterThan(0);
  },
  timeoutMs + 60_000,
);
