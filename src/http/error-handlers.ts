import type { ErrorHandler, Hono, NotFoundHandler } from 'hono';
import { HttpError, toHttpError } from './http-error.js';

const expectedStates = ['run_unavailable', 'catalog_unavailable', 'payload_store_unavailable'] as const;

/** Answers anything thrown as problem+json, logging server faults; callers only ever see a bare 500. */
export function createErrorHandler(logger: Pick<Console, 'error'>): ErrorHandler {
  return (error, c) => {
    const httpError = toHttpError(error);
    // Waiting for a worker (a run's, or any to announce its tools) or an API started without the workers' store is
    // an expected state, not a fault: one line, no stack.
    const expectedState = (expectedStates as readonly string[]).includes(httpError.code);
    const logged = expectedState ? httpError.detail : error;
    if (httpError.status >= 500) logger.error(`Relay-E: ${c.req.method} ${c.req.path} failed`, logged);
    return httpError.getResponse();
  };
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

function routePattern(path: string): RegExp {
  const escaped = path.replace(/[.+?^${}()|[\]\\]/g, '\\$&').replace(/:[^/]+/g, '[^/]+');
  return new RegExp(`^${escaped}$`);
}
