import { setCurrentDetails, upsertSearchAttributes, workflowInfo } from '@temporalio/workflow';
import { toJsonText } from '../src/shared/payload-limits.js';
import type { PendingApproval } from '../src/shared/run-types.js';
import { relaySearchAttributes } from '../src/shared/search-attributes.js';
import type { RunState } from './run-state.js';

/** What each run last published (status and pending count; tenant and user never change within a run). */
const publishedSearchAttributes = new WeakMap<RunState, string>();

/** Publishes the run's tenant, status and pending approvals as search attributes, and its current details. */
export function publishRunState(run: RunState): void {
  publishedSearchAttributes.set(run, `${run.status}/${run.pendingCount}`);
  upsertSearchAttributes([
    { key: relaySearchAttributes.tenant, value: run.input.tenantId },
    ...(run.input.userId ? [{ key: relaySearchAttributes.user, value: run.input.userId }] : []),
    { key: relaySearchAttributes.status, value: run.status },
    { key: relaySearchAttributes.pendingApprovals, value: run.pendingCount },
  ]);
  setCurrentDetails(describeCurrentState(run));
}

/**
 * Publishes a started run's state, unless the start already carries exactly these search attributes: `RelayClient`
 * sets them when it starts a run, and upserting the same values would only add a history event and a visibility
 * update. A run started another way gets them here. `skipWhenCarried` is the run's patch: recorded runs replay as
 * before.
 */
export function publishStartedRunState(run: RunState, skipWhenCarried: boolean): void {
  if (!skipWhenCarried || !startCarriesRunState(run)) return publishRunState(run);
  publishedSearchAttributes.set(run, `${run.status}/${run.pendingCount}`);
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
 * event a step (bench/history-size.ts). `skipUnchanged` is the run's patch: recorded runs replay as before.
 */
export function publishRunStateIfChanged(run: RunState, skipUnchanged: boolean): void {
  const changed = publishedSearchAttributes.get(run) !== `${run.status}/${run.pendingCount}`;
  if (!skipUnchanged || changed) publishRunState(run);
}

/** The most characters of a call's input the current details show. */
const maxInputSummaryLength = 200;

/**
 * The run's current details, as markdown, for the Temporal Web UI's "Current Details": which calls wait for a
 * human, with what input, until when, and how to decide. Empty when nothing waits. Not recorded in history.
 */
export function describeCurrentState(run: RunState): string {
  const waiting = run.approvals.list();
  if (waiting.length === 0 || run.status === 'completed' || run.status === 'failed' || run.status === 'cancelled') {
    return '';
  }
  const lines = [`**Waiting for approval** (${waiting.length} call${waiting.length === 1 ? '' : 's'})`, ''];
  for (const approval of waiting) lines.push(...describeApproval(run.runId, approval), '');
  return lines.join('\n').trimEnd();
}

function describeApproval(runId: string, approval: PendingApproval): string[] {
  const signal = toJsonText({ toolCallId: approval.toolCallId, decision: 'approve', approver: 'your-name' }) ?? '';
  return [
    `- \`${approval.toolName}\` call \`${approval.toolCallId}\`, expires ${approval.expiresAt}`,
    `  - input: \`${summarizeInput(approval.input)}\``,
    `  - CLI: \`relay-e approve ${runId} ${approval.toolCallId}\` (or \`reject\`)`,
    `  - HTTP: \`POST /v1/runs/${runId}/approve\` with \`{"toolCallId":"${approval.toolCallId}"}\``,
    `  - Temporal UI: Send Signal \`decide\` with \`${signal}\``,
  ];
}

function summarizeInput(input: unknown): string {
  const text = (toJsonText(input) ?? '').replaceAll('`', "'");
  return text.length > maxInputSummaryLength ? `${text.slice(0, maxInputSummaryLength)}…` : text;
}
