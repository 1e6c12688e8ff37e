import type { ModelRequest, ModelResponse } from '../shared/transcript.js';

/** What a provider receives: the run's request plus the model name with the provider prefix removed. */
export interface ModelCall extends ModelRequest {
  modelName: string;
}

/** A source of model turns (OpenAI, Anthropic, a scripted test model…), called from the model activity. */
export interface ModelProvider {
  generate(call: ModelCall, options: GenerateOptions): Promise<ModelResponse>;
}

export interface GenerateOptions {
  signal: AbortSignal;
  /** Called with each piece of text as the model streams it; a provider that does not stream never calls it. */
  onTextDelta?: (delta: string) => void;
}

/**
 * A provider failure with what the activity needs to decide on a retry: transient failures (rate limits,
 * 5xx) are retried with backoff, honouring `retryAfterMs`; the rest fail the run with `message`.
 */
export class ModelProviderError extends Error {
  readonly retryable: boolean;
  readonly retryAfterMs?: number;
  readonly status?: number;

  constructor(
    message: string,
    options: { retryable: boolean; retryAfterMs?: number; status?: number; cause?: unknown },
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'ModelProviderError';
    this.retryable = options.retryable;
    if (options.retryAfterMs !== undefined) this.retryAfterMs = options.retryAfterMs;
    if (options.status !== undefined) this.status = options.status;
  }
}
