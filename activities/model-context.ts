import type { PayloadRef, PayloadScope, PayloadStore } from '../src/store/payload-store.js';
import { answerMessage } from '../src/shared/call-ids.js';
import { RelayError } from '../src/shared/errors.js';
import { isStoredToolOutput } from '../src/shared/stored-output.js';
import type {
  MessageReplacement,
  ModelContext,
  ModelContextRequest,
  ModelRequest,
  ModelResponse,
  ModelToolSpec,
  StoredModelContext,
  TranscriptMessage,
} from '../src/shared/transcript.js';

/**
 * One call's context as the store holds it: the tools by their ref, and the messages. A context with a `parent`
 * holds only the messages added after the parent's (a delta); one without holds them all (a whole context, written
 * by every call of runs before the lean-history rules and every `wholeContextEvery` contexts after it).
 */
interface StoredContextBody {
  tools: PayloadRef;
  messages: TranscriptMessage[];
  parent?: PayloadRef;
  /** Messages of the parent's that compaction replaced, applied before `messages` follow. */
  replace?: MessageReplacement[];
  /** How many deltas lead back to the last whole context; absent in a whole one. */
  depth?: number;
}

/**
 * A chain of deltas is cut by a whole context this often, so reading a context the worker has not cached costs at
 * most this many reads, while storing a step costs its own messages only (not the whole transcript again).
 */
export const wholeContextEvery = 16;

/** A context as read back: every message, the tools, where it sits in its chain, and its size as held. */
interface DecodedContext {
  ref: PayloadRef;
  messages: readonly TranscriptMessage[];
  toolsRef: PayloadRef;
  tools: ModelToolSpec[];
  depth: number;
  /**
   * The bytes of JSON of its messages as held (each output and text kept by reference read back in full) and of its
   * tools: what keeping it in memory costs, roughly. Not the size of its stored chain, which holds only the refs.
   */
  bytes: number;
}

/**
 * The newest context each run stored on this worker, decoded, so a run's next call neither reads nor decodes its
 * chain again. Only an acceleration: a miss reads the store, and a worker that never saw the run reads it whole (or
 * fails with `payload_not_found` when its store lacks it).
 */
export class ModelContextCache {
  private readonly newest = new Map<string, DecodedContext>();
  private bytes = 0;

  /**
   * @param maxBytes the most bytes of contexts kept, counted as held; the run used longest ago goes first. A context
   * larger than all of it is not kept (its run's next call reads the store) rather than pushing every other one out.
   * @default 64 MiB
   */
  constructor(private readonly maxBytes = 64 * 1024 * 1024) {}

  get(scope: PayloadScope, ref: PayloadRef): DecodedContext | undefined {
    const key = cacheKey(scope);
    const context = this.newest.get(key);
    if (context?.ref !== ref) return undefined;
    this.newest.delete(key);
    this.newest.set(key, context);
    return context;
  }

  set(scope: PayloadScope, context: DecodedContext): void {
    const key = cacheKey(scope);
    this.remove(key);
    if (context.bytes > this.maxBytes) return;
    this.newest.set(key, context);
    this.bytes += context.bytes;
    for (const key of this.newest.keys()) {
      if (this.bytes <= this.maxBytes) break;
      this.remove(key);
    }
  }

  private remove(key: string): void {
    const context = this.newest.get(key);
    if (!context) return;
    this.bytes -= context.bytes;
    this.newest.delete(key);
  }
}

function cacheKey({ tenantId, runId }: PayloadScope): string {
  return JSON.stringify([tenantId, runId]);
}

/** A model call's request assembled from its stored context, and how to store the context the next call refers to. */
export interface AssembledModelCall {
  request: ModelRequest;
  /** Stores this call's context (with the model's answer when the call asked for it); undefined when none is kept. */
  store(response: ModelResponse): Promise<StoredModelContext | undefined>;
}

/**
 * Turns a call that refers to stored context into the request the model gets (the stored messages followed by
 * what is new, and the tools). Runs before the lean-history rules store the context before the model answers;
 * later ones store it with the answer, as a delta after the parent's. Storing is content-addressed, so a retried
 * call stores the same bytes under the same refs. Throws the store's `payload_not_found` when it no longer holds
 * what the call refers to.
 */
export async function assembleModelCall(
  store: PayloadStore,
  cache: ModelContextCache,
  request: ModelContextRequest,
): Promise<AssembledModelCall> {
  const { context, model, step, runId, tenantId, settings } = request;
  const scope: PayloadScope = { tenantId, runId };
  const read = await readContext(store, cache, scope, context);
  const modelRequest: ModelRequest = {
    model,
    messages: read.messages,
    tools: read.tools,
    step,
    runId,
    tenantId,
    ...(settings ? { settings } : {}),
  };
  const toolsStored = read.toolsStored ? { tools: read.toolsRef } : {};
  if (!withAnswer(context)) {
    const body: StoredContextBody = { tools: read.toolsRef, messages: read.messages };
    const stored = { context: await store.put(scope, encodeJson(body)), ...toolsStored };
    return { request: modelRequest, store: () => Promise.resolve(stored) };
  }
  return {
    request: modelRequest,
    store: async (response) => {
      // A final answer ends the run: no call will refer to it.
      if ((response.toolCalls ?? []).length === 0) return undefined;
      const answered = await storeAnswered(store, cache, scope, read, answerMessage(response, step));
      return { context: answered, ...toolsStored };
    },
  };
}

/** Whether the call asked for the context stored after it to end with the model's answer. */
export function withAnswer(context: ModelContext): boolean {
  return 'parent' in context || ('tools' in context && context.withAnswer === true);
}

interface ReadContext {
  messages: TranscriptMessage[];
  tools: ModelToolSpec[];
  toolsRef: PayloadRef;
  toolsStored: boolean;
  /** The stored context this call continues, when it sent only what is new. */
  parent?: DecodedContext;
  /** What this call adds to its parent's messages, and what it replaces in them, as the run sent them. */
  appended: TranscriptMessage[];
  replace: MessageReplacement[];
}

/** The call's whole transcript and its tools, storing the tools when the call sent them whole. */
async function readContext(
  store: PayloadStore,
  cache: ModelContextCache,
  scope: PayloadScope,
  context: ModelContext,
): Promise<ReadContext> {
  if ('base' in context || 'parent' in context) {
    const parent = await readStoredContext(store, cache, scope, 'base' in context ? context.base : context.parent);
    const replace = 'parent' in context ? (context.replace ?? []) : [];
    const replacements = await withStoredOutputs(
      store,
      scope,
      replace.map(({ message }) => message),
    );
    const messages = [
      ...withReplacements(
        parent.messages,
        replace.map(({ index }, at) => ({ index, message: replacements[at] as TranscriptMessage })),
      ),
      ...(await withStoredOutputs(store, scope, context.append)),
    ];
    return {
      messages,
      tools: parent.tools,
      toolsRef: parent.toolsRef,
      toolsStored: false,
      parent,
      appended: context.append,
      replace,
    };
  }
  if ('ref' in context.tools) {
    const tools = await readContextJson<ModelToolSpec[]>(store, scope, context.tools.ref);
    return {
      messages: await withStoredOutputs(store, scope, context.append),
      tools,
      toolsRef: context.tools.ref,
      toolsStored: false,
      appended: context.append,
      replace: [],
    };
  }
  if ('catalog' in context.tools) {
    // callModel answers a catalog request with the worker's own catalog before it assembles the call.
    throw new Error('A model call reached its context still asking for the catalog');
  }
  const toolsRef = await store.put(scope, encodeJson(context.tools.specs));
  const tools = context.tools.specs;
  return {
    messages: await withStoredOutputs(store, scope, context.append),
    tools,
    toolsRef,
    toolsStored: true,
    appended: context.append,
    replace: [],
  };
}

/** A stored context with all its messages: from the cache, else read back along its chain to a whole context. */
async function readStoredContext(
  store: PayloadStore,
  cache: ModelContextCache,
  scope: PayloadScope,
  ref: PayloadRef,
): Promise<DecodedContext> {
  const cached = cache.get(scope, ref);
  if (cached) return cached;
  const chain: StoredContextBody[] = [];
  for (let next: PayloadRef | undefined = ref; next !== undefined;) {
    const body: StoredContextBody = await readContextJson<StoredContextBody>(store, scope, next);
    chain.push(body);
    next = body.parent;
  }
  const newest = chain[0] as StoredContextBody;
  const messages = await withStoredOutputs(
    store,
    scope,
    chain
      .reverse()
      .reduce<TranscriptMessage[]>(
        (messages, link) => [...withReplacements(messages, link.replace ?? []), ...link.messages],
        [],
      ),
  );
  const tools = await readContextJson<ModelToolSpec[]>(store, scope, newest.tools);
  const bytes = jsonBytes(tools) + messagesBytes(messages);
  return { ref, messages, toolsRef: newest.tools, tools, depth: newest.depth ?? 0, bytes };
}

/** Stores the call's context ending with the model's answer: a delta after its parent, or whole to cut the chain. */
async function storeAnswered(
  store: PayloadStore,
  cache: ModelContextCache,
  scope: PayloadScope,
  read: ReadContext,
  answer: TranscriptMessage,
): Promise<PayloadRef> {
  const messages = [...read.messages, answer];
  const { parent } = read;
  const depth = parent ? parent.depth + 1 : 0;
  const delta = parent !== undefined && depth < wholeContextEvery;
  const body: StoredContextBody = delta
    ? {
        tools: read.toolsRef,
        parent: parent.ref,
        depth,
        ...(read.replace.length > 0 ? { replace: read.replace } : {}),
        messages: [...read.appended, answer],
      }
    : { tools: read.toolsRef, messages };
  const data = encodeJson(body);
  const ref = await store.put(scope, data);
  const bytes = heldBytes(read, answer);
  cache.set(scope, { ref, messages, toolsRef: read.toolsRef, tools: read.tools, depth: delta ? depth : 0, bytes });
  return ref;
}

/**
 * What the context `read` continues, with `answer` after it, costs held ({@link DecodedContext.bytes}): its parent's
 * count with the messages this call replaced and added, so a step measures its own messages only.
 */
function heldBytes(read: ReadContext, answer: TranscriptMessage): number {
  const { parent, messages } = read;
  if (!parent) return jsonBytes(read.tools) + messagesBytes(messages) + jsonBytes(answer);
  let bytes = parent.bytes + messagesBytes(messages.slice(parent.messages.length)) + jsonBytes(answer);
  for (const index of new Set(read.replace.map(({ index }) => index))) {
    bytes += jsonBytes(messages[index]) - jsonBytes(parent.messages[index]);
  }
  return bytes;
}

function messagesBytes(messages: readonly TranscriptMessage[]): number {
  return messages.reduce((bytes, message) => bytes + jsonBytes(message), 0);
}

/** The bytes of `value`'s JSON, without encoding it. */
function jsonBytes(value: unknown): number {
  return Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');
}

/** `messages` with each replacement in place; an index outside them is a run's mistake, not the store's. */
function withReplacements(
  messages: readonly TranscriptMessage[],
  replace: readonly MessageReplacement[],
): TranscriptMessage[] {
  const replaced = [...messages];
  for (const { index, message } of replace) {
    if (!Number.isInteger(index) || index < 0 || index >= replaced.length) {
      throw new RelayError(
        'invalid_input',
        `A model call replaces message ${index} of a stored context of ${replaced.length} messages`,
      );
    }
    replaced[index] = message;
  }
  return replaced;
}

/**
 * The messages with every tool output and model text kept by reference read back from the store: the model sees the
 * whole output or text, while the run's history and the stored deltas hold its ref.
 */
async function withStoredOutputs(
  store: PayloadStore,
  scope: PayloadScope,
  messages: readonly TranscriptMessage[],
): Promise<TranscriptMessage[]> {
  return Promise.all(
    messages.map(async (message) => {
      if (message.role === 'assistant' && message.storedContent) {
        const { storedContent, ...rest } = message;
        const ref = storedContent.storedText;
        const bytes = await store.get(scope, ref).catch(storedOutputLost('a model text', ref));
        return { ...rest, content: new TextDecoder().decode(bytes) };
      }
      if (message.role !== 'tool' || !message.result.success || !isStoredToolOutput(message.result.data)) {
        return message;
      }
      const ref = message.result.data.storedOutput;
      const what = `the output of tool call ${message.toolCallId}`;
      const data = await readJson<unknown>(store, scope, ref).catch(storedOutputLost(what, ref));
      return { ...message, result: { ...message.result, data } };
    }),
  );
}

/**
 * A stored output or text has no copy in the run, so the whole transcript sent again would refer to it too: its loss
 * is `stored_output_not_found`, which fails the run at once, not the `payload_not_found` a lost context is, which the
 * run answers by sending everything again.
 */
function storedOutputLost(what: string, ref: PayloadRef): (error: unknown) => never {
  return (error) => {
    if (!RelayError.isInstance(error) || error.code !== 'payload_not_found') throw error;
    throw new RelayError(
      'stored_output_not_found',
      `The run kept ${what} in its payload store, and the store this worker reads lacks it (${error.message}): the ` +
        'workers of a task queue that keep outputs in a store must share it',
      { cause: error, details: { ref } },
    );
  };
}

/**
 * Reads a link of a stored context (a delta, a whole context or the tools). A record the store found damaged is gone:
 * the file and PostgreSQL stores remove it as they report it. The context is then lost as surely as an expired one,
 * so it is reported as `payload_not_found`, which the run answers by sending its whole transcript again (logging this
 * message), where `payload_corrupt` failed the run.
 */
async function readContextJson<T>(store: PayloadStore, scope: PayloadScope, ref: PayloadRef): Promise<T> {
  try {
    return await readJson<T>(store, scope, ref);
  } catch (error) {
    if (!RelayError.isInstance(error) || error.code !== 'payload_corrupt') throw error;
    throw new RelayError('payload_not_found', `A stored model context was damaged: ${error.message}`, {
      cause: error,
      details: { ref },
    });
  }
}

async function readJson<T>(store: PayloadStore, scope: PayloadScope, ref: PayloadRef): Promise<T> {
  return JSON.parse(new TextDecoder().decode(await store.get(scope, ref))) as T;
}

function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}
