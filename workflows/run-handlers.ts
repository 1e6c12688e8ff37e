import { ApplicationFailure, log, setHandler } from '@temporalio/workflow';
import type { ApprovalDecision, ApprovalOutcome, PendingApproval } from '../src/shared/run-types.js';
import type { AcceptedDecision } from './approvals.js';
import { decideSignal, decideUpdate, eventPageQuery, eventsQuery, snapshotQuery } from './messages.js';
import type { RunContext } from './run-context.js';
import { readRecordedTime, usesRecordedTime } from './recorded-clock.js';
import { describeFailure } from './tool-calls.js';

/** Registers the run's decision update and signal and its queries. */
export function registerRunHandlers(context: RunContext): void {
  const { run } = context;
  const check = (decision: ApprovalDecision): AcceptedDecision =>
    run.approvals.check(decision, run.input.tenantId, (toolName, input) => context.validator.check(toolName, input));

  setHandler(decideUpdate, (decision) => decide(context, decision, check(decision)), {
    validator: (decision: ApprovalDecision) => void check(decision),
    description:
      'Approve or reject a tool call awaiting approval: { toolCallId, decision: "approve"|"reject", approver, reason, input? }',
  });
  setHandler(
    decideSignal,
    async (decision) => {
      let accepted: AcceptedDecision;
      try {
        accepted = check(decision);
      } catch (error) {
        log.warn('Ignored an invalid approval signal', {
          toolCallId: decision.toolCallId,
          reason: describeFailure(error),
        });
        return;
      }
      await decide(context, decision, accepted);
    },
    { description: 'The approval decision as a signal (fire and forget): same payload as the "decide" update' },
  );
  setHandler(snapshotQuery, () => run.snapshot(), {
    description: 'The run now: status, step, pending approvals with expiry, usage, output',
  });
  setHandler(eventsQuery, (after) => run.eventsAfter(after ?? 0), {
    description: 'The run event log after a sequence number',
  });
  setHandler(eventPageQuery, (request) => run.eventPage(request ?? {}), {
    description: 'One page of the run event log: { after, limit, maxBytes } -> { events, nextAfter, hasMore }',
  });
}

/**
 * Applies a checked decision at a time recorded in history (see readRecordedTime). The call is claimed while that time
 * is read, so no other decision and no timeout can take it.
 */
async function decide(
  context: RunContext,
  decision: ApprovalDecision,
  accepted: AcceptedDecision,
): Promise<ApprovalOutcome> {
  if (!usesRecordedTime(context)) return applyDecision(context, decision, accepted);
  context.run.approvals.claim(pendingCall(context, decision).toolCallId);
  return applyDecision(context, decision, accepted, await readRecordedTime());
}

function pendingCall({ run }: RunContext, decision: ApprovalDecision): PendingApproval {
  const pending = run.approvals.get(decision.toolCallId);
  if (!pending) {
    throw ApplicationFailure.create({ type: 'approval_not_pending', message: 'Not pending', nonRetryable: true });
  }
  return pending;
}

/** Records an accepted decision and its event; the waiting call acts on it at the run's next step. */
function applyDecision(
  context: RunContext,
  decision: ApprovalDecision,
  accepted: AcceptedDecision,
  at?: string,
): ApprovalOutcome {
  const { run } = context;
  const pending = pendingCall(context, decision);
  run.approvals.accept(pending.toolCallId, accepted);
  const ids = { toolCallId: pending.toolCallId, toolName: pending.toolName };
  const who = {
    ...(accepted.approver !== undefined ? { approver: accepted.approver } : {}),
    ...(accepted.reason !== undefined ? { reason: accepted.reason } : {}),
  };
  if (!accepted.approved) {
    run.emit({ type: 'tool_rejected', ...ids, ...who }, { at });
    return { ...ids, decision: 'reject' };
  }
  run.emit({ type: 'tool_approved', ...ids, ...who, input: accepted.input, edited: accepted.edited }, { at });
  return { ...ids, decision: 'approve', input: accepted.input };
}
