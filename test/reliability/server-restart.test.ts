import { freePort } from '../helpers/free-port.js';
import path from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { bySize, writeResults } from './reliability-kit.js';
import type { ChildModule } from './reliability-kit.js';
import { decideOnce, scratchDirectory, startLedgerWorker, writeWorkflowBundle } from './relay-processes.js';
import type { LedgerWorkerSettings } from './relay-processes.js';
import { TransferLedger, auditFigures, auditTransfers } from './transfer-ledger.js';
import { scopedRunId } from '../../src/shared/run-ids.js';
import { chosenPart } from '../helpers/chosen-run-id.js';

const size = bySize({ small: { runs: 6, settleMs: 90_000 }, large: { runs: 100, settleMs: 600_000 } });
const directory = scratchDirectory('restart');
const dbFilename = path.join(directory, 'temporal.sqlite');
let port: number;
let server: TemporalDevServer;
let worker: ChildModule;
let client: RelayClient;
let ledger: TransferLedger;
let settings: LedgerWorkerSettings;
const restarts = { sigterm: 0, sigkill: 0 };
let workerRestarts = 0;

function startServer(): Promise<TemporalDevServer> {
  return startTemporalDevServer({ dbFilename, port });
}

/** Stops the server with `signal` mid-run and starts it again on the same file and port. */
async function restartServer(signal: 'SIGTERM' | 'SIGKILL'): Promise<void> {
  if (signal === 'SIGTERM') await server.stop();
  else {
    process.kill(server.pid ?? 0, 'SIGKILL');
    // stop() after the kill only waits for the exit the kill caused.
    await server.stop();
  }
  restarts[signal === 'SIGTERM' ? 'sigterm' : 'sigkill'] += 1;
  server = await startServer();
  // A worker that gave up on the server while it was away is replaced; one that reconnected keeps going.
  if (worker.process.exitCode !== null || worker.process.signalCode !== null) {
    worker = await startLedgerWorker(settings);
    workerRestarts += 1;
  }
}

beforeAll(async () => {
  port = await freePort();
  server = await startServer();
  settings = {
    address: server.address,
    taskQueue: uniqueTaskQueue('restart'),
    ledgerFile: path.join(directory, 'ledger.sqlite'),
    bundleFile: await writeWorkflowBundle(directory),
  };
  worker = await startLedgerWorker(settings);
  client = await RelayClient.connect({ address: server.address, taskQueue: settings.taskQueue });
  ledger = new TransferLedger(settings.ledgerFile);
});

afterAll(async () => {
  await worker?.kill();
  await client?.close();
  ledger?.close();
  await server?.stop();
});

async function snapshots(runIds: readonly string[]): Promise<RunSnapshot[]> {
  return Promise.all(runIds.map((runId) => client.getRun(runId)));
}

async function waitForAll(runIds: readonly string[], predicate: (run: RunSnapshot) => boolean): Promise<RunSnapshot[]> {
  const deadline = Date.now() + size.settleMs;
  for (;;) {
    const runs = await snapshots(runIds).catch(() => undefined);
    if (runs?.every(predicate)) return runs;
    if (Date.now() > deadline) throw new Error(`Runs did not reach the state in time: ${JSON.stringify(runs)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

it(
  'resumes runs after the server is stopped with SIGTERM and with SIGKILL, keeping pending approvals pending and decidable',
  async () => {
    const startedAt = Date.now();
    const runIds = Array.from({ length: size.runs }, (_, index) =>
      scopedRunId('restart', `restart-${index}-${startedAt}`),
    );
    const start = (runId: string) =>
      client.startRun({
        runId: chosenPart(runId),
        tenantId: 'restart',
        model: 'scripted:bank',
        prompt: 'pay',
        approvalTimeout: '1h',
      });
    // Half the runs start before the first stop, so some are mid-way through their first steps when it comes.
    const early = runIds.slice(0, Math.ceil(size.runs / 2));
    await Promise.all(early.map(start));
    await waitForAll(early, (run) => run.pendingApprovals.length === 2);
    await Promise.all(runIds.slice(early.length).map(start));

    await restartServer('SIGTERM');
    const afterTerm = await waitForAll(runIds, (run) => run.pendingApprovals.length === 2);
    const pendingAfterTerm = afterTerm.reduce((sum, run) => sum + run.pendingApprovals.length, 0);
    const decisions = new Map<string, 'approve' | 'reject'>();
    const decide = async (runId: string, toolCallId: string, decision: 'approve' | 'reject') => {
      decisions.set(`${runId}/${toolCallId}`, decision);
      return decideOnce(client, runId, toolCallId, decision, 'ops');
    };
    await Promise.all(runIds.map((runId) => decide(runId, 'call_2_0', 'approve')));

    await restartServer('SIGKILL');
    const afterKill = await waitForAll(runIds, (run) => run.pendingApprovals.length === 1);
    expect(afterKill.flatMap((run) => run.pendingApprovals.map((approval) => approval.toolCallId))).toEqual(
      runIds.map(() => 'call_2_1'),
    );
    await Promise.all(runIds.map((runId, index) => decide(runId, 'call_2_1', index % 2 === 0 ? 'approve' : 'reject')));

    const results = await Promise.all(runIds.map((runId) => client.result(runId)));
    const transfers = ledger.transfers();
    const audit = auditTransfers(transfers, decisions);
    const { approved, lost, duplicated, unapproved } = audit;

    await writeResults('server-restart', {
      runsHeld: size.runs,
      runsCompleted: results.filter((result) => result.status === 'completed').length,
      faultsInjected: restarts.sigterm + restarts.sigkill,
      serverSigterms: restarts.sigterm,
      serverSigkills: restarts.sigkill,
      workerRestarts,
      pendingApprovalsKeptAcrossSigterm: pendingAfterTerm,
      pendingApprovalsKeptAcrossSigkill: afterKill.reduce((sum, run) => sum + run.pendingApprovals.length, 0),
      decisionsMade: decisions.size,
      ...auditFigures(audit, transfers.length),
      durationMs: Date.now() - startedAt,
    });

    expect(results.map((result) => result.status)).toEqual(runIds.map(() => 'completed'));
    expect(pendingAfterTerm).toBe(size.runs * 2);
    expect(lost).toEqual([]);
    expect(duplicated).toEqual([]);
    expect(unapproved).toEqual([]);
    expect(transfers).toHaveLength(approved.length);
  },
  bySize({ small: 150_000, large: 2_400_000 }),
);
