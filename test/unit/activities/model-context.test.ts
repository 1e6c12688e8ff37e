import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleModelCall, ModelContextCache, wholeContextEvery } from '../../../activities/model-context.js';
import { RelayError } from '../../../src/shared/errors.js';
import type { ModelContext, ModelToolSpec, TranscriptMessage } from '../../../src/shared/transcript.js';
import { createFilePayloadStore } from '../../../src/store/file-payload-store.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import type { PayloadRef, PayloadScope, PayloadStore } from '../../../src/store/payload-store.js';

const tools: ModelToolSpec[] = [{ name: 'add', description: 'Add two numbers.', inputSchema: { type: 'object' } }];
const prompt: TranscriptMessage = { role: 'user', content: 'What is 2 + 3?' };
const toolCall: TranscriptMessage = {
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

function call(
  store: PayloadStore,
  step: number,
  context: ModelContext,
  tenantId = 'acme',
  cache = new ModelContextCache(),
) {
  return assembleModelCall(store, cache, {
    model: 'scripted:test',
    step,
    runId: 'run-1',
    tenantId,
    settings: { temperature: 0 },
    context,
  });
}

/** A call of a run before the lean-history rules: the context is stored before the model answers. */
async function assemble(store: PayloadStore, step: number, context: ModelContext, tenantId = 'acme') {
  const assembled = await call(store, step, context, tenantId);
  const stored = await assembled.store({ text: 'ignored' });
  if (!stored) throw new Error('a call by reference stores its context');
  return { request: assembled.request, stored };
}

const isNotFound = (error: unknown) => RelayError.isInstance(error) && error.code === 'payload_not_found';

describe('assembleModelCall before the lean-history rules', () => {
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
    const second = await assemble(store, 2, { base: first.stored.context, append: [toolCall, result] });
    expect(second.request.messages).toEqual([prompt, toolCall, result]);
    expect(second.request.tools).toEqual(tools);
    // The tools travel inside the stored context: no ref to keep after the first call.
    expect(Object.keys(second.stored)).toEqual(['context']);
    expect(second.stored.context).not.toBe(first.stored.context);
  });

  it('takes the whole transcript with the tools by reference, as a run sends it after compaction', async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    const whole = await assemble(store, 2, {
      append: [prompt, toolCall, result],
      tools: { ref: first.stored.tools ?? 'sha256:' },
    });
    expect(whole.request.messages).toEqual([prompt, toolCall, result]);
    expect(whole.request.tools).toEqual(tools);
  });

  it('stores the same context under the same ref when a call is retried, or sent whole instead', async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    const attempt = await assemble(store, 2, { base: first.stored.context, append: [toolCall, result] });
    const retry = await assemble(store, 2, { base: first.stored.context, append: [toolCall, result] });
    const whole = await assemble(store, 2, { append: [prompt, toolCall, result], tools: { specs: tools } });
    expect(retry.stored).toEqual(attempt.stored);
    expect(whole.stored.context).toBe(attempt.stored.context);
  });

  it('fails with payload_not_found when the store no longer holds the base or the tools', async () => {
    const first = await assemble(createMemoryPayloadStore(), 1, { append: [prompt], tools: { specs: tools } });
    const fresh = createMemoryPayloadStore();
    await expect(assemble(fresh, 2, { base: first.stored.context, append: [toolCall] })).rejects.toSatisfy(isNotFound);
    const toolsRef = first.stored.tools ?? 'sha256:';
    await expect(assemble(fresh, 2, { append: [prompt, toolCall], tools: { ref: toolsRef } })).rejects.toSatisfy(
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

/** The model's answer at `step`: one call of `add`, as the scripted model proposes it. */
const addAnswer = (step: number) => ({ toolCalls: [{ name: 'add', input: { a: step, b: 1 } }] });
const addAnswerMessage = (step: number): TranscriptMessage => ({
  role: 'assistant',
  content: '',
  toolCalls: [{ id: `call_${step}_0`, name: 'add', input: { a: step, b: 1 } }],
});
const addResult = (step: number): TranscriptMessage => ({
  role: 'tool',
  toolCallId: `call_${step}_0`,
  toolName: 'add',
  result: { success: true, toolName: 'add', toolCallId: `call_${step}_0`, data: { result: step + 1 } },
});
const scope: PayloadScope = { tenantId: 'acme', runId: 'run-1' };

async function readBody(store: PayloadStore, ref: PayloadRef): Promise<{ parent?: PayloadRef; messages: unknown[] }> {
  return JSON.parse(new TextDecoder().decode(await store.get(scope, ref))) as { parent?: PayloadRef; messages: [] };
}

/**
 * Runs `steps` calls as a run under the lean-history rules sends them (the first whole, each later one the tool
 * result after the stored answer), checking what the model saw; returns each stored ref.
 */
async function runAnsweredSteps(store: PayloadStore, steps: number, cache = new ModelContextCache()) {
  const refs: PayloadRef[] = [];
  const transcript: TranscriptMessage[] = [prompt];
  for (let step = 1; step <= steps; step++) {
    const parent = refs.at(-1);
    const context: ModelContext = parent
      ? { parent, append: [addResult(step - 1)] }
      : { append: [prompt], tools: { specs: tools }, withAnswer: true };
    if (parent) transcript.push(addResult(step - 1));
    const assembled = await call(store, step, context, 'acme', cache);
    expect(assembled.request.messages).toEqual(transcript);
    expect(assembled.request.tools).toEqual(tools);
    const stored = await assembled.store(addAnswer(step));
    if (!stored) throw new Error('an answer with tool calls is stored');
    refs.push(stored.context);
    transcript.push(addAnswerMessage(step));
  }
  return { refs, transcript };
}

const stores: Array<[string, () => Promise<{ open: () => PayloadStore; remove: () => Promise<void> }>]> = [
  [
    'memory store',
    () => {
      const store = createMemoryPayloadStore();
      return Promise.resolve({ open: () => store, remove: () => Promise.resolve() });
    },
  ],
  [
    'file store',
    async () => {
      const directory = await mkdtemp(path.join(tmpdir(), 'relay-model-context-'));
      return {
        open: () => createFilePayloadStore({ directory }),
        remove: () => rm(directory, { recursive: true, force: true }),
      };
    },
  ],
];

describe.each(stores)('assembleModelCall with the answer stored (%s)', (_name, openStore) => {
  async function withStore(test: (open: () => PayloadStore) => Promise<void>) {
    const { open, remove } = await openStore();
    try {
      await test(open);
    } finally {
      await remove();
    }
  }

  it("stores each step as a delta after its parent: what the call appended and the model's answer", () =>
    withStore(async (open) => {
      const store = open();
      const { refs } = await runAnsweredSteps(store, 3);
      const [first, second, third] = await Promise.all(refs.map((ref) => readBody(store, ref)));
      expect(first).toMatchObject({ messages: [prompt, addAnswerMessage(1)] });
      expect(first).not.toHaveProperty('parent');
      expect(second).toMatchObject({ parent: refs[0], depth: 1, messages: [addResult(1), addAnswerMessage(2)] });
      expect(third).toMatchObject({ parent: refs[1], depth: 2, messages: [addResult(2), addAnswerMessage(3)] });
    }));

  it('reads the chain back from the store on a worker that has not cached it, as after a restart', () =>
    withStore(async (open) => {
      const { refs, transcript } = await runAnsweredSteps(open(), 5);
      const restarted = open();
      const next = await call(restarted, 6, { parent: refs.at(-1) ?? 'sha256:', append: [addResult(5)] });
      expect(next.request.messages).toEqual([...transcript, addResult(5)]);
      expect(next.request.tools).toEqual(tools);
    }));

  it(`stores a whole context every ${wholeContextEvery} steps, so a chain never grows longer`, () =>
    withStore(async (open) => {
      const store = open();
      const { refs, transcript } = await runAnsweredSteps(store, wholeContextEvery + 2);
      const bodies = await Promise.all(refs.map((ref) => readBody(store, ref)));
      const whole = bodies.flatMap((body, index) => (body.parent === undefined ? [index + 1] : []));
      expect(whole).toEqual([1, wholeContextEvery + 1]);
      expect(bodies[wholeContextEvery]?.messages).toEqual(transcript.slice(0, 2 * wholeContextEvery + 2));
      const reread = await call(open(), wholeContextEvery + 3, {
        parent: refs.at(-1) ?? 'sha256:',
        append: [addResult(wholeContextEvery + 2)],
      });
      expect(reread.request.messages).toEqual([...transcript, addResult(wholeContextEvery + 2)]);
    }));

  it('puts a tool output kept by reference back before the model sees it, and stores only its ref', () =>
    withStore(async (open) => {
      const store = open();
      const output = { text: 'x'.repeat(5_000) };
      const json = JSON.stringify(output);
      const ref = await store.put(scope, new TextEncoder().encode(json));
      const marker = { storedOutput: ref, bytes: json.length, preview: json.slice(0, 256) };
      const byReference: TranscriptMessage = {
        role: 'tool',
        toolCallId: 'call_1_0',
        toolName: 'repeat_text',
        result: { success: true, toolName: 'repeat_text', toolCallId: 'call_1_0', data: marker },
      };
      const { refs } = await runAnsweredSteps(store, 1);
      const next = await call(store, 2, { parent: refs[0] ?? 'sha256:', append: [byReference] });
      expect(next.request.messages.at(-1)).toEqual({ ...byReference, result: { ...byReference.result, data: output } });
      const stored = await next.store(addAnswer(2));
      const body = await readBody(store, stored?.context ?? 'sha256:');
      expect(body.messages[0]).toEqual(byReference);
      // A worker reading the chain back gets the output too.
      const reread = await call(open(), 3, { parent: stored?.context ?? 'sha256:', append: [addResult(2)] });
      expect(reread.request.messages[2]).toEqual(next.request.messages.at(-1));
    }));

  it('applies the messages compaction replaced, keeps them in the delta, and applies them again along the chain', () =>
    withStore(async (open) => {
      const store = open();
      const { refs, transcript } = await runAnsweredSteps(store, 3);
      const elided: TranscriptMessage = {
        role: 'tool',
        toolCallId: 'call_1_0',
        toolName: 'add',
        result: { success: true, toolName: 'add', toolCallId: 'call_1_0', data: { elided: true } },
      };
      const replace = [{ index: 2, message: elided }];
      const next = await call(store, 4, { parent: refs[2] ?? 'sha256:', replace, append: [addResult(3)] });
      const expected = [...transcript.slice(0, 2), elided, ...transcript.slice(3), addResult(3)];
      expect(next.request.messages).toEqual(expected);
      const stored = await next.store(addAnswer(4));
      expect(await readBody(store, stored?.context ?? 'sha256:')).toMatchObject({ replace, parent: refs[2] });
      const reread = await call(open(), 5, { parent: stored?.context ?? 'sha256:', append: [addResult(4)] });
      expect(reread.request.messages).toEqual([...expected, addAnswerMessage(4), addResult(4)]);
      const outside = call(store, 4, {
        parent: refs[2] ?? 'sha256:',
        replace: [{ index: 99, message: elided }],
        append: [],
      });
      await expect(outside).rejects.toSatisfy(
        (error) => RelayError.isInstance(error) && error.code === 'invalid_input',
      );
    }));

  it('stores nothing after a final answer: no call will refer to it', () =>
    withStore(async (open) => {
      const assembled = await call(open(), 1, { append: [prompt], tools: { specs: tools }, withAnswer: true });
      expect(await assembled.store({ text: 'done' })).toBeUndefined();
    }));

  it('fails with payload_not_found when neither the cache nor the store holds the parent', () =>
    withStore(async (open) => {
      const { refs } = await runAnsweredSteps(createMemoryPayloadStore(), 2);
      const lacking = call(open(), 3, { parent: refs.at(-1) ?? 'sha256:', append: [addResult(2)] });
      await expect(lacking).rejects.toSatisfy(isNotFound);
    }));
});

describe('ModelContextCache', () => {
  it('hands back the newest context of a run, from memory, only for its own ref', async () => {
    const cache = new ModelContextCache();
    const store = createMemoryPayloadStore();
    const { refs } = await runAnsweredSteps(store, 2, cache);
    let reads = 0;
    const counting: PayloadStore = {
      ...store,
      get: (...args) => {
        reads += 1;
        return store.get(...args);
      },
    };
    await call(counting, 3, { parent: refs[1] ?? 'sha256:', append: [addResult(2)] }, 'acme', cache);
    expect(reads).toBe(0);
    await call(counting, 2, { parent: refs[0] ?? 'sha256:', append: [addResult(1)] }, 'acme', cache);
    // An older context (a retry after another worker moved on) is read from the store: its whole chain and tools.
    expect(reads).toBe(2);
  });

  it('forgets the run used longest ago once it holds more than its byte budget', async () => {
    const store = createMemoryPayloadStore();
    const first = await runAnsweredSteps(store, 1);
    const cache = new ModelContextCache(1);
    const context = { messages: first.transcript, toolsRef: first.refs[0] ?? 'sha256:', tools, depth: 0, bytes: 1 };
    cache.set({ tenantId: 'acme', runId: 'a' }, { ...context, ref: 'sha256:a' });
    cache.set({ tenantId: 'acme', runId: 'b' }, { ...context, ref: 'sha256:b' });
    expect(cache.get({ tenantId: 'acme', runId: 'a' }, 'sha256:a')).toBeUndefined();
    expect(cache.get({ tenantId: 'acme', runId: 'b' }, 'sha256:b')).toMatchObject({ ref: 'sha256:b' });
  });
});
