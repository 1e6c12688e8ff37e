import type { PayloadRef, PayloadScope, PayloadStore } from '../src/store/payload-store.js';
import type {
  ModelContext,
  ModelContextRequest,
  ModelRequest,
  ModelToolSpec,
  StoredModelContext,
  TranscriptMessage,
} from '../src/shared/transcript.js';

/** One call's context as the store holds it: the messages, and the tools by the ref they are stored under. */
interface StoredContextBody {
  tools: PayloadRef;
  messages: TranscriptMessage[];
}

/**
 * Turns a call that refers to stored context into the request the model gets (the stored messages followed by
 * what is new, and the tools), and stores that context for the next call to refer to. Storing is
 * content-addressed, so a retried call stores the same bytes under the same refs. Throws the store's
 * `payload_not_found` when it no longer holds what the call refers to.
 */
export async function assembleModelRequest(
  store: PayloadStore,
  request: ModelContextRequest,
): Promise<{ request: ModelRequest; stored: StoredModelContext }> {
  const { context, model, step, runId, tenantId, settings } = request;
  const scope: PayloadScope = { tenantId, runId };
  const { messages, toolsRef, toolsStored } = await readContext(store, scope, context);
  const tools = await readJson<ModelToolSpec[]>(store, scope, toolsRef);
  const body: StoredContextBody = { tools: toolsRef, messages };
  const stored: StoredModelContext = {
    context: await store.put(scope, encodeJson(body)),
    ...(toolsStored ? { tools: toolsRef } : {}),
  };
  return {
    request: { model, messages, tools, step, runId, tenantId, ...(settings ? { settings } : {}) },
    stored,
  };
}

/** The call's whole transcript and the ref of its tools, storing the tools when the call sent them whole. */
async function readContext(
  store: PayloadStore,
  scope: PayloadScope,
  context: ModelContext,
): Promise<{ messages: TranscriptMessage[]; toolsRef: PayloadRef; toolsStored: boolean }> {
  if ('base' in context) {
    const base = await readJson<StoredContextBody>(store, scope, context.base);
    return { messages: [...base.messages, ...context.append], toolsRef: base.tools, toolsStored: false };
  }
  if ('ref' in context.tools) return { messages: context.append, toolsRef: context.tools.ref, toolsStored: false };
  const toolsRef = await store.put(scope, encodeJson(context.tools.specs));
  return { messages: context.append, toolsRef, toolsStored: true };
}

async function readJson<T>(store: PayloadStore, scope: PayloadScope, ref: PayloadRef): Promise<T> {
  return JSON.parse(new TextDecoder().decode(await store.get(scope, ref))) as T;
}

function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}
