import type { ModelProvider } from '../model-provider.js';
import { anthropicProvider } from './anthropic-provider.js';
import { openaiCompatibleProvider } from './openai-compatible-provider.js';
import { openaiProvider } from './openai-provider.js';

/**
 * The providers a worker's environment configures: `openai` (OPENAI_API_KEY or OPENAI_BASE_URL),
 * `anthropic` (ANTHROPIC_API_KEY or ANTHROPIC_BASE_URL) and an OpenAI-compatible server named
 * RELAY_E_COMPATIBLE_NAME (default `local`) at RELAY_E_COMPATIBLE_BASE_URL, keyed by RELAY_E_COMPATIBLE_API_KEY.
 * Empty variables count as unset. Keys are read here, in the worker, and never enter a model request or response.
 */
export function providersFromEnv(env: NodeJS.ProcessEnv = process.env): Record<string, ModelProvider> {
  const providers: Record<string, ModelProvider> = {};
  if (env.OPENAI_API_KEY || env.OPENAI_BASE_URL) {
    providers.openai = openaiProvider({
      apiKey: env.OPENAI_API_KEY || undefined,
      baseURL: env.OPENAI_BASE_URL || undefined,
    });
  }
  if (env.ANTHROPIC_API_KEY || env.ANTHROPIC_BASE_URL) {
    providers.anthropic = anthropicProvider({
      apiKey: env.ANTHROPIC_API_KEY || undefined,
      baseURL: env.ANTHROPIC_BASE_URL || undefined,
    });
  }
  if (env.RELAY_E_COMPATIBLE_BASE_URL) {
    const name = env.RELAY_E_COMPATIBLE_NAME || 'local';
    providers[name] = openaiCompatibleProvider({
      name,
      baseURL: env.RELAY_E_COMPATIBLE_BASE_URL,
      apiKey: env.RELAY_E_COMPATIBLE_API_KEY || undefined,
    });
  }
  return providers;
}
