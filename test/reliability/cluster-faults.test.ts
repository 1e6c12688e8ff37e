import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { RelayError } from '../../src/shared/errors.js';
import { startTemporalCluster } from '../helpers/temporal-cluster.js';
import type { TemporalCluster } from '../helpers/temporal-cluster.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { bySize, percentile, writeResults } from './reliability-kit.js';
import type { ChildModule } from './reliability-kit.js';
import {
  decideOnce,
  isDecisionOn,
  scratchDirectory,
  startLedgerWorker,
  writeWorkflowBundle,
} from './relay-processes.js';
import type { LedgerWorkerSettings } from './relay-processes.js';
import { TransferLedger, auditFigures, auditTransfers } from './transfer-ledger.js';
import { scopedRunId } from '../../src/shared/run-ids.js';
import { chosenPart } from '../helpers/chosen-run-id.js';

// Faults on the production topology: PostgreSQL and two Temporal Server nodes (scripts/cluster.sh), one ledger
// worker on each node's frontend. With runs parked on approvals, mid-tool and mid-model-call, started through
// both frontends: SIGKILL node 1 while deciding and starting runs through node 2, bring it back; then stop
// PostgreSQL abruptly (`pg_ctl stop -m immediate`) while deciding, and start it again.
const size = bySize({
  small: { parked: 4, midTool: 2, midModel: 2, startedInOutage: 2, nodeDownMs: 8_000, databaseDownMs: 5_000 },
  large: { parked: 40, midTool: 20, midModel: 20, startedInOutage: 20, nodeDownMs: 15_000, databaseDownMs: 20_000 },
});
const timeoutMs = bySize({ small: 420_000, large: 1_800_000 });
/** Slow enough that a fault lands inside model calls and tool calls, not between them. */
const modelDelayMs = 2_000;
const toolDelayMs = 2_000;
/** How long a client keeps retrying a refused call: longer than any outage here. */
const retryPatienceMs = 180_000;

const directory = scratchDirectory('cluster-faults');
let cluster: TemporalCluster;
let settings: LedgerWorkerSettings[];
const workers: ChildModule[] = [];
let workerRestarts = 0;
/** One client per node's frontend, node 1 first. */
let clients: RelayClient[];
let ledger: TransferLedger;

beforeAll(async () => {
  cluster = await startTemporalCluster();
  const base = {
    taskQueue: uniqueTaskQueue('cluster'),
    ledgerFile: path.join(directory, 'ledger.sqlite'),
    bundleFile: await writeWorkflowBundle(directory),
    modelDelayMs,
    toolDelayMs,
  };
  settings = cluster.addresses.map((address) => ({ ...base, address }));
  for (const workerSettings of settings) workers.push(await startLedgerWorker(workerSettings));
  clients = await Promise.all(
    cluster.addresses.map((address) => RelayClient.connect({ address, taskQueue: base.taskQueue })),
  );
  ledger = new TransferLedger(base.ledgerFile);
}, 600_000);

afterAll(async () => {
  await Promise.all(workers.map((worker) => worker.kill()));
  await Promise.all((clients ?? []).map((client) => client.close()));
  ledger?.close();
  await cluster?.stop();
});

/** Calls retried because the cluster refused them, by what refused them. */
const retried = {
  calls: 0,
  decisions: new Set<string>(),
  starts: new Set<string>(),
  byReason: {} as Record<string, number>,
};

function noteRetry(kind: 'decisions' | 'starts', key: string, error: unknown): void {
  retried.calls += 1;
  retried[kind].add(key);
  const reason = describeRefusal(error);
  retried.byReason[reason] = (retried.byReason[reason] ?? 0) + 1;
}

/**
 * Makes `call` through each client in turn until one succeeds, as a client given every node's frontend fails over:
 * a refused call (a dead node) is retried through the next node. Gives up after {@link retryPatienceMs}.
 */
async function throughAnyNode<T>(
  order: readonly RelayClient[],
  onRetry: (error: unknown) => void,
  call: (client: RelayClient) => Promise<T>,
): Promise<T> {
  const deadline = Date.now() + retryPatienceMs;
  for (let attempt = 0; ; attempt++) {
    try {
      return await call(order[attempt % order.length] as RelayClient);
    } catch (error) {
      if (Date.now() > deadline) throw error;
      onRetry(error);
      await sleep(500);
    }
  }
}

/** Why the cluster refused a call: Relay-E's error code, else the gRPC error under the SDK's wrapper. */
function describeRefusal(error: unknown): string {
  if (RelayError.isInstance(error)) return error.code;
  const cause = error instanceof Error && error.cause instanceof Error ? error.cause : error;
  return (
    String(cause instanceof Error ? cause.message : cause)
      .split('\n')[0]
      ?.slice(0, 100) ?? 'unknown'
  );
}

/** Starts a run; a retry that finds the run started means an earlier attempt went through after all. */
async function startRun(order: readonly RelayClient[], runId: string): Promise<void> {
  await throughAnyNode(
    order,
    (error) => noteRetry('starts', runId, error),
    async (client) => {
      try {
        await client.startRun({
          runId: chosenPart(runId),
          tenantId: 'cluster',
          model: 'scripted:bank',
          prompt: 'pay',
          approvalTimeout: '1h',
        });
      } catch (error) {
        if (!(RelayError.hasCode(error, 'run_already_exists') && retried.starts.has(runId))) throw error;
      }
    },
  );
}

const decisions = new Map<string, 'approve' | 'reject'>();
/** Decision round trips, first send to accepted, of the decisions sent as each fault struck. */
const decisionMs: Record<'nodeKill' | 'databaseStop', number[]> = { nodeKill: [], databaseStop: [] };
/** When each decision sent as a fault struck was accepted (`Date.now()`). */
const decisionAcceptedAt: Record<'nodeKill' | 'databaseStop', number[]> = { nodeKill: [], databaseStop: [] };

/** Every third run's second transfer is rejected; everything else is approved. */
function decisionFor(runId: string, toolCallId: string): 'approve' | 'reject' {
  return toolCallId === 'call_2_1' && Number(runId.split('-').at(-1)) % 3 === 0 ? 'reject' : 'approve';
}

async function decide(
  order: readonly RelayClient[],
  runId: string,
  toolCallId: string,
  fault?: keyof typeof decisionMs,
): Promise<void> {
  const key = `${runId}/${toolCallId}`;
  const decision = decisionFor(runId, toolCallId);
  decisions.set(key, decision);
  const sentAt = Date.now();
  await throughAnyNode(
    order,
    (error) => noteRetry('decisions', key, error),
    (client) => decideOnce(client, runId, toolCallId, decision, 'ops', { attempts: 1 }),
  );
  if (!fault) return;
  decisionAcceptedAt[fault].push(Date.now());
  decisionMs[fault].push(Date.now() - sentAt);
}

/** The clients in the order run `index` uses them: node 1 first for even indexes, node 2 first for odd ones. */
function nodesFor(index: number): RelayClient[] {
  return index % 2 === 0 ? clients : [...clients].reverse();
}

/** Waits until every run answers a query through `client` again; each run's wait since `since`, in ms. */
async function unreachableMs(client: RelayClient, runIds: readonly string[], since: number): Promise<number[]> {
  return Promise.all(
    runIds.map(async (runId) => {
      for (;;) {
        try {
          await client.getRun(runId);
          return Date.now() - since;
        } catch (error) {
          if (Date.now() - since > retryPatienceMs) throw error;
          await sleep(200);
        }
      }
    }),
  );
}

async function waitForPending(runIds: readonly string[], count: (runId: string) => number): Promise<void> {
  const deadline = Date.now() + retryPatienceMs;
  for (;;) {
    const runs = await Promise.all(
      runIds.map((runId) => (clients[1] as RelayClient).getRun(runId).catch(() => undefined)),
    );
    if (runs.every((run, index) => run?.pendingApprovals.length === count(runIds[index] ?? ''))) return;
    if (Date.now() > deadline) throw new Error(`Runs did not reach their approvals in time: ${JSON.stringify(runs)}`);
    await sleep(250);
  }
}

/** Runs named `<group>-<time>-<index>`, started alternately through node 1 and node 2. */
async function startGroup(group: string, count: number): Promise<string[]> {
  const runIds = Array.from({ length: count }, (_, index) => scopedRunId('cluster', `${group}-${Date.now()}-${index}`));
  await Promise.all(runIds.map((runId, index) => startRun(nodesFor(index), runId)));
  return runIds;
}

/** Starts a mid-tool group, then a mid-model group, timed so the fault that follows finds each inside its call. */
async function startRunsInFlight(label: string): Promise<string[]> {
  const midTool = await startGroup(`${label}-tool`, size.midTool);
  await sleep(modelDelayMs);
  const midModel = await startGroup(`${label}-model`, size.midModel);
  await sleep(modelDelayMs / 2);
  return [...midTool, ...midModel];
}

/** Replaces a worker that gave up while its frontend was away. */
async function replaceExitedWorkers(): Promise<void> {
  for (const [slot, worker] of workers.entries()) {
    if (worker.process.exitCode === null && worker.process.signalCode === null) continue;
    workers[slot] = await startLedgerWorker(settings[slot] as LedgerWorkerSettings);
    workerRestarts += 1;
  }
}

it(
  'completes every run and makes each approved transfer exactly once across a node SIGKILL and an abrupt database stop',
  async () => {
    const startedAt = Date.now();
    const [nodeOne, nodeTwo] = clients as [RelayClient, RelayClient];

    // Fault 1: SIGKILL node 1 with runs parked, mid-tool and mid-model; decide and start through node 2 meanwhile.
    const parked = await startGroup('parked', size.parked);
    await waitForPending(parked, () => 2);
    const inFlightAtKill = await startRunsInFlight('kill');
    const killedAt = Date.now();
    await cluster.killNode(1);
    const probes = unreachableMs(nodeTwo, [...parked, ...inFlightAtKill], killedAt);
    // Half of these calls go to the dead node first and are refused: the client retries through node 2.
    const killDecisions = Promise.all(
      parked.map((runId, index) => decide(nodesFor(index), runId, 'call_2_0', 'nodeKill')),
    );
    const startedInOutage = await startGroup('outage', size.startedInOutage);
    await sleep(Math.max(0, size.nodeDownMs - (Date.now() - killedAt)));
    await cluster.startNode(1);
    const killUnreachable = await probes;
    await killDecisions;
    const nodeDownMs = Date.now() - killedAt;
    await replaceExitedWorkers();

    // Fault 2: stop PostgreSQL abruptly with runs parked and in flight; decide through both nodes meanwhile.
    const waitingForSecondCall = [...inFlightAtKill, ...startedInOutage];
    await waitForPending(waitingForSecondCall, () => 2);
    await waitForPending(parked, () => 1);
    const inFlightAtStop = await startRunsInFlight('stop');
    const stoppedAt = Date.now();
    await cluster.stopDatabase('immediate');
    // A run whose state a history node holds in memory may still answer queries while the database is down.
    const stopProbes = unreachableMs(nodeOne, [...parked, ...inFlightAtStop], stoppedAt);
    const databaseDecisions = Promise.all(
      parked.map((runId, index) => decide(nodesFor(index), runId, 'call_2_1', 'databaseStop')),
    );
    await sleep(size.databaseDownMs);
    const databaseRestartedAt = Date.now();
    await cluster.startDatabase();
    const databaseDownMs = Date.now() - stoppedAt;
    const stopUnreachable = await stopProbes;
    await databaseDecisions;
    await replaceExitedWorkers();

    // Healed: decide whatever is still pending, through alternate nodes, until every run has ended.
    const runIds = [...parked, ...waitingForSecondCall, ...inFlightAtStop];
    const rest = [...waitingForSecondCall, ...inFlightAtStop];
    await waitForPending(rest, () => 2);
    await Promise.all(
      rest.flatMap((runId, index) =>
        ['call_2_0', 'call_2_1'].map((toolCallId) => decide(nodesFor(index), runId, toolCallId)),
      ),
    );
    const results = await Promise.all(runIds.map((runId) => nodeOne.result(runId)));

    const transfers = ledger.transfers();
    const audit = auditTransfers(transfers, decisions);
    const { approved, lost, duplicated, unapproved } = audit;
    const decisionEvents = new Map<string, number>();
    for (const runId of runIds) {
      const events = await nodeTwo.events(runId);
      for (const toolCallId of ['call_2_0', 'call_2_1']) {
        decisionEvents.set(`${runId}/${toolCallId}`, events.filter((event) => isDecisionOn(event, toolCallId)).length);
      }
    }
    const decisionsNotAppliedOnce = [...decisions.keys()].filter((key) => decisionEvents.get(key) !== 1);
    const figures = (values: number[]) => ({
      p50: percentile(values, 0.5),
      p99: percentile(values, 0.99),
      max: Math.max(0, ...values),
    });

    await writeResults('cluster-faults', {
      topology: { temporalNodes: cluster.addresses.length, historyShards: 4, database: 'PostgreSQL 15', workers: 2 },
      runs: runIds.length,
      runsCompleted: results.filter((result) => result.status === 'completed').length,
      runsAtNodeKill: { parkedOnApprovals: parked.length, midToolOrModelCall: inFlightAtKill.length },
      runsAtDatabaseStop: { parkedOnApprovals: parked.length, midToolOrModelCall: inFlightAtStop.length },
      nodeKill: {
        nodeDownMs,
        runsStartedThroughSurvivor: startedInOutage.length,
        runUnreachableMs: figures(killUnreachable),
        decisionsSent: decisionMs.nodeKill.length,
        decisionRoundTripMs: figures(decisionMs.nodeKill),
      },
      databaseStop: {
        mode: 'pg_ctl stop -m immediate',
        databaseDownMs,
        runUnreachableMs: figures(stopUnreachable),
        decisionsSent: decisionMs.databaseStop.length,
        decisionRoundTripMs: figures(decisionMs.databaseStop),
      },
      decisionsMade: decisions.size,
      decisionsRetried: retried.decisions.size,
      startsRetried: retried.starts.size,
      callsRetried: retried.calls,
      retriesByReason: retried.byReason,
      decisionsNotAppliedOnce: decisionsNotAppliedOnce.length,
      workerRestarts,
      ...auditFigures(audit, transfers.length),
      durationMs: Date.now() - startedAt,
    });

    expect(results.map((result) => result.status)).toEqual(runIds.map(() => 'completed'));
    expect(decisionsNotAppliedOnce).toEqual([]);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(unapproved).toEqual([]);
    expect(transfers).toHaveLength(approved.length);
    // The premise: every decision sent with the database down was held until it came back, none accepted before.
    expect(decisionAcceptedAt.databaseStop).toHaveLength(parked.length);
    expect(decisionAcceptedAt.databaseStop.filter((acceptedAt) => acceptedAt < databaseRestartedAt)).toEqual([]);
  },
  timeoutMs,
);
