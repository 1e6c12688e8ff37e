export { aiSdkProvider } from './ai-sdk-provider.js';
export { openaiProvider } from './openai-provider.js';
export type { OpenAIProviderOptions } from './openai-provider.js';
export { anthropicProvider } from './anthropic-provider.js';
export type { AnthropicProviderOptions } from './anthropic-provider.js';
export { openaiCompatibleProvider } from './openai-compatible-provider.js';
export type { OpenAICompatibleProviderOptions } from './openai-compatible-provider.js';
export { providersFromEnv } from './providers-from-env.js';
