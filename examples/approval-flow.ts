/**
 * One durable agent run with a human approval, end to end, on an embedded Temporal dev server:
 *
 *   npm run example
 *
 * The model is scripted (no API key needed): it asks for a balance, then for a transfer that requires approval.
 * This script approves the transfer with an edited amount, then prints the run's event log and the answer.
 */
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { z } from 'zod';
import { RelayClient, defineTool } from '../src/index.js';
import { createWorker } from '../src/worker/index.js';
import { scriptedModel, startTemporalDevServer } from '../src/testing/index.js';

const balances = new Map([
  ['ACC-1', 4231.55],
  ['ACC-2', 120],
]);

const getBalance = defineTool({
  name: 'get_balance',
  description: 'Return the current balance for a user account.',
  inputSchema: z.object({ account_id: z.string().describe('Account identifier') }),
  execute: async ({ account_id }) => ({ account_id, balance_usd: balances.get(account_id) ?? 0 }),
});

const transferFunds = defineTool({
  name: 'transfer_funds',
  description: 'Move money between two accounts.',
  inputSchema: z.object({ from: z.string(), to: z.string(), amount_usd: z.number().positive() }),
  requiresApproval: true,
  execute: async ({ from, to, amount_usd }) => {
    balances.set(from, (balances.get(from) ?? 0) - amount_usd);
    balances.set(to, (balances.get(to) ?? 0) + amount_usd);
    return { status: 'completed', from, to, amount_usd };
  },
});

const model = scriptedModel([
  { toolCalls: [{ name: 'get_balance', input: { account_id: 'ACC-1' } }] },
  { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'ACC-1', to: 'ACC-2', amount_usd: 500 } }] },
  { text: 'Done: the transfer went through.' },
]);

Runtime.install({ logger: new DefaultLogger('WARN') });
const server = await startTemporalDevServer();
const worker = await createWorker({
  tools: [getBalance, transferFunds],
  models: { scripted: model },
  taskQueue: 'example',
  address: server.address,
});
const client = await RelayClient.connect({ address: server.address, taskQueue: 'example' });

try {
  await worker.runUntil(async () => {
    const { runId } = await client.startRun({
      tenantId: 'acme',
      userId: 'alice',
      model: 'scripted:demo',
      prompt: 'Pay 500 from ACC-1 to ACC-2',
      approvalTimeout: '10m',
    });
    for await (const event of client.watch(runId)) {
      console.log(`#${event.seq} ${event.type}${'toolName' in event ? ` ${event.toolName}` : ''}`);
      if (event.type === 'tool_awaiting_approval') {
        // A human would decide here (CLI, HTTP API or Temporal UI); we approve a smaller amount.
        await client.approve(runId, event.toolCallId, {
          approver: 'bob',
          reason: 'capped at 250',
          input: { ...(event.input as object), amount_usd: 250 },
        });
      }
    }
    const result = await client.result(runId);
    console.log(`\n${result.output} (${result.steps} steps, stop reason ${result.stopReason})`);
    console.log(`Balances now: ${JSON.stringify(Object.fromEntries(balances))}`);
  });
} finally {
  await client.close();
  await server.stop();
}
