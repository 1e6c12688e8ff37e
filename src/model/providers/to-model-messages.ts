import type { JSONValue, ModelMessage, ToolResultPart } from 'ai';
import type { ToolResult } from '../../shared/tool-result.js';
import type { ToolCall, TranscriptMessage } from '../../shared/transcript.js';
import { isRecord } from '../../shared/is-record.js';

/**
 * Turns a run's transcript into AI SDK messages: assistant turns keep their tool calls (id, name, input) and
 * every tool result goes back as a tool message, so each provider sees the previous step in its own format. Calls
 * carry the id the provider sent, where the run kept one, since the wire format pairs a result with its call by it.
 */
export function toModelMessages(transcript: readonly TranscriptMessage[]): ModelMessage[] {
  return transcript.map((message): ModelMessage => {
    switch (message.role) {
      case 'system':
      case 'user':
        return { role: message.role, content: message.content };
      case 'assistant':
        return {
          role: 'assistant',
          content: [
            ...(message.content !== '' ? [{ type: 'text' as const, text: message.content }] : []),
            ...(message.toolCalls ?? []).map((call) => ({
              type: 'tool-call' as const,
              toolCallId: call.providerCallId ?? call.id,
              toolName: call.name,
              input: toolCallInput(call),
            })),
          ],
        };
      case 'tool':
        return {
          role: 'tool',
          content: [
            {
              type: 'tool-result',
              toolCallId: message.providerCallId ?? message.toolCallId,
              toolName: message.toolName,
              output: toToolResultOutput(message.result),
            },
          ],
        };
    }
  });
}

/**
 * The transcript keeps what the model sent, which may be a JSON string or text that is not JSON at all.
 * Providers want an object here (Anthropic rejects anything else), so any other input is sent as `{}`:
 * the tool result that follows echoes the raw text and says why it was refused.
 */
function toolCallInput(call: ToolCall): Record<string, unknown> {
  let input = call.input;
  if (typeof input === 'string') {
    try {
      input = JSON.parse(input) as unknown;
    } catch {
      return {};
    }
  }
  return isRecord(input) ? input : {};
}

/** Failures are sent as errors (Anthropic marks them `is_error`) so the model reads them as such. */
function toToolResultOutput(result: ToolResult): ToolResultPart['output'] {
  // A ToolResult has come through Temporal's JSON payloads, so it is JSON by construction.
  const value = result as unknown as JSONValue;
  return result.success ? { type: 'json', value } : { type: 'error-json', value };
}
