import { ApplicationFailure } from '@temporalio/activity';
import { RelayError } from '../src/shared/errors.js';

/** The store lacks what a model call refers to: a context (`payload_not_found`) or a stored output or text. */
export function isStoredPayloadMissing(error: unknown): boolean {
  return (
    RelayError.isInstance(error) && (error.code === 'payload_not_found' || error.code === 'stored_output_not_found')
  );
}

/** Configuration mistakes do not heal on a retry: fail at once with the error's code as the failure type. */
export function toNonRetryableFailure(error: unknown): unknown {
  if (!RelayError.isInstance(error)) return error;
  return ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true });
}
