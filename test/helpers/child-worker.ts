/**
 * A Relay-E worker in its own process, so tests can kill it with SIGKILL. Every execution of a tool is
 * appended to a ledger file outside Temporal, which survives the kill and tells how often each side effect ran.
 * Environment: TEMPORAL_ADDRESS, TASK_QUEUE, LEDGER_FILE.
 */
import { appendFileSync } from 'node:fs';
import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { createWorker } from '../../src/worker/create-worker.js';
import { quietenWorkerRuntime } from '../../src/testing/quieten-worker-runtime.js';

const { TEMPORAL_ADDRESS: address, TASK_QUEUE: taskQueue, LEDGER_FILE: ledgerFile } = process.env;
if (!address || !taskQueue || !ledgerFile) throw new Error('TEMPORAL_ADDRESS, TASK_QUEUE and LEDGER_FILE are required');

const record = (entry: Record<string, unknown>) => appendFileSync(ledgerFile, `${JSON.stringify(entry)}\n`);

const tools = [
  defineTool({
    name: 'slow_lookup',
    description: 'A read that takes a while.',
    inputSchema: z.object({ ms: z.number() }),
    execute: async ({ ms }, ctx) => {
      record({ tool: 'slow_lookup', pid: process.pid, key: ctx.idempotencyKey });
      await new Promise((resolve) => setTimeout(resolve, ms));
      return { ok: true };
    },
  }),
  defineTool({
    name: 'transfer_funds',
    description: 'Move money.',
    inputSchema: z.object({ to: z.string(), amount: z.number().positive() }),
    requiresApproval: true,
    execute: async (input, ctx) => {
      record({ tool: 'transfer_funds', pid: process.pid, key: ctx.idempotencyKey, ...input });
      return { status: 'done' };
    },
  }),
];

const model = scriptedModel([
  { toolCalls: [{ id: 'lookup', name: 'slow_lookup', input: { ms: 3_000 } }] },
  { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { to: 'B', amount: 10 } }] },
  { text: 'paid' },
]);

quietenWorkerRuntime();
const worker = await createWorker({ tools, models: { scripted: model }, taskQueue, address });
process.stdout.write('ready\n');
await worker.run();
