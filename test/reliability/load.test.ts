import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import type { RunEvent } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { bySize, percentile, startChildModule, writeResults } from './reliability-kit.js';
import type { ChildModule } from './reliability-kit.js';
import { scopedRunId } from '../../src/shared/run-ids.js';
import { chosenPart } from '../helpers/chosen-run-id.js';

const size = bySize({ small: { runs: 50 }, large: { runs: 300 } });
const tenantId = `load-${randomUUID().slice(0, 8)}`;
const ledger = createLedger();
const kit = useRelayTestKit();
let worker: RunningWorker;
let decider: ChildModule | undefined;

interface DecisionLine {
  runId: string;
  toolCallId: string;
  decision: 'approve' | 'reject';
  accepted: number;
  refusals: number;
  roundTripMs: number;
  waitedMs: number;
}

beforeAll(async () => {
  worker = await kit.startWorker({
    tools: createTestTools(ledger),
    models: {
      scripted: scriptedModel((call) =>
        call.step === 1
          ? { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: call.runId, amount: 1 } }] }
          : { text: 'done' },
      ),
    },
    workerOptions: { maxCachedWorkflows: 2 * size.runs, maxConcurrentWorkflowTaskExecutions: 20 },
  });
});

afterAll(async () => {
  await decider?.kill();
  await worker?.stop();
});

it(
  'holds concurrent runs whose approvals come from another process, losing none and applying no decision twice',
  async () => {
    const lines: DecisionLine[] = [];
    const decided = new Promise<void>((resolve) => {
      void startChildModule(
        path.join(import.meta.dirname, 'decider-process.ts'),
        {
          TEMPORAL_ADDRESS: kit.address,
          TASK_QUEUE: worker.taskQueue,
          TENANT_ID: tenantId,
          EXPECTED_DECISIONS: String(size.runs),
        },
        (line) => {
          lines.push(JSON.parse(line) as DecisionLine);
          if (lines.length === size.runs) resolve();
        },
      ).then((child) => (decider = child));
    });

    const startedAt = Date.now();
    const runIds = Array.from({ length: size.runs }, (_, index) => scopedRunId(tenantId, `load-${tenantId}-${index}`));
    await Promise.all(
      runIds.map((runId) =>
        worker.client.startRun({
          runId: chosenPart(runId),
          tenantId,
          model: 'scripted:load',
          prompt: 'pay',
          approvalTimeout: '10m',
        }),
      ),
    );
    const startSeconds = (Date.now() - startedAt) / 1_000;
    await decided;
    const results = await Promise.all(runIds.map((runId) => worker.client.result(runId)));
    const seconds = (Date.now() - startedAt) / 1_000;

    // Read in slices: hundreds of queries at once would time out waiting for the worker, which proves nothing.
    const decisionEvents: RunEvent[][] = [];
    for (let from = 0; from < runIds.length; from += 25) {
      const slice = runIds
        .slice(from, from + 25)
        .map(async (runId) =>
          (await worker.client.events(runId)).filter(
            (event) => event.type === 'tool_approved' || event.type === 'tool_rejected',
          ),
        );
      decisionEvents.push(...(await Promise.all(slice)));
    }
    const approvedRuns = new Set(lines.filter((line) => line.decision === 'approve').map((line) => line.runId));
    const transfersByRun = new Map<string, number>();
    for (const transfer of ledger.transfers)
      transfersByRun.set(transfer.to, (transfersByRun.get(transfer.to) ?? 0) + 1);
    const lost = runIds.filter(
      (runId, index) => decisionEvents[index]?.length !== 1 || (approvedRuns.has(runId) && !transfersByRun.has(runId)),
    );
    const duplicated = [
      ...runIds.filter((_, index) => (decisionEvents[index]?.length ?? 0) > 1),
      ...[...transfersByRun].filter(([, count]) => count > 1).map(([runId]) => runId),
    ];
    const roundTrips = lines.map((line) => line.roundTripMs);
    const waits = lines.map((line) => line.waitedMs);

    await writeResults('load', {
      runsHeld: size.runs,
      runsCompleted: results.filter((result) => result.status === 'completed').length,
      decisionsMade: lines.length,
      decisionsSentTwice: lines.length,
      secondDecisionsRefused: lines.reduce((sum, line) => sum + line.refusals, 0),
      transfersMade: ledger.transfers.length,
      lost: lost.length,
      duplicated: duplicated.length,
      runsStartedPerSecond: Number((size.runs / startSeconds).toFixed(1)),
      runsCompletedPerSecond: Number((size.runs / seconds).toFixed(1)),
      decisionRoundTripMs: { p50: percentile(roundTrips, 0.5), p99: percentile(roundTrips, 0.99) },
      approvalRequestedToDecidedMs: { p50: percentile(waits, 0.5), p99: percentile(waits, 0.99) },
      durationMs: Math.round(seconds * 1_000),
    });

    expect(results.map((result) => result.status)).toEqual(runIds.map(() => 'completed'));
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(lines.every((line) => line.accepted === 1 && line.refusals === 1)).toBe(true);
    expect(ledger.transfers).toHaveLength(approvedRuns.size);
  },
  bySize({ small: 120_000, large: 900_000 }),
);
