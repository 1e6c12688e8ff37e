import { STATUS_CODES } from 'node:http';
import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  LoadAPIKeyError,
  NoSuchModelError,
  UnsupportedFunctionalityError,
} from 'ai';
import { ModelProviderError } from '../model-provider.js';

/**
 * Classifies an AI SDK failure for the model activity: rate limits, 5xx and unreachable servers are retryable
 * (after the server's `retry-after-ms` / `retry-after`); rejected requests, answers in a shape the SDK cannot
 * read and configuration mistakes are not; anything else is left to the activity's bounded retries.
 * An abort of `signal` is returned unchanged so cancellation stays cancellation.
 */
export function toModelProviderError(error: unknown, provider: string, signal: AbortSignal): unknown {
  if (signal.aborted) return error;
  if (APICallError.isInstance(error)) return fromApiCallError(error, provider);
  if (
    LoadAPIKeyError.isInstance(error) ||
    InvalidArgumentError.isInstance(error) ||
    InvalidPromptError.isInstance(error) ||
    NoSuchModelError.isInstance(error) ||
    UnsupportedFunctionalityError.isInstance(error)
  ) {
    return new ModelProviderError(`${provider} is not configured for this call: ${error.message}`, {
      retryable: false,
      cause: error,
    });
  }
  const reason = error instanceof Error ? error.message : String(error);
  return new ModelProviderError(`${provider} call failed: ${reason}`, { retryable: true, cause: error });
}

function fromApiCallError(error: APICallError, provider: string): ModelProviderError {
  const retryAfterMs = readRetryAfterMs(error.responseHeaders);
  const options = {
    retryable: error.isRetryable,
    cause: error,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
  };
  if (error.statusCode === undefined) {
    return new ModelProviderError(`${provider} could not be reached: ${error.message}`, options);
  }
  const reasonPhrase = STATUS_CODES[error.statusCode];
  const status = reasonPhrase ? `${error.statusCode} ${reasonPhrase}` : String(error.statusCode);
  const outcome =
    error.statusCode < 300
      ? 'sent a response that could not be read'
      : error.isRetryable
        ? 'could not answer'
        : 'rejected the request';
  return new ModelProviderError(`${provider} ${outcome} (${status}): ${error.message}`, {
    ...options,
    status: error.statusCode,
  });
}

/** OpenAI sends `retry-after-ms`; the HTTP standard `retry-after` is seconds or a date. */
function readRetryAfterMs(headers: Record<string, string> | undefined): number | undefined {
  const milliseconds = Number.parseFloat(headers?.['retry-after-ms'] ?? '');
  if (Number.isFinite(milliseconds) && milliseconds >= 0) return milliseconds;
  const retryAfter = headers?.['retry-after'];
  if (retryAfter === undefined) return undefined;
  const seconds = Number.parseFloat(retryAfter);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1_000;
  const date = Date.parse(retryAfter);
  return Number.isNaN(date) ? undefined : Math.max(0, date - Date.now());
}
