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

  it('reports a context the store found damaged (and removed) as lost, so the run sends it whole again', async () => {
    const store = createMemoryPayloadStore();
    const first = await assemble(store, 1, { append: [prompt], tools: { specs: tools } });
    const damaged: PayloadStore = {
      ...store,
      get: (scope, ref) =>
        ref === first.stored.context
          ? Promise.reject(new RelayError('payload_corrupt', `Stored payload ${ref} is damaged; it is removed`))
          : store.get(scope, ref),
    };
    const lost = assemble(damaged, 2, { base: first.stored.context, append: [toolCall] });
    await expect(lost).rejects.toSatisfy(isNotFound);
    await expect(lost).rejects.toThrow(/was damaged: Stored payload sha256:\w+ is damaged/);
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
    const { store: counting, reads } = countingReads(store);
    await call(counting, 3, { parent: refs[1] ?? 'sha256:', append: [addResult(2)] }, 'acme', cache);
    expect(reads()).toBe(0);
    await call(counting, 2, { parent: refs[0] ?? 'sha256:', append: [addResult(1)] }, 'acme', cache);
    // An older context (a retry after another worker moved on) is read from the store: its whole chain and tools.
    expect(reads()).toBe(2);
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

describe('ModelContextCache counting what it holds', () => {
  /** A tool result whose output (`kib` KiB of JSON) the store keeps, as a shared store keeps a large one. */
  async function outputByReference(store: PayloadStore, runScope: PayloadScope, step: number, kib: number) {
    const json = JSON.stringify({ text: String(step % 10).repeat(kib * 1024) });
    const ref = await store.put(runScope, new TextEncoder().encode(json));
    const marker = { storedOutput: ref, bytes: json.length, preview: json.slice(0, 256) };
    const message: TranscriptMessage = {
      role: 'tool',
      toolCallId: `call_${step - 1}_0`,
      toolName: 'add',
      result: { success: true, toolName: 'add', toolCallId: `call_${step - 1}_0`, data: marker },
    };
    return message;
  }

  /** Runs one step of run `runId` (the first whole, later ones a large output by reference after the answer). */
  async function step(
    store: PayloadStore,
    cache: ModelContextCache,
    runId: string,
    number: number,
    parent?: PayloadRef,
  ) {
    const runScope = { tenantId: 'acme', runId };
    const context: ModelContext = parent
      ? { parent, append: [await outputByReference(store, runScope, number, 300)] }
      : { append: [prompt], tools: { specs: tools }, withAnswer: true };
    const assembled = await assembleModelCall(store, cache, {
      model: 'scripted:test',
      step: number,
      runId,
      tenantId: 'acme',
      context,
    });
    const stored = await assembled.store(addAnswer(number));
    if (!stored) throw new Error('an answer with tool calls is stored');
    return { ref: stored.context, messages: [...assembled.request.messages, addAnswerMessage(number)] };
  }

  const heldBytes = (messages: readonly TranscriptMessage[]) =>
    new TextEncoder().encode(JSON.stringify(messages)).length;
  const maxBytes = 1024 * 1024;

  it('counts each output kept by reference at its full size, so a run never holds more than the bound', async () => {
    const store = createMemoryPayloadStore();
    const cache = new ModelContextCache(maxBytes);
    let parent: PayloadRef | undefined;
    let transcript: TranscriptMessage[] = [];
    let stepsHeld = 0;
    for (let number = 1; number <= 15; number++) {
      ({ ref: parent, messages: transcript } = await step(store, cache, 'run-1', number, parent));
      const held = cache.get(scope, parent);
      if (!held) continue;
      stepsHeld += 1;
      expect(heldBytes(held.messages)).toBeLessThanOrEqual(maxBytes);
    }
    // The bound was checked where it mattered: the early steps were held, the later ones were not.
    expect(stepsHeld).toBeGreaterThan(0);
    expect(stepsHeld).toBeLessThan(15);
    // Past the bound the context is not kept: the next call reads it back from the store, whole.
    expect(heldBytes(transcript)).toBeGreaterThan(4 * maxBytes);
    expect(cache.get(scope, parent ?? 'sha256:')).toBeUndefined();
    const next = await call(store, 16, { parent: parent ?? 'sha256:', append: [addResult(15)] }, 'acme', cache);
    expect(next.request.messages).toEqual([...transcript, addResult(15)]);
  });

  it('keeps runs within the bound all together, and still serves a kept one from memory', async () => {
    const store = createMemoryPayloadStore();
    const cache = new ModelContextCache(maxBytes);
    const newest = new Map<string, { ref: PayloadRef; messages: TranscriptMessage[] }>();
    for (let number = 1; number <= 3; number++) {
      for (let run = 1; run <= 8; run++) {
        const runId = `run-${run}`;
        newest.set(runId, await step(store, cache, runId, number, newest.get(runId)?.ref));
      }
    }
    let held = 0;
    for (const [runId, { ref }] of newest) {
      const context = cache.get({ tenantId: 'acme', runId }, ref);
      if (context) held += heldBytes(context.messages);
    }
    expect(held).toBeLessThanOrEqual(maxBytes);
    // The run used last is kept, and its next call reads nothing from the store.
    const last = newest.get('run-8');
    if (!last) throw new Error('run-8 ran');
    const { store: counting, reads } = countingReads(store);
    const next = await assembleModelCall(counting, cache, {
      model: 'scripted:test',
      step: 4,
      runId: 'run-8',
      tenantId: 'acme',
      context: { parent: last.ref, append: [addResult(3)] },
    });
    expect(reads()).toBe(0);
    expect(next.request.messages).toEqual([...last.messages, addResult(3)]);
    expect(heldBytes(last.messages)).toBeGreaterThan(maxBytes / 2);
  });

  it('keeps a context larger than the whole bound out, not every other run', () => {
    const cache = new ModelContextCache(100);
    const context = { messages: [prompt], toolsRef: 'sha256:t' as const, tools, depth: 0 };
    cache.set({ tenantId: 'acme', runId: 'a' }, { ...context, ref: 'sha256:a', bytes: 60 });
    cache.set({ tenantId: 'acme', runId: 'b' }, { ...context, ref: 'sha256:b', bytes: 101 });
    expect(cache.get({ tenantId: 'acme', runId: 'b' }, 'sha256:b')).toBeUndefined();
    expect(cache.get({ tenantId: 'acme', runId: 'a' }, 'sha256:a')).toMatchObject({ ref: 'sha256:a' });
  });

  it('counts a context the same built step by step, replacements included, as read back from the store', async () => {
    const store = createMemoryPayloadStore();
    const cache = new ModelContextCache();
    const { refs } = await runAnsweredSteps(store, 3, cache);
    const large = await outputByReference(store, scope, 4, 40);
    const replace = [{ index: 2, message: large }];
    const context: ModelContext = { parent: refs[2] ?? 'sha256:', replace, append: [large] };
    const stepByStep = await call(store, 4, context, 'acme', cache);
    const stored = await stepByStep.store(addAnswer(4));
    const built = cache.get(scope, stored?.context ?? 'sha256:');
    expect(built?.bytes).toBeGreaterThan(2 * 40 * 1024);
    // A worker that never saw the run reads the parent back from the store, and counts from what it read.
    const fresh = new ModelContextCache();
    await (await call(store, 4, context, 'acme', fresh)).store(addAnswer(4));
    expect(fresh.get(scope, stored?.context ?? 'sha256:')?.bytes).toBe(built?.bytes);
  });
});

/** `store` with its reads counted: what a cache hit must not do. */
function countingReads(store: PayloadStore): { store: PayloadStore; reads: () => number } {
  let reads = 0;
  return {
    store: {
      ...store,
      get: (...args) => {
        reads += 1;
        return store.get(...args);
      },
    },
    reads: () => reads,
  };
}
