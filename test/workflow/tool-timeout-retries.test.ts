import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelCall } from '../../src/model/model-provider.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/** A tool that opted into timeout retries and only ends when its timeout aborts `ctx.signal`, on every attempt. */
function hangingTool(attempts: number[]) {
  return defineTool({
    name: 'hanging_write',
    description: 'Writes, and never answers in time.',
    inputSchema: z.object({}),
    timeoutMs: 100,
    retry: { maximumAttempts: 2, initialInterval: '10ms' },
    execute: (_input, ctx) => {
      attempts.push(attempts.length + 1);
      return new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(null)));
    },
  });
}

describe('a tool that retries its timeouts', () => {
  it('tells the model its last attempt timed out and may still have had an effect', async () => {
    const attempts: number[] = [];
    const seenByModel: TranscriptMessage[][] = [];
    const model = scriptedModel((call: ModelCall) => {
      seenByModel.push(call.messages);
      return call.step === 1 ? { toolCalls: [{ name: 'hanging_write', input: {} }] } : { text: 'ok' };
    });
    const running = await kit.startWorker({ tools: [hangingTool(attempts)], models: { scripted: model } });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'write' });
      await client.result(runId);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('timed-out-last-retry'),
      );
      expect(attempts).toEqual([1, 2]);
      const failed = (await client.events(runId)).find((event) => event.type === 'tool_failed');
      expect(failed).toMatchObject({
        errorType: 'timeout',
        error: expect.stringContaining('It may still have had an effect: it was its last attempt') as unknown,
      });
      const toolResult = (seenByModel[1] ?? []).find((message) => message.role === 'tool');
      expect(toolResult).toMatchObject({ result: { success: false, errorType: 'timeout' } });
    } finally {
      await running.stop();
    }
  });
});
