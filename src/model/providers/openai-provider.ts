import { createOpenAI } from '@ai-sdk/openai';
import type { ModelProvider } from '../model-provider.js';
import { aiSdkProvider, providerCredentials } from './ai-sdk-provider.js';
import type { StreamingOption } from './ai-sdk-provider.js';

export interface OpenAIProviderOptions extends StreamingOption {
  /**
   * Sent as `Authorization: Bearer …`; it stays in the worker and never enters workflow history.
   * @default process.env.OPENAI_API_KEY
   */
  apiKey?: string;
  /**
   * Where the API lives, e.g. a proxy or Azure-style gateway that speaks the Responses API.
   * @default process.env.OPENAI_BASE_URL, else 'https://api.openai.com/v1'
   */
  baseURL?: string;
  /** Sent as `OpenAI-Organization`. @default none */
  organization?: string;
  /** Sent as `OpenAI-Project`. @default none */
  project?: string;
  /** Extra headers on every request. @default none */
  headers?: Record<string, string>;
  /**
   * Whether OpenAI keeps each response (the Responses API's `store`). The run's history already holds the
   * transcript, and prompts and tool results often hold customer data, so nothing is stored unless asked.
   * @default false
   */
  store?: boolean;
}

/** OpenAI through the AI SDK's default model, which calls the Responses API (`POST {baseURL}/responses`). */
export function openaiProvider(options: OpenAIProviderOptions = {}): ModelProvider {
  const { store = false, stream = false, ...connection } = options;
  const openai = createOpenAI(connection);
  const credentials = providerCredentials(connection.apiKey ?? process.env.OPENAI_API_KEY, connection.headers);
  return aiSdkProvider((modelName) => openai(modelName), {
    stream,
    providerOptions: { openai: { store } },
    credentials,
  });
}
