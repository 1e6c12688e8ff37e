import { execFile } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { promisify } from 'node:util';
import { Worker } from '@temporalio/worker';
import { afterAll, describe, expect, it } from 'vitest';
import type { RelayClient } from '../../src/client/relay-client.js';
import { findTemporalExecutable } from '../../src/dev/temporal-dev-server.js';
import { relayWorkflowBundle } from '../../src/testing/relay-workflow-bundle.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { bySize, writeResults } from './reliability-kit.js';

const kit = useRelayTestKit();

const runsARound = 12;
const rounds = bySize({ small: 1, large: 5 });
/** The parallel calls of the first step, each waiting for a human. */
const parallelCalls = 8;
/** How far apart the calls' decisions are signalled while the worker starts. */
const signalSpacingMs = 40;

const pay = (to: string) => ({ name: 'transfer_funds', input: { from: 'A', to, amount: 5 } });
/** Eight transfers at once, then one more (which keeps the run open), then an answer. */
const turns = [
  { toolCalls: Array.from({ length: parallelCalls }, (_, index) => pay(`P${index}`)) },
  { toolCalls: [pay('Q')] },
  { text: 'paid' },
];

const figures = { runs: 0, unreplayable: 0, resetAndCompleted: 0, completed: 0, transfersDoneAgainAfterReset: 0 };

afterAll(async () => {
  await writeResults('query-split', { rounds, runsARound, parallelCalls, signalSpacingMs, ...figures });
});

const approve = (client: RelayClient, runId: string, toolCallId: string) =>
  client.signalDecision(runId, { toolCallId, decision: 'approve', approver: 'ops' });

/**
 * Runs parked on eight parallel approvals, queried by a follower while no worker polls; the decisions are signalled
 * as a worker starts, so a worker can take the query with some of them and the rest come in a second activation of
 * the same workflow task (the README roadmap's first item). The runs whose history then no longer replays are counted,
 * and each is recovered as docs/operations.md says: the reset the run's workflow task failure names.
 */
describe('runs whose parallel decisions a waiting query splits', () => {
  it('replay, or are stuck and go on after the reset their failure names, with every transfer under one key', async () => {
    for (let round = 0; round < rounds; round += 1) await splitRound();
    expect(figures.completed).toBe(figures.runs);
    expect(figures.resetAndCompleted).toBe(figures.unreplayable);
  }, 600_000);
});

async function splitRound(): Promise<void> {
  const taskQueue = uniqueTaskQueue('query-split');
  const ledger = createLedger();
  const start = () =>
    kit.startWorker({ taskQueue, tools: createTestTools(ledger), models: { scripted: scriptedModel(turns) } });
  const first = await start();
  const { client } = first;
  const runIds = await Promise.all(
    Array.from(
      { length: runsARound },
      async () => (await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' })).runId,
    ),
  );
  for (const runId of runIds) {
    await waitForRun(client, runId, (run) => run.pendingApprovals.length === parallelCalls);
  }
  await first.stop();
  // A follower's reads: with no workflow task pending and no worker polling, each query waits for a worker.
  const followed = runIds.map((runId) => client.getRun(runId).catch(() => undefined));
  await sleep(1_000);
  await Promise.all(runIds.map((runId) => approve(client, runId, 'call_1_0')));
  const starting = start();
  for (let index = 1; index < parallelCalls; index += 1) {
    await Promise.all(runIds.map((runId) => approve(client, runId, `call_1_${index}`)));
    await sleep(signalSpacingMs);
  }
  const second = await starting;
  await Promise.all(followed);
  for (const runId of runIds) {
    await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_2_0'));
  }
  const stuck = await unreplayable(runIds);
  // A worker without the runs in cache replays each at its next task: the unreplayable ones fail there.
  await second.stop();
  const third = await start();
  try {
    await Promise.all(runIds.map((runId) => approve(client, runId, 'call_2_0')));
    for (const runId of stuck) await resetAsNamed(client, runId);
    for (const runId of runIds) {
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'paid' });
    }
  } finally {
    await third.stop();
  }
  // Each call's transfer ran under one key, however often (a reset does the calls after its point again).
  const keys = new Set(ledger.transfers.map((transfer) => transfer.idempotencyKey));
  expect(keys.size).toBe(runsARound * (parallelCalls + 1));
  figures.runs += runsARound;
  figures.unreplayable += stuck.length;
  figures.resetAndCompleted += stuck.length;
  figures.completed += runsARound;
  figures.transfersDoneAgainAfterReset += ledger.transfers.length - keys.size;
}

/** The runs whose history the shipped workflows no longer replay. */
async function unreplayable(runIds: readonly string[]): Promise<string[]> {
  const workflowBundle = await relayWorkflowBundle();
  const stuck: string[] = [];
  for (const runId of runIds) {
    const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
    const replayed = await Worker.runReplayHistory({ workflowBundle }, history, runId).then(
      () => true,
      () => false,
    );
    if (!replayed) stuck.push(runId);
  }
  return stuck;
}

/** Resets a stuck run to the event its workflow task failure names, then decides again the call signalled after it. */
async function resetAsNamed(client: RelayClient, runId: string): Promise<void> {
  await expect.poll(() => client.workflowTaskFailure(runId), { timeout: 30_000, interval: 250 }).toBeDefined();
  const failure = await client.workflowTaskFailure(runId);
  expect(failure).toMatchObject({ nondeterministic: true, resetEventId: expect.any(Number) as number });
  const address = ['--address', kit.address, '--namespace', kit.namespace];
  const reset = ['--workflow-id', runId, '--event-id', String(failure?.resetEventId), '--reason', 'query split'];
  await promisify(execFile)(await findTemporalExecutable(), ['workflow', 'reset', ...address, ...reset]);
  await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_2_0'));
  await approve(client, runId, 'call_2_0');
}
