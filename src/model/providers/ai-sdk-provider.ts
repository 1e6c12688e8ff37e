import { generateText, jsonSchema, streamText, tool } from 'ai';
import type { JSONSchema7, ToolSet } from 'ai';
import type { LanguageModelV4, SharedV4ProviderOptions } from '@ai-sdk/provider';
import { ModelProviderError } from '../model-provider.js';
import type { ModelProvider } from '../model-provider.js';
import type { ModelResponse, ModelSettings, ModelToolSpec } from '../../shared/transcript.js';
import { toModelMessages } from './to-model-messages.js';
import { hideSecretsInError } from '../../security/hide-secrets-in-error.js';
import { toModelProviderError } from './to-model-provider-error.js';

/** Options every AI SDK backed provider takes. */
export interface StreamingOption {
  /**
   * Stream each turn (`streamText`) so its text reaches followers as it is written (`model_delta` events); the run
   * records the whole text once per step either way.
   * @default false
   */
  stream?: boolean;
}

/**
 * A provider backed by any AI SDK language model: one `generateText` (or, streaming, `streamText`) call per model
 * turn, with tools passed as schemas only, so the SDK returns the tool calls and the workflow validates, approves
 * and runs them. Retries are left to Temporal (`maxRetries: 0`); failures become `ModelProviderError`s.
 */
export function aiSdkProvider(
  resolveModel: (modelName: string) => LanguageModelV4,
  options: StreamingOption & { providerOptions?: SharedV4ProviderOptions; credentials?: readonly string[] } = {},
): ModelProvider {
  // A server that refuses a key may quote it back (`Invalid credentials: Bearer sk-…`); the failure's message goes
  // into the run's history and event log, and the worker's log prints its causes.
  const credentials = (options.credentials ?? []).filter((value) => value.length >= minCredentialLength);
  return {
    async generate(call, { signal, onTextDelta }): Promise<ModelResponse> {
      // Until the model is resolved, errors name it by its id (`openai:gpt-4.1-mini`).
      let provider = call.model;
      try {
        const model = resolveModel(call.modelName);
        provider = providerName(model);
        const request = {
          model,
          messages: toModelMessages(call.messages),
          // The run's own system messages keep their place in the transcript.
          allowSystemInMessages: true,
          ...(call.tools.length > 0 ? { tools: toToolSet(call.tools) } : {}),
          ...callSettings(call.settings),
          ...(options.providerOptions ? { providerOptions: options.providerOptions } : {}),
          maxRetries: 0,
          abortSignal: signal,
        };
        const result =
          options.stream && onTextDelta ? await streamTurn(request, onTextDelta) : await generateText(request);
        if (result.finishReason === 'interrupted') throw interruptedStream(provider);
        const { inputTokens, outputTokens } = result.usage;
        return {
          ...(result.text !== '' ? { text: result.text } : {}),
          ...(result.toolCalls.length > 0
            ? {
                // An invalid call (unknown tool, input that is not JSON) carries the model's raw input:
                // the workflow reports it back to the model as a validation failure.
                toolCalls: result.toolCalls.map((toolCall) => ({
                  id: toolCall.toolCallId,
                  name: toolCall.toolName,
                  input: toolCall.input as unknown,
                })),
              }
            : {}),
          ...(inputTokens !== undefined || outputTokens !== undefined
            ? { usage: { inputTokens: inputTokens ?? 0, outputTokens: outputTokens ?? 0 } }
            : {}),
          finishReason: result.finishReason,
        };
      } catch (error) {
        throw hideSecretsInError(toModelProviderError(error, provider, signal), credentials);
      }
    },
  };
}

/**
 * The values a provider's errors must not show: its API key, and any header it sends whose name says it carries a
 * credential. Shorter than 8 characters, a value is too likely to stand for ordinary words to be hidden by.
 */
export function providerCredentials(apiKey: string | undefined, headers: Record<string, string> = {}): string[] {
  const fromHeaders = Object.entries(headers)
    .filter(([name]) => credentialHeader.test(name))
    .map(([, value]) => value);
  return [...(apiKey !== undefined ? [apiKey] : []), ...fromHeaders];
}

const credentialHeader = /authorization|api[-_]?key|token|secret/i;
const minCredentialLength = 8;

/** One turn with `streamText`: text deltas go to `onTextDelta` as they arrive, the rest is read at the end. */
async function streamTurn(request: Parameters<typeof streamText>[0], onTextDelta: (delta: string) => void) {
  const result = streamText({ ...request, onError: leaveToActivity });
  for await (const part of result.fullStream) {
    if (part.type === 'text-delta') onTextDelta(part.text);
    // The stream reports a failure as a part; thrown, it is classified like a `generateText` failure.
    else if (part.type === 'error') throw part.error;
  }
  const [text, toolCalls, usage, finishReason] = await Promise.all([
    result.text,
    result.toolCalls,
    result.usage,
    result.finishReason,
  ]);
  return { text, toolCalls, usage, finishReason };
}

/**
 * Replaces the SDK's default `console.error`, which would print each failure (URL, request body, headers) to
 * stderr past the worker's logger: the `error` part is rethrown and the activity reports it.
 */
function leaveToActivity(): void {}

/**
 * The stream ended before the provider said the answer was done (a proxy or restart cut it): the text may be
 * partial, so the call is retried, as for a dropped connection, rather than returned as the answer.
 */
function interruptedStream(provider: string): ModelProviderError {
  return new ModelProviderError(`${provider} ended its stream before finishing the answer`, { retryable: true });
}

/** The run's sampling settings as `generateText` takes them; absent ones are left to the provider. */
function callSettings(settings: ModelSettings | undefined): ModelSettings {
  if (!settings) return {};
  const { temperature, topP, maxOutputTokens, seed, stopSequences } = settings;
  return Object.fromEntries(
    Object.entries({ temperature, topP, maxOutputTokens, seed, stopSequences }).filter(
      ([, value]) => value !== undefined,
    ),
  );
}

/** `openai.responses` → `openai`, `ollama.chat` → `ollama`: the name people configured. */
function providerName(model: LanguageModelV4): string {
  return model.provider.split('.')[0] ?? model.provider;
}

function toToolSet(specs: readonly ModelToolSpec[]): ToolSet {
  return Object.fromEntries(
    specs.map((spec) => [
      spec.name,
      tool({
        description: spec.description,
        // No `validate`: the SDK only parses the JSON; the workflow checks it against the run's catalog.
        inputSchema: jsonSchema(spec.inputSchema as JSONSchema7),
      }),
    ]),
  );
}
