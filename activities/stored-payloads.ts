import { toJsonText, utf8ByteLength } from '../src/shared/payload-limits.js';
import type { ModelContextRequest, ModelResponse } from '../src/shared/transcript.js';
import type { PayloadRef, PayloadStore } from '../src/store/payload-store.js';
import type { ToolSuccess } from '../src/shared/tool-result.js';
import { outputByReferenceBytes, storedOutputPreviewLength } from '../src/shared/stored-output.js';
import type { StoredModelText, StoredToolOutput } from '../src/shared/stored-output.js';
import type { ExecuteToolInput } from './activity-types.js';

/**
 * The answer with a text over `outputByReferenceBytes` beside tool calls put in the payload store, its ref and preview
 * in its place. A final answer keeps its text: it is the run's output.
 */
export async function storeLongText(
  store: PayloadStore,
  request: ModelContextRequest,
  response: ModelResponse,
): Promise<ModelResponse> {
  const { text, ...rest } = response;
  if (text === undefined || (response.toolCalls ?? []).length === 0) return response;
  const stored = await storeIfLarge(store, request, text);
  if (!stored) return response;
  return { ...rest, storedText: { storedText: stored.ref, ...stored.summary } satisfies StoredModelText };
}

/** The result with an output over `outputByReferenceBytes` put in the payload store, its ref and preview in its place. */
export async function storeLargeOutput(
  store: PayloadStore,
  call: ExecuteToolInput,
  result: ToolSuccess,
): Promise<ToolSuccess> {
  const json = toJsonText(result.data);
  const stored = json === undefined ? undefined : await storeIfLarge(store, call, json);
  if (!stored) return result;
  return { ...result, data: { storedOutput: stored.ref, ...stored.summary } satisfies StoredToolOutput };
}

/**
 * Puts a text over `outputByReferenceBytes` in the run's scope of the store: its ref, with the size and preview that
 * history keeps in its place. Undefined for a shorter text, which stays where it is.
 */
async function storeIfLarge(
  store: PayloadStore,
  { tenantId, runId }: { tenantId: string; runId: string },
  text: string,
): Promise<{ ref: PayloadRef; summary: Omit<StoredModelText, 'storedText'> } | undefined> {
  const bytes = utf8ByteLength(text);
  if (bytes <= outputByReferenceBytes) return undefined;
  const ref = await store.put({ tenantId, runId }, new TextEncoder().encode(text));
  return { ref, summary: { bytes, preview: text.slice(0, storedOutputPreviewLength) } };
}
