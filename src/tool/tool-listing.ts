import type { PatternLengthLimits } from '../shared/bounded-patterns.js';
import type {
  JsonSchema,
  ToolAnnotations,
  ToolCatalogEntry,
  ToolRetryPolicy,
  ToolSourceInfo,
} from '../shared/tool-catalog.js';

/** Where a listed tool comes from: the worker's own `defineTool` code, or an MCP server. */
export type ToolListingSource = { kind: 'worker' } | ToolSourceInfo;

/**
 * One tool as `relay-e tools` and `GET /v1/tools` list it: a catalog entry whose source is always named, so a
 * reader never has to know that a missing `source` means the worker's own code.
 */
export interface ToolListing {
  name: string;
  description: string;
  source: ToolListingSource;
  requiresApproval: boolean;
  /** The tool's approval is a rule, asked call by call (see `ApprovalRule`). */
  approvalByRule?: true;
  /** How long a call waits for a decision, when the tool sets its own limit. */
  approvalTimeoutMs?: number;
  /** Who may decide its calls, when the tool names them. */
  approvers?: string[];
  /** How many different approvers must approve a call, when more than one. */
  approvalsRequired?: number;
  /** The tool's own reminder lead time before a call expires, in milliseconds, when it sets one. */
  remindApproversBeforeMs?: number;
  /** Per-attempt time limit in milliseconds, when the tool or its server sets one. */
  timeoutMs?: number;
  retry?: ToolRetryPolicy;
  /** The MCP server's hints (`readOnlyHint`, `destructiveHint`, …). */
  annotations?: ToolAnnotations;
  inputSchema: JsonSchema;
  /** The longest string a run tries each of its patterns that backtrack on, by pattern (see pattern-risks.ts). */
  patternLengthLimits?: PatternLengthLimits;
  /** Its patterns a run does not try, which the worker tries with a time limit (see pattern-risks.ts). */
  patternsTriedByWorker?: string[];
}

/** The listing of one catalog entry. */
export function toToolListing(entry: ToolCatalogEntry): ToolListing {
  const { source, ...rest } = entry;
  return { ...rest, source: source ?? { kind: 'worker' } };
}

/** A listing as a block of text for people: name and source, first line of the description, policy, schema. */
export function formatToolListing(listing: ToolListing): string {
  const policy = [
    listing.approvalByRule ? 'approval by rule' : listing.requiresApproval ? 'needs approval' : 'no approval',
    listing.approvalTimeoutMs !== undefined ? `decision within ${listing.approvalTimeoutMs} ms` : undefined,
    listing.approvers !== undefined ? `decided by ${listing.approvers.join(' or ')}` : undefined,
    listing.approvalsRequired !== undefined ? `${listing.approvalsRequired} approvals` : undefined,
    listing.remindApproversBeforeMs !== undefined
      ? `reminder ${listing.remindApproversBeforeMs} ms before expiry`
      : undefined,
    listing.timeoutMs !== undefined ? `timeout ${listing.timeoutMs} ms` : undefined,
    listing.retry?.maximumAttempts !== undefined ? `${listing.retry.maximumAttempts} attempt(s)` : undefined,
  ].filter(Boolean);
  const hints = Object.entries(listing.annotations ?? {})
    .filter(([key, value]) => key !== 'title' && value === true)
    .map(([key]) => key.replace(/Hint$/, ''));
  return [
    `${listing.name}  (${describeToolSource(listing.source)})`,
    `  ${listing.description.split('\n')[0]}`,
    `  policy: ${policy.join(', ')}${hints.length > 0 ? `; hints: ${hints.join(', ')}` : ''}`,
    `  input: ${JSON.stringify(listing.inputSchema)}`,
    ...Object.entries(listing.patternLengthLimits ?? {}).map(
      ([source, limit]) => `  pattern /${source}/ tried on strings of at most ${limit} characters`,
    ),
    ...(listing.patternsTriedByWorker ?? []).map(
      (source) => `  pattern /${source}/ tried by the worker, with a time limit`,
    ),
  ].join('\n');
}

function describeToolSource(source: ToolListingSource): string {
  return source.kind === 'mcp' ? `MCP server ${source.server}, tool ${source.tool}` : 'worker';
}
