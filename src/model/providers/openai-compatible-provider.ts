import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import type { ModelProvider } from '../model-provider.js';
import { aiSdkProvider, providerCredentials } from './ai-sdk-provider.js';
import type { StreamingOption } from './ai-sdk-provider.js';

export interface OpenAICompatibleProviderOptions extends StreamingOption {
  /** The provider's name in error messages, usually the prefix of its model ids (`ollama`, `vllm`). */
  name: string;
  /** The server's OpenAI-style base, e.g. `http://127.0.0.1:11434/v1` for Ollama. */
  baseURL: string;
  /** Sent as `Authorization: Bearer …` when given. @default none (local servers often need no key) */
  apiKey?: string;
  /** Extra headers on every request. @default none */
  headers?: Record<string, string>;
}

/** A server that speaks OpenAI's Chat Completions API (`POST {baseURL}/chat/completions`): Ollama, vLLM, LM Studio… */
export function openaiCompatibleProvider(options: OpenAICompatibleProviderOptions): ModelProvider {
  const { stream = false, ...connection } = options;
  // Chat Completions servers stream token usage only when asked; servers without the option ignore it.
  const compatible = createOpenAICompatible({ ...connection, includeUsage: true });
  const credentials = providerCredentials(connection.apiKey, connection.headers);
  return aiSdkProvider((modelName) => compatible(modelName), { stream, credentials });
}
