/** Response bodies in each provider's real wire format, shaped like recorded API responses. */

import type { RecordedRequest } from './provider-wire-server.js';

/**
 * A Responses API body as `POST /v1/responses` returns it; `incompleteReason` makes it one the model did not finish
 * (`status: 'incomplete'`, as for a token limit or a content filter).
 */
export function openaiResponse(output: unknown[], incompleteReason?: 'max_output_tokens' | 'content_filter') {
  return {
    id: 'resp_68a1c2f0e4b88190a3f7d2c1b5e6f7a8',
    object: 'response',
    created_at: 1755435760,
    status: incompleteReason ? 'incomplete' : 'completed',
    background: false,
    error: null,
    incomplete_details: incompleteReason ? { reason: incompleteReason } : null,
    instructions: null,
    max_output_tokens: null,
    model: 'gpt-4.1-mini-2025-04-14',
    output,
    parallel_tool_calls: true,
    previous_response_id: null,
    reasoning: { effort: null, summary: null },
    service_tier: 'default',
    store: true,
    temperature: 1,
    text: { format: { type: 'text' }, verbosity: 'medium' },
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    truncation: 'disabled',
    usage: {
      input_tokens: 52,
      input_tokens_details: { cached_tokens: 0 },
      output_tokens: 18,
      output_tokens_details: { reasoning_tokens: 0 },
      total_tokens: 70,
    },
    user: null,
    metadata: {},
  };
}

export function openaiMessageItem(text: string) {
  return {
    id: 'msg_68a1c2f1a0f48190b2d1e0f9c8b7a6d5',
    type: 'message',
    status: 'completed',
    role: 'assistant',
    content: [{ type: 'output_text', annotations: [], logprobs: [], text }],
  };
}

export function openaiFunctionCallItem(callId: string, name: string, argumentsText: string) {
  return {
    id: `fc_${callId}`,
    type: 'function_call',
    status: 'completed',
    arguments: argumentsText,
    call_id: callId,
    name,
  };
}

export function openaiError(message: string, type: string, code: string | null) {
  return { error: { message, type, param: null, code } };
}

/** A Messages API body as `POST /v1/messages` returns it. */
export function anthropicMessage(content: unknown[], stopReason: 'end_turn' | 'tool_use' | 'max_tokens' | 'refusal') {
  return {
    id: 'msg_01XFDUDYJgAACzvnptvVoYEL',
    type: 'message',
    role: 'assistant',
    model: 'claude-sonnet-4-5-20250929',
    content,
    stop_reason: stopReason,
    stop_sequence: null,
    usage: {
      input_tokens: 412,
      cache_creation_input_tokens: 0,
      cache_read_input_tokens: 0,
      output_tokens: 57,
      service_tier: 'standard',
    },
  };
}

export function anthropicError(type: string, message: string) {
  return { type: 'error', error: { type, message }, request_id: 'req_011CSHoEeqs5C35K2UUqR7Fy' };
}

/** A Chat Completions body as Ollama's `POST /v1/chat/completions` returns it. */
export function chatCompletion(
  message: Record<string, unknown>,
  finishReason: 'stop' | 'tool_calls' | 'length' | 'content_filter',
) {
  return {
    id: 'chatcmpl-417',
    object: 'chat.completion',
    created: 1755435760,
    model: 'llama3.1:8b',
    system_fingerprint: 'fp_ollama',
    choices: [{ index: 0, message: { role: 'assistant', ...message }, finish_reason: finishReason }],
    usage: { prompt_tokens: 160, completion_tokens: 18, total_tokens: 178 },
  };
}

export function chatToolCall(id: string, name: string, argumentsText: string) {
  return { id, index: 0, type: 'function', function: { name, arguments: argumentsText } };
}

export function chatError(message: string, type: string) {
  return { error: { message, type, param: null, code: null } };
}

/**
 * A Chat Completions stream that writes `pieces` as text deltas, then stops: the `data:` lines, `[DONE]` last. Like
 * OpenAI, vLLM and Ollama, it sends the usage chunk only when the request asks with `stream_options.include_usage`.
 */
export function chatCompletionStream(pieces: readonly string[]): (request: RecordedRequest) => string[] {
  return (request) => [
    ...chatCompletionStreamStart(pieces),
    chatChunk({}, 'stop'),
    ...(asksForUsage(request)
      ? [chatChunk({}, null, { prompt_tokens: 160, completion_tokens: 18, total_tokens: 178 })]
      : []),
    '[DONE]',
  ];
}

/** The start of a Chat Completions stream: the role chunk and one chunk per piece, with no finish_reason yet. */
export function chatCompletionStreamStart(pieces: readonly string[]): string[] {
  return [
    chatChunk({ role: 'assistant', content: '' }, null),
    ...pieces.map((piece) => chatChunk({ content: piece }, null)),
  ];
}

/** An error chunk inside a Chat Completions stream, as vLLM sends one (e.g. the context is too long). */
export function chatStreamError(message: string, type: string, code: number) {
  return JSON.stringify({ error: { message, type, code } });
}

function chatChunk(delta: Record<string, unknown>, finishReason: string | null, usage?: Record<string, number>) {
  return JSON.stringify({
    id: 'chatcmpl-418',
    object: 'chat.completion.chunk',
    created: 1755435760,
    model: 'llama3.1:8b',
    // The usage chunk comes last, with no choices.
    choices: usage ? [] : [{ index: 0, delta, finish_reason: finishReason }],
    ...(usage ? { usage } : {}),
  });
}

function asksForUsage(request: RecordedRequest): boolean {
  const body = request.body as { stream_options?: { include_usage?: boolean } } | undefined;
  return body?.stream_options?.include_usage === true;
}

/** A Messages API stream that writes `pieces` as one text block and ends with `end_turn`. */
export function anthropicStream(pieces: readonly string[]): string[] {
  return [
    ...anthropicStreamStart(pieces),
    JSON.stringify({ type: 'content_block_stop', index: 0 }),
    JSON.stringify({
      type: 'message_delta',
      delta: { stop_reason: 'end_turn', stop_sequence: null },
      usage: { output_tokens: 57 },
    }),
    JSON.stringify({ type: 'message_stop' }),
  ];
}

/** The start of a Messages API stream: the message, a text block and its deltas, before any stop reason. */
export function anthropicStreamStart(pieces: readonly string[]): string[] {
  return [
    JSON.stringify({
      type: 'message_start',
      message: {
        ...anthropicMessage([], 'end_turn'),
        stop_reason: null,
        usage: { input_tokens: 412, output_tokens: 1 },
      },
    }),
    JSON.stringify({ type: 'content_block_start', index: 0, content_block: { type: 'text', text: '' } }),
    ...pieces.map((text) =>
      JSON.stringify({ type: 'content_block_delta', index: 0, delta: { type: 'text_delta', text } }),
    ),
  ];
}

/** An `error` event inside a Messages API stream. */
export function anthropicStreamError(type: string, message: string) {
  return JSON.stringify(anthropicError(type, message));
}

/** A Responses API stream that writes `pieces` as one message and ends with `response.completed`. */
export function openaiResponseStream(pieces: readonly string[]): string[] {
  const item = openaiMessageItem(pieces.join(''));
  return [
    ...openaiResponseStreamStart(pieces),
    JSON.stringify({ type: 'response.output_item.done', sequence_number: pieces.length + 2, output_index: 0, item }),
    JSON.stringify({
      type: 'response.completed',
      sequence_number: pieces.length + 3,
      response: openaiResponse([item]),
    }),
  ];
}

/** The start of a Responses API stream: the response, a message item and its text deltas, before it completes. */
export function openaiResponseStreamStart(pieces: readonly string[]): string[] {
  const { id } = openaiMessageItem('');
  return [
    JSON.stringify({
      type: 'response.created',
      sequence_number: 0,
      response: { ...openaiResponse([]), status: 'in_progress', usage: null },
    }),
    JSON.stringify({
      type: 'response.output_item.added',
      sequence_number: 1,
      output_index: 0,
      item: { type: 'message', id, status: 'in_progress', role: 'assistant', content: [] },
    }),
    ...pieces.map((delta, index) =>
      JSON.stringify({
        type: 'response.output_text.delta',
        sequence_number: index + 2,
        item_id: id,
        output_index: 0,
        content_index: 0,
        delta,
        logprobs: [],
      }),
    ),
  ];
}

/** An `error` event inside a Responses API stream. */
export function openaiStreamError(code: string, message: string, sequenceNumber: number) {
  return JSON.stringify({ type: 'error', sequence_number: sequenceNumber, code, message, param: null });
}
