import { HTTPException } from 'hono/http-exception';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { RelayError } from '../shared/errors.js';
import type { ErrorCode } from '../shared/errors.js';
import type { ToolInputIssue } from '../shared/tool-input.js';
import { isTemporalUnavailable, missingNamespaceOf } from '../client/temporal-unavailable.js';

/** Codes only the HTTP layer produces, beside the engine's `errorCodes`. */
export const httpOnlyErrorCodes = [
  'invalid_json',
  'unauthorized',
  'forbidden',
  'host_not_allowed',
  'not_found',
  'method_not_allowed',
  'catalog_unavailable',
  'payload_store_unavailable',
  'payload_store_unreachable',
  'temporal_unavailable',
  'internal_error',
] as const;

export type HttpOnlyErrorCode = (typeof httpOnlyErrorCodes)[number];

export type HttpErrorCode = ErrorCode | HttpOnlyErrorCode;

/** The body of every error response (RFC 9457 `application/problem+json`). */
export interface Problem {
  type: string;
  title: string;
  status: number;
  detail: string;
  code: HttpErrorCode;
  issues?: ToolInputIssue[];
  [extension: string]: unknown;
}

/** The HTTP status each engine error code answers with; the one place that decides it. */
const relayErrorStatus: Readonly<Record<ErrorCode, ContentfulStatusCode>> = {
  invalid_input: 422,
  approval_input_invalid: 422,
  // The caller's key is the tenant's, but its name is not among those the tool lets decide.
  approver_not_allowed: 403,
  unknown_tool: 422,
  model_not_configured: 422,
  run_not_found: 404,
  // The run exists but cannot answer until a worker recovers it: worth retrying, so not a 500.
  run_unavailable: 503,
  // Another tenant's run must look exactly like a run that does not exist.
  tenant_mismatch: 404,
  approval_not_pending: 409,
  run_already_exists: 409,
  run_failed: 409,
  payload_too_large: 413,
  // A key missing from this server's configuration: the caller can do nothing about it.
  decryption_failed: 500,
  // A stored payload a run refers to is gone (expired or lost): an operator's matter.
  payload_not_found: 500,
  // A tool output or model text a run kept out of history is in no store the worker reads: workers must share one.
  stored_output_not_found: 500,
  // A stored payload no longer matches its address: damaged or altered at rest, an operator's matter too.
  payload_corrupt: 500,
  // What a receiver of approval notices answers one whose signature does not verify.
  invalid_signature: 401,
  model_error: 502,
  // The model stopped before finishing its final answer (a token limit, a content filter): a run's failure code.
  model_answer_unfinished: 502,
  invalid_tool_definition: 500,
  duplicate_tool: 500,
  tool_execution_failed: 500,
  tool_reported_error: 500,
  tool_transport_failed: 502,
  tool_protocol_error: 502,
};

const titles: Readonly<Record<HttpErrorCode, string>> = {
  invalid_input: 'Invalid input',
  approval_input_invalid: 'Edited input rejected',
  approver_not_allowed: 'Approver not allowed',
  unknown_tool: 'Unknown tool',
  model_not_configured: 'Model not configured',
  run_not_found: 'Run not found',
  run_unavailable: 'Run temporarily unavailable',
  tenant_mismatch: 'Run not found',
  approval_not_pending: 'Approval not pending',
  run_failed: 'Run failed',
  payload_too_large: 'Payload too large',
  decryption_failed: 'Decryption failed',
  payload_not_found: 'Stored payload missing',
  stored_output_not_found: 'Stored output missing',
  payload_corrupt: 'Stored payload corrupt',
  invalid_signature: 'Invalid signature',
  model_error: 'Model error',
  model_answer_unfinished: 'Model answer unfinished',
  invalid_tool_definition: 'Internal server error',
  duplicate_tool: 'Internal server error',
  tool_execution_failed: 'Internal server error',
  tool_reported_error: 'Internal server error',
  tool_transport_failed: 'Tool server unreachable',
  tool_protocol_error: 'Tool server error',
  invalid_json: 'Invalid JSON',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  host_not_allowed: 'Host not allowed',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  run_already_exists: 'Run already exists',
  catalog_unavailable: 'No worker catalog',
  payload_store_unavailable: 'No payload store',
  payload_store_unreachable: 'Payload store unreachable',
  temporal_unavailable: 'Temporal unavailable',
  internal_error: 'Internal server error',
};

/** An error that answers as `application/problem+json` with its status and a stable code. */
export class HttpError extends HTTPException {
  readonly code: HttpErrorCode;
  readonly detail: string;
  readonly issues?: ToolInputIssue[];
  readonly headers?: Record<string, string>;

  constructor(
    status: ContentfulStatusCode,
    code: HttpErrorCode,
    detail: string,
    options: { issues?: ToolInputIssue[]; headers?: Record<string, string>; cause?: unknown } = {},
  ) {
    super(status, { message: detail, cause: options.cause });
    this.name = 'HttpError';
    this.code = code;
    this.detail = detail;
    if (options.issues) this.issues = options.issues;
    if (options.headers) this.headers = options.headers;
  }

  /** The problem document this error answers with. */
  toProblem(): Problem {
    return {
      type: `urn:relay-e:problem:${this.code}`,
      title: titles[this.code],
      status: this.status,
      detail: this.detail,
      code: this.code,
      ...(this.issues ? { issues: this.issues } : {}),
    };
  }

  override getResponse(): Response {
    return new Response(JSON.stringify(this.toProblem()), {
      status: this.status,
      headers: { 'content-type': 'application/problem+json', ...this.headers },
    });
  }
}

/**
 * How long a 503 asks the caller to wait (`Retry-After`) for what passes in seconds: a worker recovering a run (about
 * one workflow task timeout), a Temporal frontend restarting or a load balancer moving the connection, a database
 * restarting or failing over.
 */
const retryAfterSeconds = 5;

/** A 503 of `code` saying `detail`, with its `Retry-After`. */
function unavailable(code: HttpErrorCode, detail: string, cause: unknown): HttpError {
  return new HttpError(503, code, detail, { headers: { 'retry-after': String(retryAfterSeconds) }, cause });
}

/** A 503 `temporal_unavailable` with its `Retry-After`, saying `detail`. */
export function temporalUnavailable(detail: string, cause?: unknown): HttpError {
  return unavailable('temporal_unavailable', detail, cause);
}

/**
 * The 503 `temporal_unavailable` for an error that says Temporal cannot answer now (not reached, no answer in time)
 * or has no namespace by the name this API uses (a deployment problem, not the caller's); undefined for other errors.
 * The detail names the namespace but not the server's address or its message, which are the operator's to read.
 */
export function temporalUnavailableError(error: unknown): HttpError | undefined {
  const namespace = missingNamespaceOf(error);
  if (namespace !== undefined) {
    return temporalUnavailable(
      `Temporal has no namespace '${namespace}', the one this API is set to use: its operator must create it or ` +
        'correct the setting',
      error,
    );
  }
  if (!isTemporalUnavailable(error)) return undefined;
  return temporalUnavailable('Temporal cannot be reached or did not answer in time; try again shortly', error);
}

/**
 * The 503 `payload_store_unreachable` for `cause`, an error that says the payload store cannot be reached right now.
 * The detail names neither the store's address nor its credentials, which are the operator's to read in the log.
 */
export function payloadStoreUnreachable(cause: unknown): HttpError {
  return unavailable(
    'payload_store_unreachable',
    'The payload store cannot be reached right now; try again shortly',
    cause,
  );
}

/**
 * Turns anything thrown into an `HttpError`: engine errors by their code, a Temporal that cannot answer into a 503
 * `temporal_unavailable`, and everything else into a 500 whose detail says nothing about the internals.
 */
export function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (RelayError.isInstance(error)) {
    const status = relayErrorStatus[error.code];
    const code = error.code === 'tenant_mismatch' ? 'run_not_found' : error.code;
    const issues = readIssues(error.details);
    if (error.code === 'run_unavailable') return unavailable(code, error.message, error);
    if (status >= 500)
      return new HttpError(status, code, 'The server could not complete the request', { cause: error });
    return new HttpError(status, code, error.message, { ...(issues ? { issues } : {}), cause: error });
  }
  return (
    temporalUnavailableError(error) ??
    new HttpError(500, 'internal_error', 'The server could not complete the request', { cause: error })
  );
}

function readIssues(details: Record<string, unknown> | undefined): ToolInputIssue[] | undefined {
  const issues = details?.['issues'];
  return Array.isArray(issues) ? (issues as ToolInputIssue[]) : undefined;
}
