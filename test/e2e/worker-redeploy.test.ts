import { randomUUID } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { readHistory } from '../../src/client/read-history.js';
import { RelayClient } from '../../src/client/relay-client.js';
import { withEffectWarning } from '../../src/shared/tool-result.js';
import { within } from '../../src/shared/within.js';
import { ledgerVariable } from '../fixtures/worker-redeploy/relay-e.config.js';
import { spawnRelayE } from '../helpers/relay-e-process.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const configFile = path.join(root, 'test/fixtures/worker-redeploy/relay-e.config.ts');
/** Bounds every wait on the processes and the run: worker starts take seconds each on a busy 2-core CI machine. */
const waitMs = 30_000;

let folder: string;
const workers: Array<ReturnType<typeof spawnRelayE>> = [];
const clients: RelayClient[] = [];

beforeAll(async () => {
  // The workers keep their model-call contexts and the ledger under this folder: a fresh one for this file.
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-worker-redeploy-'));
});

afterAll(async () => {
  for (const worker of workers) {
    if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGKILL');
  }
  await Promise.all(workers.map((worker) => worker.exited));
  await Promise.all(clients.map((client) => client.close()));
  if (folder) await rm(folder, { recursive: true, force: true });
});

/** A task queue and a ledger of its own for one test, and a client on that queue. */
async function freshProject(label: string) {
  const taskQueue = `worker-redeploy-${label}-${randomUUID()}`;
  const client = await RelayClient.connect({ address: inject('temporalAddress'), taskQueue });
  clients.push(client);
  return { taskQueue, ledger: path.join(folder, `${label}.ledger`), client };
}

/** Starts `relay-e worker` with the fixture's config; `grace` sets RELAY_E_SHUTDOWN_GRACE, else the default holds. */
function startWorker(taskQueue: string, ledger: string, grace?: string) {
  const { RELAY_E_API_KEYS: _keys, TEMPORAL_PROFILE: _profile, RELAY_E_SHUTDOWN_GRACE: _grace, ...env } = process.env;
  const worker = spawnRelayE(['worker', '--json', '--config', configFile], {
    cwd: folder,
    env: {
      ...env,
      TEMPORAL_ADDRESS: inject('temporalAddress'),
      RELAY_E_TASK_QUEUE: taskQueue,
      [ledgerVariable]: ledger,
      ...(grace !== undefined ? { RELAY_E_SHUTDOWN_GRACE: grace } : {}),
    },
  });
  workers.push(worker);
  return worker;
}

/** Waits for the worker's ready line and returns its process id, which the tool writes in the ledger. */
async function readyPid(worker: ReturnType<typeof spawnRelayE>, taskQueue: string): Promise<number> {
  expect(JSON.parse(await worker.nextLine())).toMatchObject({ status: 'ready', taskQueue });
  const { pid } = worker.child;
  if (pid === undefined) throw new Error('the worker has no process id');
  return pid;
}

async function readLedger(ledger: string): Promise<string[]> {
  const text = await readFile(ledger, 'utf8').catch((error: unknown) => {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
    throw error;
  });
  return text.split('\n').filter((line) => line !== '');
}

/** How Temporal recorded one start or end of an activity, and the process id of the worker that reported it. */
interface ActivityStep {
  step: 'started' | 'completed' | 'failed';
  pid: number;
}

/**
 * The starts and ends Temporal recorded for an activity type, in history order, with the process ids read from the
 * workers' identities (`pid@host`, the SDK's default).
 */
async function activitySteps(client: RelayClient, runId: string, activityType: string): Promise<ActivityStep[]> {
  const events = (await readHistory(client.temporal, runId)).events ?? [];
  const scheduledTypes = new Map<string, string | null | undefined>();
  const steps: ActivityStep[] = [];
  for (const event of events) {
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) scheduledTypes.set(String(event.eventId), scheduled.activityType?.name);
    const recorded = [
      ['started', event.activityTaskStartedEventAttributes],
      ['completed', event.activityTaskCompletedEventAttributes],
      ['failed', event.activityTaskFailedEventAttributes],
    ] as const;
    for (const [step, attributes] of recorded) {
      if (attributes && scheduledTypes.get(String(attributes.scheduledEventId)) === activityType) {
        steps.push({ step, pid: Number(attributes.identity?.split('@')[0]) });
      }
    }
  }
  return steps;
}

/** The process ids of the workers that started an activity type's attempts, in history order. */
async function startedBy(client: RelayClient, runId: string, activityType: string): Promise<number[]> {
  const steps = await activitySteps(client, runId, activityType);
  return steps.filter(({ step }) => step === 'started').map(({ pid }) => pid);
}

/**
 * A redeploy mid-tool: worker A (with `grace`, else the default) runs the run's tool until it has written `started`;
 * A gets SIGTERM and worker B starts at once; the run then ends. `approve` decides the call first, for a tool that
 * waits for a human. Returns what a test asserts on: A's exit code and pids, the ledger when A exited, and the run.
 */
async function redeployMidTool(label: string, options: { grace?: string; model: string; approve?: boolean }) {
  const { taskQueue, ledger, client } = await freshProject(label);
  const workerA = startWorker(taskQueue, ledger, options.grace);
  const pidA = await readyPid(workerA, taskQueue);
  const { runId } = await client.startRun({ tenantId: 'redeploy', model: options.model, prompt: 'append' });
  if (options.approve) await approveWhenWaiting(client, runId);
  await vi.waitFor(async () => expect(await readLedger(ledger)).toEqual([`started ${pidA}`]), {
    timeout: waitMs,
    interval: 50,
  });

  workerA.child.kill('SIGTERM');
  const workerB = startWorker(taskQueue, ledger);
  const exitCode = await within(workerA.exited, waitMs, `worker A did not exit within ${waitMs} ms of SIGTERM`);
  const ledgerWhenAExited = await readLedger(ledger);
  const pidB = await readyPid(workerB, taskQueue);
  await within(client.result(runId), waitMs, `the run did not complete within ${waitMs} ms`);
  return { client, runId, ledger, pidA, pidB, exitCode, ledgerWhenAExited };
}

async function approveWhenWaiting(client: RelayClient, runId: string): Promise<void> {
  const waiting = await vi.waitFor(
    async () => {
      const [pending] = (await client.getRun(runId)).pendingApprovals;
      if (!pending) throw new Error('no call waits for approval yet');
      return pending;
    },
    { timeout: waitMs, interval: 100 },
  );
  await client.approve(runId, waiting.toolCallId, { approver: 'ops' });
}

describe('relay-e worker stopped with SIGTERM while a tool runs (a redeploy)', () => {
  it('lets the tool finish on the stopping worker, exits 0, and a new worker completes the run with that result', async () => {
    const { client, runId, ledger, pidA, pidB, exitCode, ledgerWhenAExited } = await redeployMidTool('grace', {
      model: 'scripted:slow',
    });

    expect(exitCode).toBe(0);
    expect(ledgerWhenAExited).toEqual([`started ${pidA}`, `finished ${pidA}`]);
    expect((await client.getRun(runId)).status).toBe('completed');
    expect(await readLedger(ledger)).toEqual([`started ${pidA}`, `finished ${pidA}`]);
    expect((await client.events(runId)).filter((event) => event.type === 'tool_succeeded')).toEqual([
      expect.objectContaining({ toolName: 'slow_append', output: { pid: pidA } }),
    ]);
    // Temporal saw one attempt of the tool, on A; the model's answer after it came from B.
    expect(await startedBy(client, runId, 'executeTool')).toEqual([pidA]);
    expect(await startedBy(client, runId, 'callModel')).toEqual([pidA, pidB]);
  }, 120_000);

  it('with a zero grace, cancels the tool on the stopping worker at once and runs it again on the new one', async () => {
    const { client, runId, ledger, pidA, pidB, exitCode, ledgerWhenAExited } = await redeployMidTool('no-grace', {
      grace: '0s',
      model: 'scripted:slow',
    });

    expect(exitCode).toBe(0);
    expect(ledgerWhenAExited).toEqual([`started ${pidA}`]);
    expect((await client.getRun(runId)).status).toBe('completed');
    expect(await readLedger(ledger)).toEqual([`started ${pidA}`, `started ${pidB}`, `finished ${pidB}`]);
    expect((await client.events(runId)).filter((event) => event.type === 'tool_succeeded')).toEqual([
      expect.objectContaining({ toolName: 'slow_append', output: { pid: pidB } }),
    ]);
    // Temporal records the start of the attempt that completed only: B's.
    expect(await startedBy(client, runId, 'executeTool')).toEqual([pidB]);
  }, 120_000);

  it('with a zero grace, tells the model an approved tool cut short on the stopping worker may have acted, and does not run it again', async () => {
    const { client, runId, ledger, pidA, exitCode } = await redeployMidTool('approved', {
      grace: '0s',
      model: 'approved:slow',
      approve: true,
    });

    expect(exitCode).toBe(0);
    // A human approved one execution: the one A began and cut short is all there is.
    expect(await readLedger(ledger)).toEqual([`started ${pidA}`]);
    const toolEnds = (await client.events(runId)).filter((event) => event.type.startsWith('tool_') && 'error' in event);
    expect(toolEnds).toEqual([
      expect.objectContaining({
        type: 'tool_failed',
        toolName: 'approved_slow_append',
        errorType: 'execution',
        error: withEffectWarning(
          "Tool 'approved_slow_append' was cut short because its worker shut down",
          'it was its last attempt',
        ),
      }),
    ]);
    // A answered for its one attempt before it exited: Temporal recorded it completed, with that failure as its result.
    expect(await activitySteps(client, runId, 'executeTool')).toEqual([
      { step: 'started', pid: pidA },
      { step: 'completed', pid: pidA },
    ]);
  }, 120_000);
});
