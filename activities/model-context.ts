import type { PayloadScope, PayloadStore } from '../src/store/payload-store.js';
import type {
  ModelContextRequest,
  ModelRequest,
  ModelToolSpec,
  StoredModelContext,
  TranscriptMessage,
} from '../src/shared/transcript.js';

/**
 * Turns a call that refers to stored context into the request the model gets (the stored transcript followed by
 * what is new, and the tools), and stores that transcript and those tools for the next call to refer to. Storing is
 * content-addressed, so a retried call stores the same bytes under the same refs. Throws the store's
 * `payload_not_found` when it no longer holds what the call refers to.
 */
export async function assembleModelRequest(
  store: PayloadStore,
  request: ModelContextRequest,
): Promise<{ request: ModelRequest; stored: StoredModelContext }> {
  const { context, tools: toolsGiven, model, step, runId, tenantId, settings } = request;
  const scope: PayloadScope = { tenantId, runId };
  const base = context.base === undefined ? [] : await readJson<TranscriptMessage[]>(store, scope, context.base);
  const messages = [...base, ...context.append];
  const tools = 'ref' in toolsGiven ? await readJson<ModelToolSpec[]>(store, scope, toolsGiven.ref) : toolsGiven.specs;
  const stored: StoredModelContext = {
    context: await store.put(scope, encodeJson(messages)),
    tools: 'ref' in toolsGiven ? toolsGiven.ref : await store.put(scope, encodeJson(tools)),
  };
  return {
    request: { model, messages, tools, step, runId, tenantId, ...(settings ? { settings } : {}) },
    stored,
  };
}

async function readJson<T>(store: PayloadStore, scope: PayloadScope, ref: StoredModelContext['context']): Promise<T> {
  return JSON.parse(new TextDecoder().decode(await store.get(scope, ref))) as T;
}

function encodeJson(value: unknown): Uint8Array {
  return new TextEncoder().encode(JSON.stringify(value));
}
