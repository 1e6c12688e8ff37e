import { RelayError } from '../shared/errors.js';
import type { ModelProvider } from './model-provider.js';

/** Splits `openai:gpt-4.1-mini` into its provider and model name. */
export function parseModelId(modelId: string): { provider: string; modelName: string } {
  const separator = modelId.indexOf(':');
  if (separator <= 0 || separator === modelId.length - 1) {
    throw new RelayError(
      'invalid_input',
      `Model id '${modelId}' must look like 'provider:model', e.g. 'openai:gpt-4.1-mini'`,
    );
  }
  return { provider: modelId.slice(0, separator), modelName: modelId.slice(separator + 1) };
}

/** The providers a worker was given, looked up by the prefix of a model id. */
export class ModelRegistry {
  private readonly providers: ReadonlyMap<string, ModelProvider>;

  constructor(providers: Record<string, ModelProvider>) {
    this.providers = new Map(Object.entries(providers));
  }

  /** Finds the provider for a model id; an unknown provider is a `model_not_configured` error naming the known ones. */
  resolve(modelId: string): { provider: ModelProvider; modelName: string } {
    const { provider: name, modelName } = parseModelId(modelId);
    const provider = this.providers.get(name);
    if (!provider) {
      const known = [...this.providers.keys()].map((key) => `'${key}'`).join(', ') || 'none';
      throw new RelayError('model_not_configured', `No model provider '${name}' on this worker (configured: ${known})`);
    }
    return { provider, modelName };
  }
}
