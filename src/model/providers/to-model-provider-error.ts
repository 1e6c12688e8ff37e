import { STATUS_CODES } from 'node:http';
import {
  APICallError,
  InvalidArgumentError,
  InvalidPromptError,
  LoadAPIKeyError,
  MissingToolResultsError,
  NoSuchModelError,
  StreamProviderError,
  UnsupportedFunctionalityError,
} from 'ai';
import { errorMessage } from '../../shared/error-message.js';
import { ModelProviderError } from '../model-provider.js';

/**
 * Classifies an AI SDK failure for the model activity: rate limits, 5xx and unreachable servers are retryable
 * (after the server's `retry-after-ms` / `retry-after`); rejected requests (also when the provider reports them
 * inside a stream), answers in a shape the SDK cannot read, transcripts it cannot send and configuration mistakes
 * are not; anything else is left to the activity's bounded retries. An abort of `signal` is returned unchanged so
 * cancellation stays cancellation, and a `ModelProviderError` is already classified.
 */
export function toModelProviderError(error: unknown, provider: string, signal: AbortSignal): unknown {
  if (signal.aborted || error instanceof ModelProviderError) return error;
  if (APICallError.isInstance(error)) return fromApiCallError(error, provider);
  if (StreamProviderError.isInstance(error)) return fromStreamProviderError(error, provider);
  if (MissingToolResultsError.isInstance(error)) {
    // The same transcript fails the same way on every attempt.
    return new ModelProviderError(`${provider} cannot take this transcript: ${error.message}`, {
      retryable: false,
      cause: error,
    });
  }
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
  return new ModelProviderError(`${provider} call failed: ${errorMessage(error)}`, { retryable: true, cause: error });
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
  return withStatus(provider, error.statusCode, error.message, options);
}

/** An error the provider sent inside a stream that had started: the provider says whether a retry can help. */
function fromStreamProviderError(error: StreamProviderError, provider: string): ModelProviderError {
  const options = { retryable: error.isRetryable, cause: error };
  if (error.statusCode === undefined) {
    return new ModelProviderError(`${provider} failed mid-stream: ${error.message}`, options);
  }
  return withStatus(provider, error.statusCode, error.message, options);
}

/** Words a failure that has an HTTP status the way the status reads: unreadable answer, transient, or rejected. */
function withStatus(
  provider: string,
  statusCode: number,
  message: string,
  options: { retryable: boolean; cause: unknown; retryAfterMs?: number },
): ModelProviderError {
  const reasonPhrase = STATUS_CODES[statusCode];
  const status = reasonPhrase ? `${statusCode} ${reasonPhrase}` : String(statusCode);
  const outcome =
    statusCode < 300
      ? 'sent a response that could not be read'
      : options.retryable
        ? 'could not answer'
        : 'rejected the request';
  return new ModelProviderError(`${provider} ${outcome} (${status}): ${message}`, { ...options, status: statusCode });
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
