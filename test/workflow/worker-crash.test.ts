import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { waitForRun } from '../helpers/relay-test-kit.js';
import { setUpChildWorkerTests, killChildWorker as kill, spawnChildWorker } from '../helpers/spawn-child-worker.js';

const kit = setUpChildWorkerTests();

function startChildWorker(taskQueue: string, ledgerFile: string) {
  return spawnChildWorker(join(import.meta.dirname, '../helpers/child-worker.ts'), {
    TEMPORAL_ADDRESS: kit.address,
    TASK_QUEUE: taskQueue,
    LEDGER_FILE: ledgerFile,
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
  const { address, namespace } = kit;
  const client = await RelayClient.connect({ address, namespace, taskQueue });

  const first = await startChildWorker(taskQueue, ledgerFile);
  const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:crash', prompt: 'pay B', maxSteps: 5 });
  await waitForRun(client, runId, () => readLedger(ledgerFile).length === 1);
  await kill(first);

  // The slow lookup was cut short; its activity is retried on the next worker after the heartbeat timeout.
  const second = await startChildWorker(taskQueue, ledgerFile);
  await waitForRun(client, runId, (run) => run.status === 'awaiting_approval', { timeoutMs: 40_000 });
  await kill(second);

  await startChildWorker(taskQueue, ledgerFile);
  await client.approve(runId, 'call_2_0', { approver: 'ops' });
  const result = await client.result(runId);
  expect(result).toMatchObject({ status: 'completed', output: 'paid' });

  const ledger = readLedger(ledgerFile);
  const transfers = ledger.filter((entry) => entry.tool === 'transfer_funds');
  expect(transfers).toEqual([
    expect.objectContaining({ key: expect.stringMatching(new RegExp(`^${runId}/[\\w-]+/call_2_0$`)) as unknown }),
  ]);
  const lookups = ledger.filter((entry) => entry.tool === 'slow_lookup');
  expect(lookups.length).toBe(2);
  // Both attempts carry the one key of call_1_0: the same on every retry, whichever worker runs it.
  const lookupKeys = new Set(lookups.map((entry) => entry.key));
  expect(lookupKeys.size).toBe(1);
  expect([...lookupKeys][0]).toMatch(new RegExp(`^${runId}/[\\w-]+/call_1_0$`));
  expect(lookups[0]?.pid).not.toBe(lookups[1]?.pid);
  await client.close();
}, 120_000);
