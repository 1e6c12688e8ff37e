import { WorkflowFailedError } from '@temporalio/client';
import { DefaultLogger } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { runTool } from '../../src/testing/run-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { waitForApproval } from '../../src/testing/wait-for-run.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';

const count = defineTool({
  name: 'count',
  description: 'Counts to n.',
  inputSchema: z.object({ n: z.coerce.number() }),
  execute: async (input) => input,
});

const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund an order.',
  inputSchema: z.object({ orderId: z.string() }),
  requiresApproval: true,
  execute: () => {
    throw new Error('boom');
  },
});

/** Each prompt is the call the model makes first, as JSON; once a tool result is back it answers. */
const model = scriptedModel((request) => {
  if (request.messages.at(-1)?.role === 'tool') return { text: 'done' };
  const prompt = request.messages.find((message) => message.role === 'user')?.content ?? '';
  if (prompt === 'throw') throw new Error('assertion in script');
  const { name, input } = JSON.parse(prompt) as { name: string; input: unknown };
  return { toolCalls: [{ id: 'the-call', name, input }] };
});

const kit = useRelayTestKit();
let worker: RunningWorker;

beforeAll(async () => {
  worker = await kit.startWorker({ tools: [count, refundOrder], models: { scripted: model } });
});

afterAll(async () => {
  await worker?.stop();
});

async function startRun(prompt: string): Promise<string> {
  const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt });
  return runId;
}

/** The result of the run's first call, as the model saw it at step 2. */
function recordedResult(runId: string): unknown {
  const message = model.requestsOf(runId)[1]?.messages.at(-1);
  return message?.role === 'tool' ? message.result : message;
}

describe('runTool, beside a real run of the same call', () => {
  it('returns the validation failure the run records for input only the tool would coerce', async () => {
    const runId = await startRun(JSON.stringify({ name: 'count', input: { n: '5' } }));
    await worker.client.result(runId);
    expect(recordedResult(runId)).toMatchObject({ success: false, errorType: 'validation' });
    expect(await runTool(count, { n: '5' }, { runId })).toEqual(recordedResult(runId));
  });

  it('returns the execution failure the run records when a tool that requires approval throws', async () => {
    const runId = await startRun(JSON.stringify({ name: 'refund_order', input: { orderId: 'o-1' } }));
    await (await waitForApproval(worker.client, runId)).approve();
    await worker.client.result(runId);
    expect(recordedResult(runId)).toMatchObject({ success: false, errorType: 'execution' });
    const logger = new DefaultLogger('ERROR');
    expect(await runTool(refundOrder, { orderId: 'o-1' }, { runId, logger })).toEqual(recordedResult(runId));
  });
});

describe('a scripted model whose script throws', () => {
  it("fails the run at once with the script's error, without retrying the model call", async () => {
    const startedAt = Date.now();
    const runId = await startRun('throw');
    const failure = await worker.client.result(runId).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(WorkflowFailedError);
    expect(String((failure as WorkflowFailedError).cause?.message)).toContain(
      'Scripted model failed at step 1: the script threw: assertion in script',
    );
    expect(model.requestsOf(runId)).toHaveLength(1);
    expect(Date.now() - startedAt).toBeLessThan(15_000);
  });
});
