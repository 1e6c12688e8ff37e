import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { createRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RelayTestKit } from '../helpers/relay-test-kit.js';

let kit: RelayTestKit;
const children = new Set<ChildProcess>();

beforeAll(async () => {
  kit = await createRelayTestKit();
});

afterAll(async () => {
  for (const child of children) child.kill('SIGKILL');
  await kit.close();
});

function startChildWorker(taskQueue: string, ledgerFile: string): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../helpers/child-worker.ts')], {
    env: { ...process.env, TEMPORAL_ADDRESS: kit.address, TASK_QUEUE: taskQueue, LEDGER_FILE: ledgerFile },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  children.add(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`child worker exited early with ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
  });
}

function kill(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
    children.delete(child);
  });
}

function readLedger(file: string): Array<{ tool: string; pid: number; key: string }> {
  if (!existsSync(file)) return [];
  return readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { tool: string; pid: number; key: string });
}

it('finishes a run on a new worker after SIGKILLs mid-tool and mid-approval, executing the approved transfer once', async () => {
  const taskQueue = `crash-${randomUUID()}`;
  const ledgerFile = join(mkdtempSync(join(tmpdir(), 'relay-crash-')), 'ledger.jsonl');
  const client = await RelayClient.connect({ address: kit.address, namespace: kit.namespace, taskQueue });

  const first = await startChildWorker(taskQueue, ledgerFile);
  const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:crash', prompt: 'pay B', maxSteps: 5 });
  await waitForRun(client, runId, () => readLedger(ledgerFile).length === 1);
  await kill(first);

  // The slow lookup was cut short; its activity is retried on the next worker after the heartbeat timeout.
  const second = await startChildWorker(taskQueue, ledgerFile);
  await waitForRun(client, runId, (run) => run.status === 'awaiting_approval', { timeoutMs: 40_000 });
  await kill(second);

  await startChildWorker(taskQueue, ledgerFile);
  await client.approve(runId, 'pay', { approver: 'ops' });
  const result = await client.result(runId);
  expect(result).toMatchObject({ status: 'completed', output: 'paid' });

  const ledger = readLedger(ledgerFile);
  const transfers = ledger.filter((entry) => entry.tool === 'transfer_funds');
  expect(transfers).toEqual([expect.objectContaining({ key: `${runId}/pay` })]);
  const lookups = ledger.filter((entry) => entry.tool === 'slow_lookup');
  expect(lookups.length).toBe(2);
  expect(new Set(lookups.map((entry) => entry.key))).toEqual(new Set([`${runId}/lookup`]));
  expect(lookups[0]?.pid).not.toBe(lookups[1]?.pid);
  await client.close();
}, 120_000);
