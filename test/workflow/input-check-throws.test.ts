import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';

// A tool that needs approval has its input checked by its own schema in an activity before a human is asked; here
// the schema's refinement looks the account up and throws while its "database" is down.

const kit = useRelayTestKit();

function refundTool(failuresBeforeAnswer: number) {
  let lookups = 0;
  const refund = defineTool({
    name: 'refund',
    description: 'Refund an order.',
    inputSchema: z.object({ orderId: z.string() }).refine(async () => {
      lookups += 1;
      if (lookups <= failuresBeforeAnswer) throw new Error('ECONNRESET: orders database unreachable');
      return true;
    }),
    requiresApproval: true,
    execute: ({ orderId }) => ({ refunded: orderId }),
  });
  return { refund, lookups: () => lookups };
}

async function startRun(failuresBeforeAnswer: number) {
  const { refund, lookups } = refundTool(failuresBeforeAnswer);
  const seenByModel: TranscriptMessage[][] = [];
  const worker = await kit.startWorker({
    tools: [refund],
    models: {
      scripted: scriptedModel((call) => {
        seenByModel.push(call.messages);
        return call.step === 1
          ? { toolCalls: [{ id: 'r', name: 'refund', input: { orderId: 'o-1' } }] }
          : { text: 'done' };
      }),
    },
  });
  const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'refund o-1' });
  return { ...worker, runId, lookups, seenByModel };
}

describe('a tool input check that throws', () => {
  it('is tried again, so a lookup that fails for a moment still lets a human decide the call', async () => {
    const { client, stop, runId, lookups } = await startRun(2);
    try {
      const waiting = await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);

      expect(waiting.pendingApprovals[0]).toMatchObject({ toolName: 'refund', input: { orderId: 'o-1' } });
      expect(lookups()).toBe(3);
      expect((await client.events(runId)).map((event) => event.type)).not.toContain('tool_validation_failed');
    } finally {
      await client.cancel(runId);
      await stop();
    }
  });

  it('tells the model the check failed, not that its input is wrong, once every attempt threw', async () => {
    const { client, stop, runId, lookups, seenByModel } = await startRun(Number.POSITIVE_INFINITY);
    try {
      await client.result(runId);

      expect(lookups()).toBe(3);
      const told = seenByModel[1]?.find((message) => message.role === 'tool');
      expect(told).toMatchObject({
        result: {
          success: false,
          errorType: 'validation',
          issues: [{ code: 'check_failed', message: 'Input check failed (ECONNRESET: orders database unreachable)' }],
        },
      });
    } finally {
      await stop();
    }
  });
});
