import { describe, expect, it } from 'vitest';
import { assembleModelRequest } from '../../../activities/model-context.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { ModelContextRequest, ModelToolSpec, TranscriptMessage } from '../../../src/shared/transcript.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';

const tools: ModelToolSpec[] = [{ name: 'add', description: 'Add two numbers.', inputSchema: { type: 'object' } }];
const prompt: TranscriptMessage = { role: 'user', content: 'What is 2 + 3?' };
const call: TranscriptMessage = {
  role: 'assistant',
  content: '',
  toolCalls: [{ id: 'call_1_0', name: 'add', input: { a: 2, b: 3 } }],
};
const result: TranscriptMessage = {
  role: 'tool',
  toolCallId: 'call_1_0',
  toolName: 'add',
  result: { success: true, toolName: 'add', toolCallId: 'call_1_0', data: { result: 5 } },
};

function request(step: number, parts: Pick<ModelContextRequest, 'context' | 'tools'>): ModelContextRequest {
  return { model: 'scripted:test', step, runId: 'run-1', tenantId: 'acme', settings: { temperature: 0 }, ...parts };
}

describe('assembleModelRequest', () => {
  it('hands the model the stored transcript followed by what is new, with the stored tools', async () => {
    const store = createMemoryPayloadStore();
    const first = await assembleModelRequest(
      store,
      request(1, { context: { append: [prompt] }, tools: { specs: tools } }),
    );
    expect(first.request).toEqual({
      model: 'scripted:test',
      messages: [prompt],
      tools,
      step: 1,
      runId: 'run-1',
      tenantId: 'acme',
      settings: { temperature: 0 },
    });
    const second = await assembleModelRequest(
      store,
      request(2, {
        context: { base: first.stored.context, append: [call, result] },
        tools: { ref: first.stored.tools },
      }),
    );
    expect(second.request.messages).toEqual([prompt, call, result]);
    expect(second.request.tools).toEqual(tools);
    expect(second.stored.tools).toBe(first.stored.tools);
    expect(second.stored.context).not.toBe(first.stored.context);
  });

  it('stores the same context under the same ref when a call is retried, and the whole transcript sent anew too', async () => {
    const store = createMemoryPayloadStore();
    const first = await assembleModelRequest(
      store,
      request(1, { context: { append: [prompt] }, tools: { specs: tools } }),
    );
    const byReference = request(2, {
      context: { base: first.stored.context, append: [call, result] },
      tools: { ref: first.stored.tools },
    });
    const attempt = await assembleModelRequest(store, byReference);
    const retry = await assembleModelRequest(store, byReference);
    const whole = await assembleModelRequest(
      store,
      request(2, { context: { append: [prompt, call, result] }, tools: { specs: tools } }),
    );
    expect(retry.stored).toEqual(attempt.stored);
    expect(whole.stored).toEqual(attempt.stored);
  });

  it('fails with payload_not_found when the store no longer holds the base', async () => {
    const store = createMemoryPayloadStore();
    const first = await assembleModelRequest(
      store,
      request(1, { context: { append: [prompt] }, tools: { specs: tools } }),
    );
    const fresh = createMemoryPayloadStore();
    const lost = assembleModelRequest(
      fresh,
      request(2, { context: { base: first.stored.context, append: [call] }, tools: { ref: first.stored.tools } }),
    );
    await expect(lost).rejects.toSatisfy((error) => RelayError.isInstance(error) && error.code === 'payload_not_found');
  });

  it("never reads another tenant's stored context", async () => {
    const store = createMemoryPayloadStore();
    const first = await assembleModelRequest(
      store,
      request(1, { context: { append: [prompt] }, tools: { specs: tools } }),
    );
    const otherTenant = assembleModelRequest(store, {
      ...request(2, { context: { base: first.stored.context, append: [] }, tools: { specs: tools } }),
      tenantId: 'globex',
    });
    await expect(otherTenant).rejects.toSatisfy(
      (error) => RelayError.isInstance(error) && error.code === 'payload_not_found',
    );
  });
});
