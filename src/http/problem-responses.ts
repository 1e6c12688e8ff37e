import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { problemSchema } from './api-schemas.js';
import { HttpError } from './http-error.js';
import type { HttpErrorCode } from './http-error.js';

/** The security requirement of every route that needs an API key: a bearer token or an `x-api-key` header. */
export const apiKeySecurity: Array<Record<string, string[]>> = [{ bearerAuth: [] }, { apiKeyHeader: [] }];

/** The problems routes document, each with the status it answers and an example as the API writes it. */
const documentedProblems = {
  invalid_json: { status: 400, detail: 'The body is not valid JSON: Unexpected end of JSON input' },
  unauthorized: { status: 401, detail: 'Send a valid API key as `Authorization: Bearer <key>` or `x-api-key`' },
  run_not_found: { status: 404, detail: "Run 'run_5f0c…' not found" },
  run_already_exists: { status: 409, detail: "A run with id 'invoice-42' already exists" },
  approver_not_allowed: {
    status: 403,
    detail: "Tool 'transfer_funds' is decided by finance-lead or cfo only, not by 'ops'",
  },
  approval_not_pending: {
    status: 409,
    detail: "Run 'run_5f0c…' has ended (completed); no tool call awaits a decision",
  },
  payload_too_large: { status: 413, detail: 'The body exceeds 1048576 bytes' },
  invalid_input: {
    status: 422,
    detail: 'Invalid body: maxSteps: Invalid input: expected number, received string',
    issues: [{ path: 'maxSteps', message: 'Invalid input: expected number, received string', code: 'invalid_type' }],
  },
  unknown_tool: { status: 422, detail: "No worker serves the tool(s) 'refund_order' (served: add, transfer_funds)" },
  model_not_configured: { status: 422, detail: "No worker serves models 'openai:…' (served: scripted:…)" },
  approval_input_invalid: {
    status: 422,
    detail: "Edited input rejected. Validation failed: Too small: expected number to be >0 at 'amount'",
    issues: [{ path: 'amount', message: 'Too small: expected number to be >0', code: 'too_small' }],
  },
  run_unavailable: {
    status: 503,
    detail: "Run 'run_5f0c…' cannot answer right now: no worker answered in time.",
  },
  payload_not_found: { status: 404, detail: "Run 'run_5f0c…' has no stored payload 'sha256:9f86…'" },
  payload_store_unavailable: {
    status: 501,
    detail: "This API has no payload store: give it the workers' (createApi's payloadStore, or the config's)",
  },
  payload_store_unreachable: {
    status: 503,
    detail: 'The payload store cannot be reached right now; try again shortly',
  },
  catalog_unavailable: {
    status: 503,
    detail: "No worker on task queue 'relay-e' has announced its tools: start one (relay-e worker, relay-e dev)",
  },
  temporal_unavailable: {
    status: 503,
    detail: 'Temporal cannot be reached or did not answer in time; try again shortly',
  },
} satisfies Partial<Record<HttpErrorCode, ProblemExample>>;

interface ProblemExample {
  status: ContentfulStatusCode;
  detail: string;
  issues?: Array<{ path: string; message: string; code: string }>;
}

type DocumentedProblem = keyof typeof documentedProblems;

/**
 * The OpenAPI responses of the problems a route may answer with, grouped by status, each code with an example; with
 * `temporal_unavailable` always, since every route they describe asks Temporal.
 */
export function problemResponses(...codes: DocumentedProblem[]) {
  const byStatus = new Map<number, DocumentedProblem[]>();
  for (const code of [...codes, 'temporal_unavailable' as const]) {
    const { status } = documentedProblems[code];
    byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
  }
  return Object.fromEntries(
    [...byStatus].map(([status, sameStatus]) => {
      const examples = Object.fromEntries(sameStatus.map((code) => [code, { value: exampleOf(code) }]));
      const description = sameStatus.map((code) => `\`${code}\``).join(' or ');
      const content = { 'application/problem+json': { schema: problemSchema, examples } };
      // Every 503 the API answers says when to try again.
      return [status, { description, content, ...(status === 503 ? { headers: retryAfterHeader } : {}) }];
    }),
  );
}

const retryAfterHeader = {
  'Retry-After': {
    description: 'Seconds to wait before trying again.',
    schema: { type: 'integer' as const, minimum: 1 },
  },
};

function exampleOf(code: DocumentedProblem) {
  const example: ProblemExample = documentedProblems[code];
  return new HttpError(
    example.status,
    code,
    example.detail,
    example.issues ? { issues: example.issues } : {},
  ).toProblem();
}
