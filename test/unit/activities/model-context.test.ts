import { describe, expect, it } from 'vitest';
import { assembleModelRequest } from '../../../activities/model-context.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { ModelContext, ModelToolSpec, TranscriptMessage } from '../../../src/shared/transcript.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import type { PayloadStore } from '../../../src/store/payload-store.js';

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

function assemble(store: PayloadStore, step: number, context: ModelContext, tenantId = 'acme') {
  return assembleModelRequest(store, {
    model: 'scripted:test',
    step,
    runId: 'run-1',
    tenantId,
    settings: { temperature: 0 },
    context,
  });
}

const isNotFound = (error: unknown) => RelayError.isInstance(error) && error.code === 'payload_not_found';

describe('assembleModelRequest', () => {
  it('hands the model the stored messages followed by what is new, with the tools stored with them', async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    expect(first.request).toEqual({
      model: 'scripted:test',
      messages: [prompt],
      tools,
      step: 1,
      runId: 'run-1',
      tenantId: 'acme',
      settings: { temperature: 0 },
    });
    expect(first.stored.tools).toMatch(/^sha256:[0-9a-f]{64}$/);
    const second = await assemble(store, 2, { base: first.stored.context, append: [call, result] });
    expect(second.request.messages).toEqual([prompt, call, result]);
    expect(second.request.tools).toEqual(tools);
    // The tools travel inside the stored context: no ref to keep after the first call.
    expect(Object.keys(second.stored)).toEqual(['context']);
    expect(second.stored.context).not.toBe(first.stored.context);
  });

  it('takes the whole transcript with the tools by reference, as a run sends it after compaction', async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    const whole = await assemble(store, 2, {
      append: [prompt, call, result],
      tools: { ref: first.stored.tools ?? 'sha256:' },
    });
    expect(whole.request.messages).toEqual([prompt, call, result]);
    expect(whole.request.tools).toEqual(tools);
  });

  it('stores the same context under the same ref when a call is retried, or sent whole instead', async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    const attempt = await assemble(store, 2, { base: first.stored.context, append: [call, result] });
    const retry = await assemble(store, 2, { base: first.stored.context, append: [call, result] });
    const whole = await assemble(store, 2, { append: [prompt, call, result], tools: { specs: tools } });
    expect(retry.stored).toEqual(attempt.stored);
    expect(whole.stored.context).toBe(attempt.stored.context);
  });

  it('fails with payload_not_found when the store no longer holds the base or the tools', async () => {
    const first = await assemble(createMemoryPayloadStore(), 1, { append: [prompt], tools: { specs: tools } });
    const fresh = createMemoryPayloadStore();
    await expect(assemble(fresh, 2, { base: first.stored.context, append: [call] })).rejects.toSatisfy(isNotFound);
    const toolsRef = first.stored.tools ?? 'sha256:';
    await expect(assemble(fresh, 2, { append: [prompt, call], tools: { ref: toolsRef } })).rejects.toSatisfy(
      isNotFound,
    );
  });

  it("never reads another tenant's stored context", async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    const otherTenant = assemble(store, 2, { base: first.stored.context, append: [] }, 'globex');
    await expect(otherTenant).rejects.toSatisfy(isNotFound);
  });
});
