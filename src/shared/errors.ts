/** Stable error codes; they double as `ApplicationFailure.type` and as HTTP problem types. */
export const errorCodes = [
  'invalid_tool_definition',
  'duplicate_tool',
  'unknown_tool',
  'invalid_input',
  'model_not_configured',
  'model_error',
  'model_answer_unfinished',
  'run_not_found',
  'run_already_exists',
  'run_unavailable',
  'approval_not_pending',
  'approval_input_invalid',
  'approver_not_allowed',
  'tenant_mismatch',
  'tool_execution_failed',
  'tool_reported_error',
  'tool_transport_failed',
  'tool_protocol_error',
  'run_failed',
  'payload_too_large',
  'decryption_failed',
  'payload_not_found',
  'stored_output_not_found',
  'payload_corrupt',
  'invalid_signature',
] as const;

export type ErrorCode = (typeof errorCodes)[number];

const marker = Symbol.for('relay-e.error');

/**
 * The one error type Relay-E throws. Recognise it with `RelayError.isInstance` (or one code with `RelayError.hasCode`),
 * which works across module copies and the workflow sandbox, where `instanceof` does not.
 */
export class RelayError extends Error {
  readonly code: ErrorCode;
  readonly details?: Record<string, unknown>;
  private readonly [marker] = true;

  constructor(code: ErrorCode, message: string, options?: { cause?: unknown; details?: Record<string, unknown> }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'RelayError';
    this.code = code;
    if (options?.details) this.details = options.details;
  }

  static isInstance(value: unknown): value is RelayError {
    return typeof value === 'object' && value !== null && marker in value;
  }

  /** Whether `value` is a Relay-E error with this code (see {@link isInstance}). */
  static hasCode(value: unknown, code: ErrorCode): value is RelayError {
    return RelayError.isInstance(value) && value.code === code;
  }
}
