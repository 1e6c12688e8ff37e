import { createAnthropic } from '@ai-sdk/anthropic';
import type { ModelProvider } from '../model-provider.js';
import { aiSdkProvider, providerCredentials } from './ai-sdk-provider.js';
import type { StreamingOption } from './ai-sdk-provider.js';

export interface AnthropicProviderOptions extends StreamingOption {
  /**
   * Sent as `x-api-key`; it stays in the worker and never enters workflow history.
   * @default process.env.ANTHROPIC_API_KEY
   */
  apiKey?: string;
  /**
   * Where the API lives, including the version segment.
   * @default process.env.ANTHROPIC_BASE_URL, else 'https://api.anthropic.com/v1'
   */
  baseURL?: string;
  /** Extra headers on every request, e.g. `anthropic-beta`. @default none */
  headers?: Record<string, string>;
}

/** Anthropic's Messages API (`POST {baseURL}/messages`) through the AI SDK. */
export function anthropicProvider(options: AnthropicProviderOptions = {}): ModelProvider {
  const { stream = false, ...connection } = options;
  const anthropic = createAnthropic(connection);
  const credentials = providerCredentials(connection.apiKey ?? process.env.ANTHROPIC_API_KEY, connection.headers);
  return aiSdkProvider((modelName) => anthropic(modelName), { stream, credentials });
}
