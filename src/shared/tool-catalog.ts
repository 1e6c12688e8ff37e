import type { PatternLengthLimits } from './bounded-patterns.js';
import type { ModelToolSpec } from './transcript.js';

/** A JSON Schema document, as produced by `z.toJSONSchema` or served by an MCP server. */
export type JsonSchema = Record<string, unknown>;

/** How often a tool's activity is attempted, and how long each attempt may take. */
export interface ToolRetryPolicy {
  /**
   * Attempts in all, the first included. A tool with side effects that cannot be repeated safely keeps 1.
   * @default 1 for tools that require approval, 3 for the rest
   */
  maximumAttempts?: number;
  /** @default '1s' */
  initialInterval?: string;
  /** @default 2 */
  backoffCoefficient?: number;
  /** @default '30s' */
  maximumInterval?: string;
  /**
   * Whether a call that timed out is attempted again; `false` keeps the attempts for other failures only. A tool source
   * sets it on the attempts it fills in by default, since its operator did not ask for timed-out calls to be repeated.
   * @default true: a tool that sets `retry` opts into retrying timeouts
   */
  retryTimeouts?: boolean;
}

/** Where a tool comes from, when it is not a `defineTool` tool of the worker's own code. */
export interface ToolSourceInfo {
  kind: 'mcp';
  /** The MCP server's name in the worker's configuration. */
  server: string;
  /** The tool's own name on that server, before it was mapped to the providers' name rule. */
  tool: string;
}

/** Hints a tool's author gives about its behaviour (MCP tool annotations); untrusted unless the server is. */
export interface ToolAnnotations {
  title?: string;
  readOnlyHint?: boolean;
  destructiveHint?: boolean;
  idempotentHint?: boolean;
  openWorldHint?: boolean;
}

/**
 * What a run knows about one tool: recorded in history at the start of the run, so the run keeps the
 * tools it started with across redeploys and user code never enters the workflow sandbox.
 */
export interface ToolCatalogEntry {
  name: string;
  description: string;
  inputSchema: JsonSchema;
  /** True for a tool whose calls wait for a human, or may ({@link approvalByRule}). */
  requiresApproval: boolean;
  /**
   * The tool's `requiresApproval` is a rule: each call is asked, on the worker, whether it needs a human. Absent
   * from catalogs recorded before rules, whose tools ask for every call.
   */
  approvalByRule?: true;
  /** How long a call waits for a decision, when the tool sets its own limit (see `approvalWaitMs` in the workflow). */
  approvalTimeoutMs?: number;
  /** Who may decide its calls, when the tool names them: a decision by anyone else is refused. */
  approvers?: string[];
  /** How many different approvers must approve a call, when more than one (`defineTool`'s `approvalsRequired`). */
  approvalsRequired?: number;
  /** Per-attempt time limit in milliseconds. */
  timeoutMs?: number;
  retry?: ToolRetryPolicy;
  /** Absent for the worker's own `defineTool` tools. */
  source?: ToolSourceInfo;
  annotations?: ToolAnnotations;
  /**
   * Set by a worker with an approval webhook on tools that require approval: the run posts a notice to the tenant's
   * approvers for each call that waits (src/notify/approval-webhook.ts). Runs recorded without it post none.
   */
  notifiesApprovers?: true;
  /**
   * Set beside {@link notifiesApprovers} by a worker told to remind approvers, or by a tool with its own lead time
   * (`remindApproversBeforeExpiryMs`): a call still waiting this many milliseconds before it expires gets an
   * `approval.expiring` notice. Runs recorded without it send none.
   */
  remindApproversBeforeMs?: number;
  /**
   * Set on an MCP server's tools: a call reaches the tool as the model (or an approver's edit) gave it once its check
   * passed, without the defaults the check fills in, since a JSON Schema `default` is the server's to apply (a
   * Python server's `x: int = None` is `default: null`, which it then refuses). Runs recorded without it send the
   * checked input, defaults filled.
   */
  inputAsGiven?: true;
  /**
   * Set by the worker on a tool whose input schema has patterns that backtrack polynomially (src/tool/pattern-risks.ts):
   * the longest string a run tries each on, by pattern source; a longer one is refused as too long, so no input keeps
   * the run's check from finishing. Runs recorded without it try every pattern on any string.
   */
  patternLengthLimits?: PatternLengthLimits;
  /**
   * Set by the worker on a JSON Schema tool (an MCP server's) whose input schema has patterns that backtrack
   * exponentially or could not be judged: a run does not try them, and the worker tries each with a time limit where
   * it checks a call with the tool's own schema, before a human is asked and before the tool runs. Runs recorded
   * without it try every pattern.
   */
  patternsTriedByWorker?: string[];
}

/**
 * The catalog a run records, with the time the worker read it (the run stamps `run_started` with it), or why this
 * worker cannot serve the run at all: a tool or a model it lacks. A refusal travels as data so the run ends with one
 * clear event instead of an activity failure logged with its stack.
 */
export type CatalogSnapshot =
  | { entries: ToolCatalogEntry[]; at: string; refused?: undefined }
  | { refused: RunRefusal; at: string; entries?: undefined };

/** Why a worker cannot serve a run, with the `RelayError` code the client uses when it refuses one at the door. */
export interface RunRefusal {
  code: 'unknown_tool' | 'model_not_configured';
  message: string;
  details?: Record<string, unknown>;
}

/**
 * What a run asks the worker's catalog for: the tools it names, or all of them, for its tenant (whose approval webhook
 * may set its own reminder; runs that asked before say none).
 */
export interface CatalogRequest {
  tools?: string[];
  tenantId?: string;
}

/**
 * Whether a call of the tool that timed out is retried: only a tool with a retry policy of its own opted in, unless
 * that policy says otherwise (catalogs recorded before `retryTimeouts` never do).
 */
export function retriesTimeouts(entry: Pick<ToolCatalogEntry, 'retry'>): boolean {
  return entry.retry !== undefined && entry.retry.retryTimeouts !== false;
}

/**
 * How many times a run attempts a call of the tool: its retry policy's, else one for a tool that requires approval (a
 * human approved one execution) and three for the rest.
 */
export function maximumAttemptsOf(entry: Pick<ToolCatalogEntry, 'retry' | 'requiresApproval'>): number {
  return entry.retry?.maximumAttempts ?? (entry.requiresApproval ? 1 : 3);
}

/** What the model is told of each tool: the catalog less what only the run uses (approval, limits, source). */
export function modelToolSpecs(catalog: readonly ToolCatalogEntry[]): ModelToolSpec[] {
  return catalog.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}

/** What an approver is shown about a tool besides the call: where it comes from, and whether it may destroy data. */
export interface ApprovalHints {
  source?: ToolSourceInfo;
  /** The tool's author says it may destroy or overwrite data (MCP `destructiveHint`). */
  destructiveHint?: boolean;
}

/** The approval hints of a catalog entry; empty for a worker's own tools, so their approvals look as before. */
export function approvalHints(entry: ToolCatalogEntry): ApprovalHints {
  return {
    ...(entry.source ? { source: entry.source } : {}),
    ...(entry.annotations?.destructiveHint !== undefined ? { destructiveHint: entry.annotations.destructiveHint } : {}),
  };
}

/** The Temporal UI's summary of a tool activity: the tool, the call, and the MCP server it runs on. */
export function toolActivitySummary(entry: ToolCatalogEntry, toolCallId: string): string {
  const server = entry.source ? ` on MCP server ${entry.source.server}` : '';
  return `tool ${entry.name} (${toolCallId})${server}`;
}
