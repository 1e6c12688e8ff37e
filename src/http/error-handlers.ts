import type { ErrorHandler, Hono, NotFoundHandler } from 'hono';
import { errorMessage } from '../shared/error-message.js';
import { HttpError, toHttpError } from './http-error.js';

const expectedStates = ['run_unavailable', 'catalog_unavailable', 'payload_store_unavailable'] as const;

/** A dependency the API cannot use right now (Temporal, the payload store): worth a warning with its cause. */
const unavailableDependencies = ['temporal_unavailable', 'payload_store_unreachable'] as const;

/** Where the API logs: unexpected errors to `error`; a Temporal or store it cannot use to `warn`, else to `error`. */
export type ApiLogger = Pick<Console, 'error'> & Partial<Pick<Console, 'warn'>>;

/**
 * Answers anything thrown as problem+json, logging server faults; callers only ever see a bare 500. A Temporal that
 * cannot answer, or a payload store that cannot be reached, is logged as one warning line with its cause's message, not
 * as a fault.
 */
export function createErrorHandler(logger: ApiLogger): ErrorHandler {
  return (error, c) => {
    const httpError = toHttpError(error);
    logFailure(logger, `Relay-E: ${c.req.method} ${c.req.path} failed`, error, httpError);
    return httpError.getResponse();
  };
}

/**
 * Logs what `failed` (a request, or an event stream after it started) as the API logs every failure: a dependency it
 * cannot use as one warning line with the cause, an expected state as one line, a server fault with its error.
 */
export function logFailure(logger: ApiLogger, failed: string, error: unknown, httpError: HttpError): void {
  if ((unavailableDependencies as readonly string[]).includes(httpError.code)) {
    const warn = logger.warn ?? logger.error;
    warn.call(logger, `${failed} (${httpError.status} ${httpError.code}): ${messageWithCause(error)}`);
    return;
  }
  // Waiting for a worker (a run's, or any to announce its tools) or an API started without the workers' store is
  // an expected state, not a fault: one line, no stack.
  const expectedState = (expectedStates as readonly string[]).includes(httpError.code);
  const logged = expectedState ? httpError.detail : error;
  if (httpError.status >= 500) logger.error(failed, logged);
}

/** Answers 405 with `Allow` when the path is known under another method, 404 otherwise. */
export function createNotFoundHandler(app: Pick<Hono, 'routes'>): NotFoundHandler {
  return (c) => {
    const allowed = app.routes
      .filter((route) => route.method !== 'ALL' && routePattern(route.path).test(c.req.path))
      .map((route) => route.method);
    if (allowed.length > 0) {
      const allow = [...new Set(allowed)].join(', ');
      return new HttpError(405, 'method_not_allowed', `${c.req.method} is not allowed here; use ${allow}`, {
        headers: { allow },
      }).getResponse();
    }
    return new HttpError(404, 'not_found', `No route for ${c.req.method} ${c.req.path}`).getResponse();
  };
}

/** The error's message and its cause's: the client's `ServiceError` says what it called, its gRPC cause why it failed. */
function messageWithCause(error: unknown): string {
  const cause = error instanceof Error ? error.cause : undefined;
  return cause instanceof Error ? `${errorMessage(error)}: ${errorMessage(cause)}` : errorMessage(error);
}

function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
