import type { PendingApproval } from '../src/shared/run-types.js';
import type { AcceptedDecision, OneOfSeveral } from './approvals.js';
import type { RunContext } from './run-context.js';
import type { RunState } from './run-state.js';
import { usesRecordedTime } from './recorded-clock.js';
import { publishRunState } from './run-visibility.js';
import { notifyApprovalAdded } from './approval-notices.js';

/** The `tool_approved` or `tool_rejected` event of an accepted decision, at `at` (see RunState.emit); returns its time. */
export function emitDecision(
  run: RunState,
  ids: { toolCallId: string; toolName: string },
  accepted: AcceptedDecision,
  at?: string,
): string {
  const who = {
    ...(accepted.approver !== undefined ? { approver: accepted.approver } : {}),
    ...(accepted.reason !== undefined ? { reason: accepted.reason } : {}),
  };
  if (!accepted.approved) return run.emit({ type: 'tool_rejected', ...ids, ...who }, { at }).at;
  const approvedBy = accepted.approvals ? { approvedBy: accepted.approvals.approvedBy } : {};
  const approval = { type: 'tool_approved' as const, ...ids, ...who, input: accepted.input, edited: accepted.edited };
  return run.emit({ ...approval, ...approvedBy }, { at }).at;
}

/**
 * The time a decision is stamped with when its client's can be trusted: the one fixed before it was taken
 * (`datedAt`), else the one its client said it sent it, under the rule that trusts it (decision-time-from-decider);
 * one later than the current workflow task, which took the decision after it was sent, is that task's time under the
 * rule decision-time-bounded-by-task (asked only then). Workflow time is the task's, read from history.
 */
export function decisionSentAt(
  context: RunContext,
  decision: Pick<AcceptedDecision, 'decidedAt' | 'datedAt'>,
): string | undefined {
  if (decision.datedAt !== undefined) return decision.datedAt;
  const sent = context.patches.decisionTimeFromDecider() ? decision.decidedAt : undefined;
  if (sent === undefined) return undefined;
  const taskTime = Date.now();
  if (Date.parse(sent) <= taskTime || !context.patches.decisionTimeBoundedByTask()) return sent;
  return new Date(taskTime).toISOString();
}

/**
 * Records a decision's event in the handler that accepted it, when the run's rules say the handler does, and returns
 * when; else the waiting call records it once it resumes (tool-calls.ts). Runs from before the reads-from-history
 * rule record it here with the clock; runs under the decision-recorded-when-accepted rule here with the time its
 * client sent (run-patches.ts); the others wait for their time in the waiting call.
 */
export function recordDecisionWhenAccepted(
  context: RunContext,
  ids: { toolCallId: string; toolName: string },
  accepted: AcceptedDecision,
): string | undefined {
  if (!usesRecordedTime(context)) return emitDecision(context.run, ids, accepted);
  const sent = decisionSentAt(context, accepted);
  if (sent === undefined || !context.patches.decisionRecordedWhenAccepted()) return undefined;
  return emitDecision(context.run, ids, accepted, sent);
}

/**
 * Records one approval of a call that needs several (the call keeps waiting) and shows it in the run's snapshot and
 * memo. Its time is the one its client sent, under the rule that trusts it, else the newest event's: a handler does
 * not wait for a clock activity, and the approval changes nothing the run does until the last one comes.
 */
export function recordApprovalAdded(context: RunContext, pending: PendingApproval, accepted: OneOfSeveral): void {
  const { run } = context;
  const { approver, reason, approvals } = accepted;
  const sent = decisionSentAt(context, accepted);
  const because = reason !== undefined ? { reason } : {};
  const event = run.emit(
    {
      type: 'tool_approval_added',
      toolCallId: pending.toolCallId,
      toolName: pending.toolName,
      approver,
      ...because,
      approvals: approvals.count,
      approvalsRequired: approvals.required,
    },
    { at: sent ?? run.latestAt },
  );
  run.approvals.addApproval(pending.toolCallId, { approver, at: event.at, ...because });
  publishRunState(context);
  notifyApprovalAdded(context, pending, {
    approver,
    ...because,
    approvals: approvals.count,
    approvalsRequired: approvals.required,
  });
}
