import type { ToolAnnotations, ToolRetryPolicy } from '../shared/tool-catalog.js';
import { approvalOnlyOptions } from '../tool/define-tool.js';
import type { ApprovalRule } from '../tool/define-tool.js';

/** How one MCP tool (or every tool of a server) is approved, timed and retried. */
export interface McpToolPolicy {
  /**
   * `true`: a run pauses for a human before the call; a function decides call by call from the arguments
   * (`ApprovalRule`, as `defineTool` takes).
   * @default true, unless the server annotates the tool `readOnlyHint: true`
   */
  requiresApproval?: boolean | ApprovalRule<unknown>;
  /**
   * How long a call waits for a decision, in milliseconds (`defineTool`'s `approvalTimeoutMs`).
   * @default the run's `approvalTimeout`
   */
  approvalTimeoutMs?: number;
  /**
   * Who may decide a call (`defineTool`'s `approvers`); applies to the tools that ask for approval.
   * @default any approver of the run's tenant
   */
  approvers?: string[];
  /**
   * How many different approvers must approve a call (`defineTool`'s `approvalsRequired`); applies to the tools that
   * ask for approval.
   * @default 1
   */
  approvalsRequired?: number;
  /**
   * How long before a call's wait expires its approvers are reminded, in milliseconds (`defineTool`'s
   * `remindApproversBeforeExpiryMs`); applies to the tools that ask for approval.
   * @default the worker's `remindApproversBeforeExpiry`
   */
  remindApproversBeforeExpiryMs?: number;
  /**
   * Per-attempt time limit in milliseconds; the MCP request is cancelled when it elapses.
   * @default the executor's `defaultTimeoutMs` (60 000)
   */
  timeoutMs?: number;
  /**
   * How often the run's activity attempts the call. A timeout is retried only when this is configured, as for a
   * `defineTool` tool.
   * @default 3 attempts for tools annotated `readOnlyHint` or `idempotentHint`, 1 for the rest, timeouts not retried
   */
  retry?: ToolRetryPolicy;
  /**
   * A result whose JSON is larger is cut to fit.
   * @default the executor's `maxResultBytes` (32 768)
   */
  maxResultBytes?: number;
}

/** What a policy decides for one tool once every rule and default is applied. */
export interface ResolvedToolPolicy extends McpToolPolicy {
  requiresApproval: boolean | ApprovalRule<unknown>;
  retry: ToolRetryPolicy;
}

/**
 * Applies a server's policy to one of its tools: the rule whose key is the tool's own name wins, then the glob
 * patterns (`*`, `?`) that match, in the order written, then the server-wide policy, then the secure defaults from
 * the tool's annotations. Each field falls through on its own, so a rule may set only a timeout.
 */
export function resolveToolPolicy(
  toolName: string,
  annotations: ToolAnnotations | undefined,
  server: McpToolPolicy,
  rules: Readonly<Record<string, McpToolPolicy>> = {},
): ResolvedToolPolicy {
  const exact = Object.hasOwn(rules, toolName) ? rules[toolName] : undefined;
  const patterns = Object.entries(rules)
    .filter(([key]) => key !== toolName && matchesGlob(key, toolName))
    .map(([, rule]) => rule);
  const layers = [exact, ...patterns, server];
  const pick = <K extends keyof McpToolPolicy>(key: K): McpToolPolicy[K] =>
    layers.find((layer) => layer?.[key] !== undefined)?.[key];
  const resolved: ResolvedToolPolicy = {
    requiresApproval: pick('requiresApproval') ?? annotations?.readOnlyHint !== true,
    retry: pick('retry') ?? defaultRetry(annotations),
  };
  const approvalTimeoutMs = pick('approvalTimeoutMs');
  const timeoutMs = pick('timeoutMs');
  const maxResultBytes = pick('maxResultBytes');
  if (approvalTimeoutMs !== undefined) resolved.approvalTimeoutMs = approvalTimeoutMs;
  // What a server sets about deciding calls reaches only the tools that wait for a human: a read-only tool has
  // nobody to ask.
  if (resolved.requiresApproval !== false) {
    for (const option of approvalOnlyOptions) {
      const value = pick(option);
      if (value !== undefined) Object.assign(resolved, { [option]: value });
    }
  }
  if (timeoutMs !== undefined) resolved.timeoutMs = timeoutMs;
  if (maxResultBytes !== undefined) resolved.maxResultBytes = maxResultBytes;
  return resolved;
}

/**
 * The attempts of a tool whose operator configured none: 3 when the server says the tool is safe to repeat, else 1.
 * They are always written out, as a run's own default follows approval instead. Nobody asked for a timed-out call to
 * be repeated, so it is not: the model is told it may still have had an effect.
 */
function defaultRetry(annotations: ToolAnnotations | undefined): ToolRetryPolicy {
  const safeToRepeat = annotations?.readOnlyHint === true || annotations?.idempotentHint === true;
  return { maximumAttempts: safeToRepeat ? 3 : 1, retryTimeouts: false };
}

/** `*` matches any run of characters, `?` one character; everything else matches itself. */
export function matchesGlob(pattern: string, name: string): boolean {
  const source = [...pattern]
    .map((character) => {
      if (character === '*') return '.*';
      if (character === '?') return '.';
      return character.replace(/[.+^${}()|[\]\\]/g, '\\$&');
    })
    .join('');
  return new RegExp(`^${source}$`, 's').test(name);
}
