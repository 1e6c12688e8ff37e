import { setCurrentDetails, upsertMemo, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { toJsonText } from '../src/shared/payload-limits.js';
import { pendingApprovalsMemoKey, pendingApprovalsMemoValue } from '../src/shared/pending-approvals-memo.js';
import { isTerminalStatus } from '../src/shared/run-types.js';
import type { PendingApproval } from '../src/shared/run-types.js';
import { relaySearchAttributes } from '../src/shared/search-attributes.js';
import type { RunContext } from './run-context.js';
import type { RunState } from './run-state.js';

/** What each run last published (status and pending count; tenant and user never change within a run). */
const publishedSearchAttributes = new WeakMap<RunState, string>();

/**
 * The ids of the waiting calls each run last kept in its memo, each with its count of approvals (none at the start of
 * an execution).
 */
const publishedPendingIds = new WeakMap<RunState, string>();

/**
 * Publishes the run's tenant, status and pending approvals as search attributes, its current details, and (rule
 * `pending-approvals-in-memo`) its waiting calls in its memo when they changed.
 */
export function publishRunState(context: RunContext): void {
  const { run } = context;
  publishedSearchAttributes.set(run, `${run.status}/${run.pendingCount}`);
  upsertSearchAttributes([
    { key: relaySearchAttributes.tenant, value: run.input.tenantId },
    ...(run.input.userId ? [{ key: relaySearchAttributes.user, value: run.input.userId }] : []),
    { key: relaySearchAttributes.status, value: run.status },
    { key: relaySearchAttributes.pendingApprovals, value: run.pendingCount },
  ]);
  publishPendingApprovals(context);
  setCurrentDetails(describeCurrentState(run));
}

/**
 * Keeps the run's waiting calls in its memo, in the same workflow task as the search attributes that list the run
 * as waiting, so a tenant's approvals list reads them from visibility without a query (which needs a worker, and
 * costs one per waiting run on every poll of every inbox). Written only when the set of waiting calls changed, or
 * the approvals of one that needs several.
 */
function publishPendingApprovals({ run, patches }: RunContext): void {
  if (!patches.pendingApprovalsInMemo()) return;
  const approvals = run.approvals.list();
  const ids = approvals.map((approval) => `${approval.toolCallId} ${approval.approvals?.length ?? 0}`).join('\n');
  if ((publishedPendingIds.get(run) ?? '') === ids) return;
  publishedPendingIds.set(run, ids);
  const { model, userId, sessionId } = run.input;
  const memo = { model, ...(userId ? { userId } : {}), ...(sessionId ? { sessionId } : {}), approvals };
  upsertMemo({ [pendingApprovalsMemoKey]: pendingApprovalsMemoValue(memo) });
}

/**
 * Publishes a started run's state, unless the start already carries exactly these search attributes: `RelayClient`
 * sets them when it starts a run, and upserting the same values would only add a history event and a visibility
 * update. A run started another way gets them here, and so do runs recorded before that rule.
 */
export function publishStartedRunState(context: RunContext): void {
  const { run } = context;
  if (!context.patches.startSearchAttributesFromStarter() || !startCarriesRunState(run)) {
    return publishRunState(context);
  }
  publishedSearchAttributes.set(run, `${run.status}/${run.pendingCount}`);
  publishPendingApprovals(context);
  setCurrentDetails(describeCurrentState(run));
}

function startCarriesRunState(run: RunState): boolean {
  const started = workflowInfo().typedSearchAttributes;
  return (
    started.get(relaySearchAttributes.tenant) === run.input.tenantId &&
    started.get(relaySearchAttributes.user) === run.input.userId &&
    started.get(relaySearchAttributes.status) === run.status &&
    started.get(relaySearchAttributes.pendingApprovals) === run.pendingCount
  );
}

/**
 * After a plain step status and pending count are what was last published; an upsert would only add a history
 * event a step (bench/history-size.ts). Runs recorded before that rule upsert after every step.
 */
export function publishRunStateIfChanged(context: RunContext): void {
  const { run } = context;
  const changed = publishedSearchAttributes.get(run) !== `${run.status}/${run.pendingCount}`;
  if (!context.patches.skipUnchangedSearchAttributes() || changed) publishRunState(context);
}

/** The most characters of a call's input the current details show. */
const maxInputSummaryLength = 200;

/**
 * The run's current details, as markdown, for the Temporal Web UI's "Current Details": which calls wait for a
 * human, with what input, until when, and how to decide. Empty when nothing waits. Not recorded in history.
 */
function describeCurrentState(run: RunState): string {
  const waiting = run.approvals.list();
  if (waiting.length === 0 || isTerminalStatus(run.status)) return '';
  const lines = [`**Waiting for approval** (${waiting.length} call${waiting.length === 1 ? '' : 's'})`, ''];
  for (const approval of waiting) lines.push(...describeApproval(run.runId, approval), '');
  return lines.join('\n').trimEnd();
}

function describeApproval(runId: string, approval: PendingApproval): string[] {
  const signal = toJsonText({ toolCallId: approval.toolCallId, decision: 'approve', approver: 'your-name' }) ?? '';
  return [
    `- \`${approval.toolName}\` call \`${approval.toolCallId}\`, expires ${approval.expiresAt}`,
    `  - input: \`${summarizeInput(approval.input)}\``,
    ...(approval.approvalsRequired !== undefined
      ? [
          `  - approvals: ${approval.approvals?.length ?? 0} of ${approval.approvalsRequired} (each by another approver)`,
        ]
      : []),
    `  - CLI: \`relay-e approve ${runId} ${approval.toolCallId}\` (or \`reject\`)`,
    `  - HTTP: \`POST /v1/runs/${runId}/approve\` with \`{"toolCallId":"${approval.toolCallId}"}\``,
    `  - Temporal UI: Send Signal \`decide\` with \`${signal}\``,
  ];
}

function summarizeInput(input: unknown): string {
  const text = (toJsonText(input) ?? '').replaceAll('`', "'");
  return text.length > maxInputSummaryLength ? `${text.slice(0, maxInputSummaryLength)}…` : text;
}
