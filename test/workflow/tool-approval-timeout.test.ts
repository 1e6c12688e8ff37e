import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();
let worker: RunningWorker;
const paid: number[] = [];

/** A payment whose quote holds for 1.5 s: its calls wait no longer for a decision. */
const payQuote = defineTool({
  name: 'pay_quote',
  description: 'Pay a quoted amount.',
  inputSchema: z.object({ amount: z.number() }),
  requiresApproval: true,
  approvalTimeoutMs: 1_500,
  execute: ({ amount }) => {
    paid.push(amount);
    return { paid: amount };
  },
});

beforeAll(async () => {
  worker = await kit.startWorker({
    tools: [payQuote],
    models: {
      scripted: scriptedModel((call) =>
        call.step === 1 ? { toolCalls: [{ id: 'q', name: 'pay_quote', input: { amount: 7 } }] } : { text: 'done' },
      ),
    },
  });
});

/** How long the run's call waited for a decision, from its events once the run is over (no race with the wait). */
async function waitOf(runId: string): Promise<number> {
  await worker.client.result(runId);
  const events = await worker.client.events(runId);
  const requested = events.find((event) => event.type === 'tool_awaiting_approval');
  const timedOut = events.find((event) => event.type === 'tool_approval_timed_out');
  expect(timedOut).toBeDefined();
  return requested?.type === 'tool_awaiting_approval' ? Date.parse(requested.expiresAt) - Date.parse(requested.at) : -1;
}

describe("a tool's own approval timeout", () => {
  it('ends the wait when the run sets none, as a denial that runs nothing', async () => {
    const { client } = worker;
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    expect(await waitOf(runId)).toBe(1_500);
    expect(paid).toEqual([]);
    await recordHistoryIfRequested(
      client.temporal.workflow.getHandle(runId),
      currentHistoryFile('tool-approval-timeout'),
    );
  });

  it('is never lengthened by the run, and shortened by a shorter run limit', async () => {
    const { client } = worker;
    const longer = await client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'pay',
      approvalTimeout: '1h',
    });
    expect(await waitOf(longer.runId)).toBe(1_500);
    const shorter = await client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'pay',
      approvalTimeout: 500,
    });
    expect(await waitOf(shorter.runId)).toBe(500);
    expect(paid).toEqual([]);
  });
});
