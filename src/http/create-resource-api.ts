import { OpenAPIHono } from '@hono/zod-openapi';
import type { Hook } from '@hono/zod-openapi';
import type { ApiKeyTenant } from './api-keys.js';
import { HttpError } from './http-error.js';
import { formatIssuePath } from '../shared/tool-input.js';
import type { ToolInputIssue } from '../shared/tool-input.js';

/** What the authentication middleware leaves for the handlers. */
export interface ApiEnv {
  Variables: { caller: ApiKeyTenant };
}

/** A Hono app for one resource's routes, refusing a request that fails its schema with a 422 like every other. */
export function createResourceApi(): OpenAPIHono<ApiEnv> {
  return new OpenAPIHono<ApiEnv>({ defaultHook: refuseInvalidRequest });
}

/** Turns a request that fails its schema into a 422 naming every issue and its path. */
const refuseInvalidRequest: Hook<unknown, ApiEnv, string, unknown> = (result) => {
  if (result.success) return;
  throw invalidRequest(result.target, result.error.issues);
};

/** One issue of a schema that refused a part of a request, as Zod reports it. */
export interface RequestIssue {
  code: string;
  path: PropertyKey[];
  message: string;
  keys?: string[];
}

/**
 * The 422 `invalid_input` that a part of a request (`json`, `param`, `query`, `header`) failing its schema answers,
 * naming every issue and its path: what every route of the API answers, and the inbox's as well.
 */
export function invalidRequest(target: string, schemaIssues: readonly RequestIssue[]): HttpError {
  // Body paths read as JavaScript (`messages[0].role`); a header or query parameter is named as sent.
  const formatPath = target === 'json' ? formatIssuePath : (path: PropertyKey[]) => path.map(String).join('.');
  const issues = schemaIssues.flatMap((issue) => toIssues(issue, formatPath));
  const summary = issues.map((issue) => (issue.path ? `${issue.path}: ${issue.message}` : issue.message)).join('; ');
  return new HttpError(422, 'invalid_input', `Invalid ${describeTarget(target)}: ${summary}`, { issues });
}

/** Fields a caller might send that the API key decides instead. */
const callerFields: Readonly<Record<string, string>> = {
  tenantId: 'The tenant comes from the API key, not the body',
  approver: 'The approver is the authenticated caller, not the body',
};

function toIssues(issue: RequestIssue, formatPath: (path: PropertyKey[]) => string): ToolInputIssue[] {
  if (issue.code === 'unrecognized_keys' && issue.keys) {
    return issue.keys.map((key) => ({
      path: formatPath([...issue.path, key]),
      message: callerFields[key] ?? 'Unknown field',
      code: issue.code,
    }));
  }
  return [{ path: formatPath(issue.path), message: issue.message, code: issue.code }];
}

function describeTarget(target: string): string {
  return target === 'json' ? 'body' : target === 'param' ? 'path' : target;
}
