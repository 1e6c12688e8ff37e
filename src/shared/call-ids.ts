import type { ModelResponse, ProposedToolCall, ToolCall, TranscriptMessage } from './transcript.js';

/** Tool names longer than this are cut before they reach events, ids and the transcript. */
const maxToolNameEchoed = 128;

/** The longest provider call id kept to send back to the provider. */
const maxProviderCallIdLength = 128;

/**
 * Gives each proposed call the run's own id, `call_<step>_<index>`: unique across the whole run (steps only grow,
 * and continue-as-new carries the step), whatever the provider sent. The provider's id is kept beside it when it
 * is usable (a non-empty string of at most 128 characters, not repeated within the step) and differs, because the
 * provider pairs each result with its call by that id.
 */
export function assignCallIds(proposed: readonly ProposedToolCall[], step: number): ToolCall[] {
  const providerIds = new Set<string>();
  return proposed.map((call, index) => {
    const id = `call_${step}_${index}`;
    const providerId = usableProviderId(call.id);
    const keep = providerId !== undefined && !providerIds.has(providerId) && providerId !== id;
    if (providerId !== undefined) providerIds.add(providerId);
    return { id, name: boundToolName(call.name), input: call.input, ...(keep ? { providerCallId: providerId } : {}) };
  });
}

/**
 * The transcript message a model's answer with tool calls becomes at `step` (ids by `assignIds`, the run's own
 * rule unless it replays an older one). The run and, for a context that keeps
 * the model's answer (`withAnswer`), the model activity both build it here, so what the worker stores is what the run
 * holds.
 */
export function answerMessage(
  response: ModelResponse,
  step: number,
  assignIds: typeof assignCallIds = assignCallIds,
): TranscriptMessage & { toolCalls: ToolCall[] } {
  return {
    role: 'assistant',
    content: response.text ?? '',
    toolCalls: assignIds(response.toolCalls ?? [], step),
    ...(response.storedText ? { storedContent: response.storedText } : {}),
  };
}

/**
 * How runs started before {@link assignCallIds} named calls: the model's own id when it sent a fresh one within the
 * step, `call_<step>_<index>` otherwise. Kept so that those runs replay as they were recorded.
 */
export function assignLegacyCallIds(proposed: readonly ProposedToolCall[], step: number): ToolCall[] {
  const seen = new Set<string>();
  return proposed.map((call, index) => {
    const candidate = usableProviderId(call.id);
    const id = candidate && !seen.has(candidate) ? candidate : `call_${step}_${index}`;
    seen.add(id);
    return { id, name: boundToolName(call.name), input: call.input };
  });
}

function usableProviderId(id: unknown): string | undefined {
  return typeof id === 'string' && id.length > 0 && id.length <= maxProviderCallIdLength ? id : undefined;
}

/** No tool name is longer than 64 characters, so a longer one fails validation just the same when cut. */
function boundToolName(name: unknown): string {
  const text = typeof name === 'string' ? name : String(name);
  return text.length > maxToolNameEchoed ? text.slice(0, maxToolNameEchoed) : text;
}
