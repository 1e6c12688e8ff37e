import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { NativeConnection } from '@temporalio/worker';
import type { ActivitySlotInfo, CustomSlotSupplier, SlotPermit } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { readHistory } from '../../src/client/read-history.js';
import { ModelProviderError } from '../../src/model/model-provider.js';
import type { ModelCall } from '../../src/model/model-provider.js';
import type { ModelContextRequest, ModelRequest, TranscriptMessage } from '../../src/shared/transcript.js';
import { createFilePayloadStore } from '../../src/store/file-payload-store.js';
import { createMemoryPayloadStore } from '../../src/store/memory-payload-store.js';
import type { PayloadStore } from '../../src/store/payload-store.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn, ScriptedTurnFunction } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { CreateWorkerOptions } from '../../src/worker/create-worker.js';
import { latch } from '../helpers/latch.js';
import { RelayError } from '../../src/shared/errors.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { agentRunHistories, currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/** A worker with the test tools and a scripted model; the rest of the options as `createWorker` takes them. */
function startWorker(
  script: readonly ScriptedTurn[] | ScriptedTurnFunction,
  options: {
    taskQueue?: string;
    payloadStore?: PayloadStore;
    keepLargePayloadsInStore?: boolean;
    keepModelCallsOnWorker?: boolean;
    modelCallStartTimeout?: string;
    connection?: NativeConnection;
    workerOptions?: CreateWorkerOptions['workerOptions'];
  } = {},
) {
  const model = scriptedModel(script);
  return kit
    .startWorker({ tools: createTestTools(createLedger()), models: { scripted: model }, ...options })
    .then((running) => ({ ...running, model }));
}

/**
 * A run whose transfer waits for approval on a first worker, which then stops; a second worker on the same task
 * queue, whose own memory store has never seen the run, takes the approval and the run to its end.
 */
async function handOverWaitingTransfer(firstOptions: {
  keepModelCallsOnWorker?: boolean;
  modelCallStartTimeout?: string;
}) {
  const script: ScriptedTurn[] = [
    { toolCalls: [{ id: 'c1', name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } }] },
    { text: 'Moved.' },
  ];
  const first = await startWorker(script, firstOptions);
  const { runId } = await first.client.startRun({ ...base, prompt: 'Move 5 from a to b.' });
  await waitForRun(first.client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
  await first.stop();
  const second = await startWorker(script, { taskQueue: first.taskQueue });
  await second.client.approve(runId, 'call_1_0');
  expect(await second.client.result(runId)).toMatchObject({ status: 'completed', output: 'Moved.' });
  return { first, second, runId };
}

/** Every payload's data in a history, as text, wherever it sits in an event. */
function payloadTexts(value: unknown): string[] {
  if (value instanceof Uint8Array) return [Buffer.from(value).toString('utf8')];
  if (typeof value !== 'object' || value === null) return [];
  return Object.values(value).flatMap((child) => payloadTexts(child));
}

/** A model that asks for one output over 4 KiB (6,000 characters), then answers 'read'. */
function readsOneLargeOutput(call: ModelCall): ScriptedTurn {
  return call.step === 1
    ? { toolCalls: [{ name: 'repeat_text', input: { text: 'x', times: 6_000 } }] }
    : { text: 'read' };
}

/**
 * Each model call's input as the run's history records it (one execution), with its size in bytes and the task queue
 * it was sent to.
 */
async function modelCallInputs(
  runId: string,
  executionRunId?: string,
): Promise<Array<{ bytes: number; input: ModelContextRequest; taskQueue: string }>> {
  const events = await readHistory(kit.temporal, runId, executionRunId ? { executionRunId } : {});
  return (events.events ?? []).flatMap((event) => {
    const scheduled = event.activityTaskScheduledEventAttributes;
    const payload = scheduled?.activityType?.name === 'callModel' ? scheduled.input?.payloads?.[0] : undefined;
    if (!payload?.data) return [];
    const input = JSON.parse(Buffer.from(payload.data).toString('utf8')) as ModelContextRequest;
    return [{ bytes: payload.data.length, input, taskQueue: scheduled?.taskQueue?.name ?? '' }];
  });
}

/** The transcript of a run whose model called `add({ a: k, b: 1 })` at each step k before `step`. */
function addingTranscript(prompt: string, step: number): TranscriptMessage[] {
  const transcript: TranscriptMessage[] = [{ role: 'user', content: prompt }];
  for (let k = 1; k < step; k++) {
    const id = `call_${k}_0`;
    transcript.push(
      { role: 'assistant', content: '', toolCalls: [{ id, name: 'add', input: { a: k, b: 1 } }] },
      {
        role: 'tool',
        toolCallId: id,
        toolName: 'add',
        result: { success: true, toolName: 'add', toolCallId: id, data: { result: k + 1 } },
      },
    );
  }
  return transcript;
}

const adding = (steps: number) => (call: ModelCall) =>
  call.step <= steps ? { toolCalls: [{ name: 'add', input: { a: call.step, b: 1 } }] } : { text: 'done' };

describe('model calls by reference', () => {
  it('records model-call inputs that stay the same size however long the transcript grows', async () => {
    const { client, model, stop } = await startWorker(adding(12));
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'count', maxSteps: 13 });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', steps: 13 });
      const inputs = await modelCallInputs(runId);
      expect(inputs).toHaveLength(13);
      // The first call carries the prompt and asks the worker for the catalog (whose tools the model gets); each later
      // one a reference to the context the worker stored with the model's answer, and the tool result that followed
      // it only, the tools riding in the stored context.
      const first = inputs[0]?.input.context;
      expect(first && 'tools' in first && first.append.length === 1 && first.tools).toEqual({ catalog: {} });
      expect(model.requestsOf(runId)[0]?.tools.map((tool) => tool.name)).toContain('add');
      expect(first).toHaveProperty('withAnswer', true);
      const later = inputs.slice(1);
      for (const { input } of later) {
        expect(Object.keys(input.context)).toEqual(['parent', 'append']);
        expect('parent' in input.context && input.context.parent).toMatch(/^sha256:[0-9a-f]{64}$/);
        expect(input.context.append).toEqual([expect.objectContaining({ role: 'tool' })]);
      }
      const sizes = later.map(({ bytes }) => bytes);
      // Only the digits of the step and the call id grow.
      expect(Math.max(...sizes) - Math.min(...sizes)).toBeLessThanOrEqual(8);
      const lastTranscriptBytes = Buffer.byteLength(JSON.stringify(addingTranscript('count', 13)));
      expect(sizes.at(-1)).toBeLessThan(lastTranscriptBytes / 4);
      // The model still saw the whole transcript at every step.
      model.requestsOf(runId).forEach((call) => expect(call.messages).toEqual(addingTranscript('count', call.step)));
      await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile('lean-history'));
    } finally {
      await stop();
    }
  });

  it('gives a retried model call the same context, and the next call refers to what the retry stored', async () => {
    let failedOnce = false;
    const { client, model, stop } = await startWorker((call) => {
      if (call.step === 2 && !failedOnce) {
        failedOnce = true;
        throw new ModelProviderError('overloaded', { retryable: true, retryAfterMs: 10 });
      }
      return adding(2)(call);
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'count' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', steps: 3 });
      const attempts = model.requestsOf(runId).filter((call) => call.step === 2);
      expect(attempts).toHaveLength(2);
      expect(attempts[1]?.messages).toEqual(attempts[0]?.messages);
      expect(attempts[1]?.messages).toEqual(addingTranscript('count', 2));
      // One scheduled call a step: the retry was Temporal's, and step 3 refers to what step 2 stored.
      const inputs = (await modelCallInputs(runId)).map(({ input }) => input);
      expect(inputs.map(({ step }) => step)).toEqual([1, 2, 3]);
      expect(inputs[2]?.context).toHaveProperty('parent');
      expect(model.requestsOf(runId).at(-1)?.messages).toEqual(addingTranscript('count', 3));
    } finally {
      await stop();
    }
  });

  it('hands the model the same messages and tools the run sent whole before (exact/valid-call.json)', async () => {
    const recorded = JSON.parse(await readFile(path.join(agentRunHistories, 'exact/valid-call.json'), 'utf8')) as {
      events: Array<{
        activityTaskScheduledEventAttributes?: {
          activityType: { name: string };
          input: { payloads: Array<{ data: string }> };
        };
      }>;
    };
    const sentWhole = recorded.events.flatMap(({ activityTaskScheduledEventAttributes: scheduled }) =>
      scheduled?.activityType.name === 'callModel'
        ? [JSON.parse(Buffer.from(scheduled.input.payloads[0]?.data ?? '', 'base64').toString('utf8')) as ModelRequest]
        : [],
    );
    const { client, model, stop } = await startWorker([
      { toolCalls: [{ id: 'c1', name: 'add', input: { a: 2, b: 3 } }] },
      { text: 'The sum is 5.' },
    ]);
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'What is 2 + 3?' });
      await client.result(runId);
      const seen = model
        .requestsOf(runId)
        .map(({ messages, tools, step, model: id, tenantId }) => ({ messages, tools, step, model: id, tenantId }));
      expect(sentWhole).toHaveLength(2);
      expect(seen).toEqual(
        sentWhole.map(({ messages, tools, step, model: id, tenantId }) => ({
          messages,
          // Recorded before a defineTool tool's objects were closed; the test tools' schemas are one flat object each.
          tools: tools.map((tool) => ({ ...tool, inputSchema: { ...tool.inputSchema, additionalProperties: false } })),
          step,
          model: id,
          tenantId,
        })),
      );
    } finally {
      await stop();
    }
  });

  it('sends the whole transcript again, and says so, when the worker taking the call lacks the stored context', async () => {
    // Without affinity, the next call goes to the shared task queue, and the worker there lacks the context.
    const { first, second, runId } = await handOverWaitingTransfer({ keepModelCallsOnWorker: false });
    try {
      const events = await second.client.events(runId);
      expect(eventTypes(events)).toEqual([
        'run_started',
        'model_responded',
        'tool_call_validated',
        'tool_awaiting_approval',
        'tool_approved',
        'tool_succeeded',
        'model_context_resent',
        'model_responded',
        'run_completed',
      ]);
      const resent = events.find((event) => event.type === 'model_context_resent');
      expect(resent?.step).toBe(2);
      expect(resent && 'error' in resent && resent.error).toMatch(
        /No payload sha256:[0-9a-f]{64} is stored for tenant 'acme'/,
      );
      const inputs = (await modelCallInputs(runId)).map(({ input }) => input);
      expect(inputs.map(({ step, context }) => ({ step, base: 'parent' in context }))).toEqual([
        { step: 1, base: false },
        { step: 2, base: true },
        { step: 2, base: false },
      ]);
      // The new worker lacks the tools too: they go whole again.
      expect(inputs[2]?.context).toHaveProperty('tools.specs');
      const seen = second.model.requestsOf(runId);
      expect(seen).toHaveLength(1);
      const [prompt, assistant, toolMessage, ...rest] = seen[0]?.messages ?? [];
      expect(prompt).toEqual(first.model.requestsOf(runId)[0]?.messages[0]);
      expect(assistant).toEqual({
        role: 'assistant',
        content: '',
        toolCalls: [
          { id: 'call_1_0', name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 }, providerCallId: 'c1' },
        ],
      });
      expect(toolMessage).toMatchObject({ role: 'tool', toolCallId: 'call_1_0', result: { success: true } });
      expect(rest).toEqual([]);
      expect(seen[0]?.tools.map((tool) => tool.name)).toContain('transfer_funds');
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('model-context-resent'),
      );
    } finally {
      await second.stop();
    }
  });

  it('continues by reference on a restarted worker that shares the file store, reading the stored chain back', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'relay-model-context-restart-'));
    // Five steps of adding, then a call that waits for approval, then the answer.
    const script = (call: ModelCall): ScriptedTurn =>
      call.step <= 5
        ? adding(5)(call)
        : call.step === 6
          ? { toolCalls: [{ id: 'c6', name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } }] }
          : { text: 'Moved.' };
    const first = await startWorker(script, { payloadStore: createFilePayloadStore({ directory }) });
    const { runId } = await first.client.startRun({ ...base, prompt: 'count', maxSteps: 8 });
    await waitForRun(first.client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
    await first.stop();
    // A new worker process in all but name: its own store object and an empty context cache, the same directory.
    const second = await startWorker(script, {
      taskQueue: first.taskQueue,
      payloadStore: createFilePayloadStore({ directory }),
    });
    try {
      await second.client.approve(runId, 'call_6_0');
      expect(await second.client.result(runId)).toMatchObject({ status: 'completed', output: 'Moved.', steps: 7 });
      expect(eventTypes(await second.client.events(runId))).not.toContain('model_context_resent');
      const inputs = (await modelCallInputs(runId)).map(({ input }) => input);
      expect(inputs.map(({ step, context }) => ({ step, parent: 'parent' in context }))).toEqual(
        [1, 2, 3, 4, 5, 6, 7].map((step) => ({ step, parent: step > 1 })),
      );
      // The restarted worker rebuilt the whole transcript from the chain the first one stored.
      const [seen] = second.model.requestsOf(runId);
      const before = first.model.requestsOf(runId).at(-1)?.messages ?? [];
      expect(seen?.step).toBe(7);
      expect(seen?.messages.slice(0, before.length)).toEqual(before);
      const [answer, toolMessage, ...rest] = seen?.messages.slice(before.length) ?? [];
      expect(answer).toMatchObject({ role: 'assistant', toolCalls: [{ id: 'call_6_0', name: 'transfer_funds' }] });
      expect(toolMessage).toMatchObject({ role: 'tool', toolCallId: 'call_6_0', result: { success: true } });
      expect(rest).toEqual([]);
    } finally {
      await second.stop();
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('keeps a tool output over 4 KiB out of history: the step records its ref, the model still reads it whole', async () => {
    const { client, model, stop } = await startWorker(readsOneLargeOutput, {
      payloadStore: createMemoryPayloadStore(),
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'read' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'read' });
      const output = { text: 'x'.repeat(6_000) };
      const outputJson = JSON.stringify(output);
      const stored = {
        storedOutput: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
        bytes: outputJson.length,
        preview: outputJson.slice(0, 256),
      };
      // Events and reads show the reference, plainly.
      const succeeded = (await client.events(runId)).find((event) => event.type === 'tool_succeeded');
      expect(succeeded).toMatchObject({ output: stored });
      // The tool's result in history and the next model call's input hold the ref, not the output.
      const history = await readHistory(kit.temporal, runId);
      const toolResults = (history.events ?? []).flatMap((event) => {
        const data = event.activityTaskCompletedEventAttributes?.result?.payloads?.[0]?.data;
        return data ? [Buffer.from(data).toString('utf8')] : [];
      });
      expect(toolResults.some((text) => text.includes('storedOutput'))).toBe(true);
      expect(toolResults.every((text) => !text.includes(outputJson))).toBe(true);
      const inputs = await modelCallInputs(runId);
      expect(inputs[1]?.bytes).toBeLessThan(1_024);
      // The model read the whole output.
      const seen = model
        .requestsOf(runId)
        .at(-1)
        ?.messages.find((message) => message.role === 'tool');
      expect(seen).toMatchObject({ role: 'tool', result: { success: true, data: output } });
    } finally {
      await stop();
    }
  });

  // The store refuses the tool's output (a full disk, a database gone), or takes it only after 10 s (a database
  // under load) where the one-second tool's activity has 6 s in all (its timeout and 5 s); it takes the model's
  // context either way. Failing the activity instead, or letting it time out, ran the tool again on each retry.
  it.each([
    ['refuses it', (): Promise<never> => Promise.reject(new Error('disk full'))],
    ['would outlast the tool activity’s timeout', () => new Promise<void>((resolve) => setTimeout(resolve, 10_000))],
  ])(
    'keeps a tool output whole in history when the store %s, and runs the tool once',
    async (_case, storeOutput) => {
      const report = 'r'.repeat(6_000);
      let executions = 0;
      const bigReport = defineTool({
        name: 'big_report',
        description: 'A long report.',
        inputSchema: z.object({}),
        timeoutMs: 1_000,
        execute: async () => {
          executions += 1;
          return { report };
        },
      });
      const store = createMemoryPayloadStore();
      const outputJson = JSON.stringify({ report });
      const troubledOutputs: PayloadStore = {
        ...store,
        put: async (scope, data) => {
          if (new TextDecoder().decode(data) === outputJson) await storeOutput();
          return store.put(scope, data);
        },
      };
      const model = scriptedModel((call) =>
        call.step === 1 ? { toolCalls: [{ name: 'big_report', input: {} }] } : { text: 'read' },
      );
      const { client, stop } = await kit.startWorker({
        tools: [bigReport],
        models: { scripted: model },
        payloadStore: troubledOutputs,
      });
      try {
        const { runId } = await client.startRun({ ...base, prompt: 'report' });
        expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'read' });
        expect(executions).toBe(1);
        const succeeded = (await client.events(runId)).find((event) => event.type === 'tool_succeeded');
        expect(succeeded).toMatchObject({ output: { report } });
        const seen = model
          .requestsOf(runId)
          .at(-1)
          ?.messages.find((message) => message.role === 'tool');
        expect(seen).toMatchObject({ result: { success: true, data: { report } } });
      } finally {
        await stop();
      }
    },
    60_000,
  );

  it('keeps a text over 4 KiB beside a tool call out of history, and hands it whole to the model when resent', async () => {
    const thought = 'Thinking it through before I call the tool. '.repeat(150);
    const { client, model, stop } = await startWorker(
      (call) =>
        call.step === 1
          ? { text: thought, toolCalls: [{ name: 'add', input: { a: 1, b: 2 } }] }
          : { text: thought.slice(0, 5) === 'Think' ? 'done' : 'lost' },
      { payloadStore: createMemoryPayloadStore() },
    );
    try {
      // A continue-as-new after the step: the next execution's first call sends the whole transcript again.
      const { runId } = await client.startRun({ ...base, prompt: 'think', continueAsNewAfterSteps: 1 });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'done' });
      const responded = (await client.events(runId)).find((event) => event.type === 'model_responded');
      expect(responded).toMatchObject({
        storedText: {
          storedText: expect.stringMatching(/^sha256:[0-9a-f]{64}$/) as unknown,
          bytes: thought.length,
          preview: thought.slice(0, 256),
        },
      });
      expect(responded).not.toHaveProperty('text');
      // Neither execution's history holds the text: not the model call's result, not the carried transcript.
      const first = (await kit.temporal.workflow.getHandle(runId).describe()).raw.workflowExecutionInfo?.firstRunId;
      for (const executionRunId of [first, undefined]) {
        const history = await readHistory(kit.temporal, runId, executionRunId ? { executionRunId } : {});
        const texts = payloadTexts(history);
        // The preview (its first 256 characters) is there, so the search does read the payloads.
        expect(texts.some((text) => text.includes(thought.slice(0, 200)))).toBe(true);
        expect(texts.some((text) => text.includes(thought.slice(0, 400)))).toBe(false);
      }
      // The model read it whole in the call that sent the transcript again.
      const resent = model
        .requestsOf(runId)
        .at(-1)
        ?.messages.find((message) => message.role === 'assistant');
      expect(resent).toEqual({
        role: 'assistant',
        content: thought,
        toolCalls: [expect.objectContaining({ name: 'add' })],
      });
    } finally {
      await stop();
    }
  });

  it('fails the run at once with stored_output_not_found when its store lost a tool output, sending nothing again', async () => {
    const store = createMemoryPayloadStore();
    const outputRefs = new Set<string>();
    const losesOutputs: PayloadStore = {
      ...store,
      put: async (scope, data) => {
        const ref = await store.put(scope, data);
        if (new TextDecoder().decode(data).includes('x'.repeat(6_000))) outputRefs.add(ref);
        return ref;
      },
      get: (scope, ref) =>
        outputRefs.has(ref)
          ? Promise.reject(new RelayError('payload_not_found', `No payload ${ref} is stored for tenant 'acme'`))
          : store.get(scope, ref),
    };
    const { client, model, stop } = await startWorker(readsOneLargeOutput, { payloadStore: losesOutputs });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'read' });
      await expect(client.result(runId)).rejects.toThrow();

      const events = await client.events(runId);
      expect(outputRefs.size).toBe(1);
      expect(eventTypes(events).slice(-2)).toEqual(['tool_succeeded', 'run_failed']);
      expect(events.at(-1)).toMatchObject({
        code: 'stored_output_not_found',
        error: expect.stringMatching(
          /kept the output of tool call call_1_0 in its payload store, and the store this worker reads lacks it/,
        ) as unknown,
      });
      expect(model.requestsOf(runId)).toHaveLength(1);
    } finally {
      await stop();
    }
  });

  it('fails the run with stored_output_not_found when a stored tool output is in no store the next worker reads', async () => {
    const script = (call: ModelCall): ScriptedTurn =>
      call.step === 1
        ? { toolCalls: [{ name: 'repeat_text', input: { text: 'x', times: 6_000 } }] }
        : call.step === 2
          ? { toolCalls: [{ id: 'c2', name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } }] }
          : { text: 'Moved.' };
    const first = await startWorker(script, { payloadStore: createMemoryPayloadStore() });
    const { runId } = await first.client.startRun({ ...base, prompt: 'read, then move' });
    await waitForRun(first.client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
    await first.stop();
    // Another store: neither the context nor the output is in it, and only the context can be sent again.
    const second = await startWorker(script, { taskQueue: first.taskQueue, payloadStore: createMemoryPayloadStore() });
    try {
      await second.client.approve(runId, 'call_2_0');
      await expect(second.client.result(runId)).rejects.toThrow();
      const events = await second.client.events(runId);
      expect(eventTypes(events).slice(-2)).toEqual(['model_context_resent', 'run_failed']);
      expect(events.at(-1)).toMatchObject({ code: 'stored_output_not_found' });
      expect(second.model.requestsOf(runId)).toEqual([]);
    } finally {
      await second.stop();
    }
  });

  it.each([
    { worker: 'with no store of its own choosing', store: undefined, keep: undefined },
    { worker: 'told its store is not every worker’s', store: createMemoryPayloadStore(), keep: false },
  ])('keeps every output in history on a worker $worker: nothing to resend it from', async ({ store, keep }) => {
    const { client, model, stop } = await startWorker(readsOneLargeOutput, {
      ...(store ? { payloadStore: store } : {}),
      ...(keep !== undefined ? { keepLargePayloadsInStore: keep } : {}),
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'read' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'read' });
      const output = { text: 'x'.repeat(6_000) };
      const succeeded = (await client.events(runId)).find((event) => event.type === 'tool_succeeded');
      expect(succeeded).toMatchObject({ output });
      const seen = model
        .requestsOf(runId)
        .at(-1)
        ?.messages.find((message) => message.role === 'tool');
      expect(seen).toMatchObject({ result: { data: output } });
    } finally {
      await stop();
    }
  });

  it('sends only the messages compaction replaced, never the whole transcript again, at steps it changed', async () => {
    const { client, model, stop } = await startWorker((call) =>
      call.step <= 5
        ? { toolCalls: [{ name: 'repeat_text', input: { text: 'x', times: 3_000 } }] }
        : { text: 'read them all' },
    );
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'read', maxTranscriptBytes: 8_192 });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'read them all' });
      const compactedAt = new Set(
        (await client.events(runId))
          .filter((event) => event.type === 'transcript_compacted')
          .map((event) => event.step),
      );
      expect(compactedAt.size).toBeGreaterThan(0);
      const inputs = await modelCallInputs(runId);
      for (const { input } of inputs) {
        const { step, context } = input;
        const replaced = 'parent' in context ? (context.replace ?? []) : [];
        expect({ step, parent: 'parent' in context, replaced: replaced.length > 0 }).toEqual({
          step,
          parent: step > 1,
          replaced: compactedAt.has(step),
        });
        // A replacement is the elided result in place of a stored one, never an output again.
        for (const { message } of replaced) expect(message).toMatchObject({ result: { data: { elided: true } } });
      }
      // Each later call carries the newest output (3 KB) and what it replaced, not the transcript (8 KB).
      for (const { bytes } of inputs.slice(1)) expect(bytes).toBeLessThan(4_096);
      // What the model saw is the compacted transcript: within the budget, the oldest output elided.
      for (const call of model.requestsOf(runId)) {
        expect(Buffer.byteLength(JSON.stringify(call.messages))).toBeLessThanOrEqual(8_192);
      }
      const last = model.requestsOf(runId).at(-1)?.messages ?? [];
      expect(last.find((message) => message.role === 'tool')).toMatchObject({ result: { data: { elided: true } } });
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('lean-history-compacted'),
      );
    } finally {
      await stop();
    }
  });

  it('starts each execution of a continued run with the whole transcript, then refers to it again', async () => {
    const { client, model, stop } = await startWorker(adding(5));
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'count', continueAsNewAfterSteps: 2 });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', steps: 6 });
      model.requestsOf(runId).forEach((call) => expect(call.messages).toEqual(addingTranscript('count', call.step)));
      const description = await kit.temporal.workflow.getHandle(runId).describe();
      expect(description.runId).not.toBe(description.raw.workflowExecutionInfo?.firstRunId);
      const last = (await modelCallInputs(runId)).map(({ input }) => input);
      // The last execution starts at step 5 from the carried transcript (9 messages), sent whole.
      expect(
        last.map(({ step, context }) => ({ step, base: 'parent' in context, sent: context.append.length })),
      ).toEqual([
        { step: 5, base: false, sent: 9 },
        { step: 6, base: true, sent: 1 },
      ]);
    } finally {
      await stop();
    }
  });
});

describe('model calls kept on the worker that stored the context (keepModelCallsOnWorker)', () => {
  it('sends every call after a run’s first to that worker, so two workers with private stores resend nothing', async () => {
    const script = adding(3);
    const first = await startWorker(script);
    const connection = await NativeConnection.connect({ address: kit.address });
    const second = await startWorker(script, { taskQueue: first.taskQueue, connection });
    try {
      // The shared queue hands a run's first call to either worker, and six at once can all go to one: batches of six
      // until both have taken some, so the test has two workers' runs to check. Each run its own prompt, so no two
      // runs share a stored context by content.
      const runIds: string[] = [];
      const servedBy = (worker: typeof first) => runIds.filter((id) => worker.model.requestsOf(id).length > 0);
      for (let batch = 1; batch <= 5 && (servedBy(first).length === 0 || servedBy(second).length === 0); batch++) {
        const started = await Promise.all(
          [1, 2, 3, 4, 5, 6].map(
            async (n) => (await first.client.startRun({ ...base, prompt: `count ${batch}.${n}` })).runId,
          ),
        );
        await Promise.all(started.map((runId) => first.client.result(runId)));
        runIds.push(...started);
      }
      for (const runId of runIds) {
        expect(await first.client.result(runId)).toMatchObject({ status: 'completed', output: 'done', steps: 4 });
        expect(eventTypes(await first.client.events(runId))).not.toContain('model_context_resent');
        const inputs = await modelCallInputs(runId);
        expect(inputs.map(({ input }) => input.step)).toEqual([1, 2, 3, 4]);
        expect(inputs[0]?.taskQueue).toBe(first.taskQueue);
        // Later calls go to one worker's own queue, and that worker's model answered every call of the run.
        const ownQueues = new Set(inputs.slice(1).map(({ taskQueue }) => taskQueue));
        expect(ownQueues.size).toBe(1);
        expect([...ownQueues][0]).toMatch(new RegExp(`^${first.taskQueue}/model-calls/[0-9a-f]{16}$`));
        const answeredBy = [first, second].map((worker) => worker.model.requestsOf(runId).length);
        expect(answeredBy.toSorted()).toEqual([0, 4]);
      }
      // Both workers served runs: the first calls were shared out, the rest followed them.
      expect([servedBy(first).length, servedBy(second).length]).not.toContain(0);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runIds[0] ?? ''),
        currentHistoryFile('model-calls-on-storing-worker'),
      );
    } finally {
      await Promise.all([first.stop(), second.stop()]);
      await connection.close();
    }
  });

  it('sends the next call straight to the shared queue when the call ends on a worker that is shutting down', async () => {
    // One store for both workers, so only the queue a call goes to is under test, not which store holds the context.
    const store = createMemoryPayloadStore();
    const step2 = latch();
    let holdStep2 = true;
    const script = async (call: ModelCall): Promise<ScriptedTurn> => {
      if (call.step === 2 && holdStep2) {
        holdStep2 = false;
        step2.reached();
        await step2.released;
      }
      return adding(2)(call);
    };
    const shared = { payloadStore: store, keepModelCallsOnWorker: true };
    const first = await startWorker(script, { ...shared, workerOptions: { shutdownGraceTime: '1 minute' } });
    const connection = await NativeConnection.connect({ address: kit.address });
    try {
      const { runId } = await first.client.startRun({ ...base, prompt: 'count while stopping' });
      await step2.started;
      // Step 2's call runs on the first worker's own queue; the worker begins to shut down before it answers.
      const stopping = first.stop();
      expect(first.worker.getState()).not.toBe('RUNNING');
      const second = await startWorker(script, { ...shared, taskQueue: first.taskQueue, connection });
      step2.release();
      await stopping;
      expect(await second.client.result(runId)).toMatchObject({ status: 'completed', output: 'done', steps: 3 });
      expect(eventTypes(await second.client.events(runId))).not.toContain('model_context_resent');
      const queues = (await modelCallInputs(runId)).map(({ input, taskQueue }) => ({ step: input.step, taskQueue }));
      expect(queues.map(({ step }) => step)).toEqual([1, 2, 3]);
      expect(queues[0]?.taskQueue).toBe(first.taskQueue);
      expect(queues[1]?.taskQueue).toMatch(new RegExp(`^${first.taskQueue}/model-calls/[0-9a-f]{16}$`));
      // The answer to step 2 said the worker was closing (workerQueue: null): step 3 went to the shared queue at once.
      expect(queues[2]?.taskQueue).toBe(first.taskQueue);
      expect(second.model.requestsOf(runId).map(({ step }) => step)).toEqual([3]);
      await second.stop();
    } finally {
      await connection.close();
    }
  });

  it('holds model calls on the worker’s own queue to the activity slots the worker was given', async () => {
    // A custom supplier of the worker's activity slots: each permit names the task queue it was reserved for.
    const used: Array<{ taskQueue: string; activityType: string }> = [];
    const slots: CustomSlotSupplier<ActivitySlotInfo> = {
      type: 'custom',
      reserveSlot: (ctx) => Promise.resolve({ taskQueue: ctx.taskQueue }),
      tryReserveSlot: (ctx) => ({ taskQueue: ctx.taskQueue }),
      markSlotUsed: ({ slotInfo, permit }) => {
        used.push({ taskQueue: (permit as SlotPermit & { taskQueue: string }).taskQueue, ...slotInfo });
      },
      releaseSlot: () => undefined,
    };
    const fixed = { type: 'fixed-size', numSlots: 10 } as const;
    const worker = await startWorker(adding(2), {
      workerOptions: {
        tuner: {
          activityTaskSlotSupplier: slots,
          workflowTaskSlotSupplier: fixed,
          localActivityTaskSlotSupplier: fixed,
          nexusTaskSlotSupplier: fixed,
        },
      },
    });
    try {
      const { runId } = await worker.client.startRun({ ...base, prompt: 'count' });
      expect(await worker.client.result(runId)).toMatchObject({ status: 'completed', steps: 3 });
      const ownQueue = (await modelCallInputs(runId)).at(-1)?.taskQueue ?? '';
      expect(ownQueue).toMatch(/\/model-calls\/[0-9a-f]{16}$/);
      // The calls after the first ran on the worker's own queue, in slots of the supplier the worker was given.
      expect(used.filter(({ taskQueue }) => taskQueue === ownQueue).map(({ activityType }) => activityType)).toEqual([
        'callModel',
        'callModel',
      ]);
      expect(
        used.filter(({ taskQueue }) => taskQueue === worker.taskQueue).map(({ activityType }) => activityType),
      ).toEqual(['callModel', 'executeTool', 'executeTool']);
    } finally {
      await worker.stop();
    }
  });

  it('waits as long as the storing worker said (modelCallStartTimeout) before it takes that worker for gone', async () => {
    const { first, second, runId } = await handOverWaitingTransfer({ modelCallStartTimeout: '2s' });
    try {
      const resent = (await second.client.events(runId)).find((event) => event.type === 'model_context_resent');
      expect(resent && 'error' in resent && resent.error).toMatch(/\) did not start the call within 2 seconds$/);
      const history = await readHistory(kit.temporal, runId);
      const modelCalls = (history.events ?? []).flatMap((event) => {
        const scheduled = event.activityTaskScheduledEventAttributes;
        return scheduled?.activityType?.name === 'callModel' ? [scheduled] : [];
      });
      const waits = modelCalls.map((scheduled) => ({
        own: scheduled.taskQueue?.name !== first.taskQueue,
        startWithinSeconds: Number(scheduled.scheduleToStartTimeout?.seconds ?? 0),
      }));
      // The shared queue's calls have no start limit of their own (zero: none); the call to the own queue has 2 s.
      expect(waits).toEqual([
        { own: false, startWithinSeconds: 0 },
        { own: true, startWithinSeconds: 2 },
        { own: false, startWithinSeconds: 0 },
      ]);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('model-context-resent-after-its-own-wait'),
      );
    } finally {
      await second.stop();
    }
  });

  it('sends the call to the shared task queue with the whole context when that worker is gone, and says so', async () => {
    const { first, second, runId } = await handOverWaitingTransfer({});
    try {
      const events = await second.client.events(runId);
      expect(eventTypes(events).slice(-3)).toEqual(['model_context_resent', 'model_responded', 'run_completed']);
      const resent = events.find((event) => event.type === 'model_context_resent');
      expect(resent && 'error' in resent && resent.error).toMatch(
        new RegExp(
          `^The worker that stored the context \\(task queue ${first.taskQueue}/model-calls/[0-9a-f]{16}\\) did not start the call within 5 seconds$`,
        ),
      );
      const inputs = await modelCallInputs(runId);
      expect(inputs.map(({ input, taskQueue }) => ({ step: input.step, own: taskQueue !== first.taskQueue }))).toEqual([
        { step: 1, own: false },
        { step: 2, own: true },
        { step: 2, own: false },
      ]);
      expect(inputs[2]?.input.context).toHaveProperty('tools.specs');
      expect(second.model.requestsOf(runId)).toHaveLength(1);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('model-context-resent-after-worker-left'),
      );
    } finally {
      await second.stop();
    }
  });
});
