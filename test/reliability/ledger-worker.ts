/**
 * A Relay-E worker in its own process, for suites that kill it with SIGKILL or take its server away. Its
 * transfers go to a SQLite ledger outside Temporal (transfer-ledger.ts), which outlives every kill.
 * Environment: TEMPORAL_ADDRESS, TASK_QUEUE, LEDGER_FILE, WORKFLOW_BUNDLE (a bundle's code file); MODEL_DELAY_MS
 * and TOOL_DELAY_MS (default 0) slow every model call and the balance read, so a fault can catch runs mid-call.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { quietenWorkerRuntime } from '../../src/testing/quieten-worker-runtime.js';
import { TransferLedger } from './transfer-ledger.js';

const {
  TEMPORAL_ADDRESS: address,
  TASK_QUEUE: taskQueue,
  LEDGER_FILE: ledgerFile,
  WORKFLOW_BUNDLE: bundle,
} = process.env;
if (!address || !taskQueue || !ledgerFile || !bundle) {
  throw new Error('TEMPORAL_ADDRESS, TASK_QUEUE, LEDGER_FILE and WORKFLOW_BUNDLE are required');
}

const modelDelayMs = Number(process.env['MODEL_DELAY_MS'] ?? 0);
const toolDelayMs = Number(process.env['TOOL_DELAY_MS'] ?? 0);
const ledger = new TransferLedger(ledgerFile);
const jitter = (maxMs: number) => sleep(Math.floor(Math.random() * maxMs));

/** The tools of a small bank: a read retried freely, and a transfer that needs approval and must happen once. */
const ledgerTools = [
  defineTool({
    name: 'read_balance',
    description: 'Read an account balance.',
    inputSchema: z.object({ account: z.string() }),
    execute: async ({ account }, ctx) => {
      ledger.recordAttempt('read_balance', ctx.idempotencyKey ?? '', 'read');
      await sleep(toolDelayMs);
      await jitter(400);
      return { account, balance: 100 };
    },
  }),
  defineTool({
    name: 'transfer_funds',
    description: 'Move money to an account.',
    inputSchema: z.object({ to: z.string(), amount: z.number().positive() }),
    requiresApproval: true,
    // A human approved one transfer, so it must happen once. One attempt (the default for approved tools)
    // would lose it when a worker dies mid-call; retries are safe because the transfer is idempotent on
    // ctx.idempotencyKey, which stays the same across every retry and replay of this call. The budget must
    // outlast the faults: 5 attempts ran out for 8 of 333 transfers when a worker died every second or two.
    retry: { maximumAttempts: 30, initialInterval: '200ms', maximumInterval: '2s' },
    execute: async ({ to, amount }, ctx) => {
      const key = ctx.idempotencyKey ?? '';
      await jitter(300);
      const outcome = ledger.transferOnce(key, to, amount);
      ledger.recordAttempt('transfer_funds', key, outcome);
      // Tells a watching test that the money moved but the activity has not completed: the moment to kill.
      if (outcome === 'transferred') process.stdout.write(`committed ${key}\n`);
      await jitter(300);
      return { status: 'done', outcome };
    },
  }),
];

// Step 1 reads, step 2 proposes two transfers at once (each decided on its own), step 3 answers.
const model = scriptedModel(async (request) => {
  await sleep(modelDelayMs);
  if (request.step === 1) return { toolCalls: [{ id: 'balance', name: 'read_balance', input: { account: 'A' } }] };
  if (request.step === 2) {
    return {
      toolCalls: [
        { id: 'pay_a', name: 'transfer_funds', input: { to: 'A', amount: 10 } },
        { id: 'pay_b', name: 'transfer_funds', input: { to: 'B', amount: 20 } },
      ],
    };
  }
  return { text: 'done' };
});

quietenWorkerRuntime();
const worker = await createWorker({
  tools: ledgerTools,
  models: { scripted: model },
  taskQueue,
  address,
  workflowBundle: { codePath: bundle },
  checkSearchAttributes: false,
});
process.stdout.write('ready\n');
await worker.run();
