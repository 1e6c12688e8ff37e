import type { PayloadRef } from '../store/payload-store.js';

/**
 * A tool output over this many bytes of JSON, or a model's text over this many bytes beside its tool calls, is kept in
 * the worker's payload store, and the run's history holds a {@link StoredToolOutput} or {@link StoredModelText} in
 * its place (runs under the lean-history rules, which came with the patch `one-marker-for-every-rule`). Small enough
 * that a step's history stays small, large enough that an ordinary output (a record, a short page of rows) or a
 * sentence before a call stays inline.
 */
export const outputByReferenceBytes = 4 * 1024;

/** The longest preview (in characters of the output's JSON) a {@link StoredToolOutput} carries. */
export const storedOutputPreviewLength = 256;

/**
 * What a tool result's `data` holds when the output itself is in the payload store: its ref (read it with
 * `PayloadStore.get({ tenantId, runId }, ref)` on a store opened like the worker's), its size, and its first
 * characters. The model activity puts the output back before the model sees it; events and reads show this.
 */
export interface StoredToolOutput {
  storedOutput: PayloadRef;
  /** The size of the output's JSON. */
  bytes: number;
  /** The start of the output's JSON. */
  preview: string;
}

export function isStoredToolOutput(data: unknown): data is StoredToolOutput {
  return isStoredByReference(data, 'storedOutput');
}

/**
 * What a model's answer holds in place of its text, when the answer also calls tools and the text is over
 * `outputByReferenceBytes`: the ref of the text in the payload store, its size in UTF-8 bytes, and its first
 * characters. A final answer (no tool calls) is the run's output and always stays whole. The model activity puts the
 * text back whenever it sends the transcript; the `model_responded` event and reads show this.
 */
export interface StoredModelText {
  storedText: PayloadRef;
  bytes: number;
  preview: string;
}

export function isStoredModelText(value: unknown): value is StoredModelText {
  return isStoredByReference(value, 'storedText');
}

/** Whether `value` is a payload kept by reference: a ref under `refKey`, its size and its preview. */
function isStoredByReference(value: unknown, refKey: 'storedOutput' | 'storedText'): boolean {
  if (typeof value !== 'object' || value === null) return false;
  const { [refKey]: ref, bytes, preview } = value as Record<string, unknown>;
  return (
    typeof ref === 'string' && ref.startsWith('sha256:') && typeof bytes === 'number' && typeof preview === 'string'
  );
}
