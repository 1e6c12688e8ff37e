import { ApplicationFailure, CancellationScope, log, setHandler } from '@temporalio/workflow';
import { isRecord } from '../src/shared/is-record.js';
import { isTerminalStatus } from '../src/shared/run-types.js';
import type { ApprovalDecision, ApprovalOutcome } from '../src/shared/run-types.js';
import { decideSignal, decideUpdate, eventPageQuery, eventsQuery, snapshotQuery } from './messages.js';
import type { RunContext } from './run-context.js';
import { decisionSentAt, recordApprovalAdded, recordDecisionWhenAccepted } from './decision-events.js';
import { readRecordedTime } from './recorded-clock.js';
import { editRefusal, isOneOfSeveral, nonTextField, refuseNonTextField } from './approvals.js';
import type { AcceptedDecision } from './approvals.js';
import type { ToolCallCheck } from './tool-call-validator.js';
import { describeFailure } from './describe-failure.js';
import { recordIgnoredDecision, signalledCallId } from './ignored-decisions.js';
import { checkEditedInput } from './tool-calls.js';

/** Registers the run's decision update and signal and its queries. */
export function registerRunHandlers(context: RunContext): void {
  const { run } = context;
  const check = (decision: ApprovalDecision): AcceptedDecision =>
    run.approvals.check(decision, run.input.tenantId, (toolName, input) => context.validator.check(toolName, input));

  setHandler(decideUpdate, (decision) => decideByUpdate(context, decision, check), {
    validator: (decision: ApprovalDecision) =>
      context.patches.whileValidating(() => {
        refuseNonTextField(decision);
        check(decision);
        refuseUndeclaredFields(context, decision);
        refuseOnceExpired(context, decision, sentByTaskClock(decision));
        refuseOnceCancelled(decision.toolCallId);
      }),
    description:
      'Approve or reject a tool call awaiting approval: { toolCallId, decision: "approve"|"reject", approver, reason, input? }',
  });
  setHandler(decideSignal, (decision) => decideBySignal(context, decision, check), {
    description: 'The approval decision as a signal (fire and forget): same payload as the "decide" update',
  });
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
 * A decision by signal: refused as the update's validator refuses it where the run's rules say (each asked only at
 * such a decision, so runs that applied one before replay it), and then ignored, since a signal has no answer. Under
 * the decision-time-fixed-before-taken rule nothing here reads the workflow clock, which a query's replay can show
 * earlier than the task that takes the signal: a decision is dated when its client said it sent it, and one that does
 * not say is taken once a clock activity has dated it.
 */
function decideBySignal(
  context: RunContext,
  decision: ApprovalDecision,
  check: (decision: ApprovalDecision) => AcceptedDecision,
): void {
  if (!context.patches.decisionTimeFixedBeforeTaken()) {
    takeSignal(context, decision, check);
    return;
  }
  const sentAt: unknown = isRecord(decision) ? decision.decidedAt : undefined;
  if (sentAt !== undefined) {
    // check() refuses a decidedAt that is not a time before anything reads it.
    takeSignal(context, decision, check, sentAt as string);
    return;
  }
  try {
    check(decision);
    refuseSignalledFields(context, decision);
  } catch (error) {
    ignoreSignalledDecision(context, decision, error);
    return;
  }
  const dating: Promise<void> = readRecordedTime()
    .then((clock) => {
      if (isTerminalStatus(context.run.status)) {
        log.warn('Ignored an approval signal dated after its run closed', { toolCallId: decision.toolCallId });
        return;
      }
      takeSignal(context, decision, check, clock);
    })
    .catch((error: unknown) => ignoreSignalledDecision(context, decision, error))
    .finally(() => context.datingDecisions.delete(dating));
  context.datingDecisions.add(dating);
}

/**
 * What a run waits for before it records its end or continues as new: the signalled decisions a clock is dating, each
 * then taken or recorded as ignored. Undefined when there are none (always, for runs under the rules from before), so
 * such a run does not await where it did not before (an `await` of nothing still yields, and could reorder commands).
 */
export function decisionsBeingDated(context: RunContext): Promise<unknown> | undefined {
  return context.datingDecisions.size > 0 ? Promise.all(context.datingDecisions) : undefined;
}

/**
 * Takes a signalled decision: checked, its call's expiry judged by `datedAt` (the time fixed before it was taken, rule
 * decision-time-fixed-before-taken, which goes with it), or without one by the task's clock as the runs' rules from
 * before judge it; then applied, or ignored. An approval with an edit is taken once the tool's own schema has checked
 * the edit (nobody waits for a signal's answer), checked again then.
 */
function takeSignal(
  context: RunContext,
  decision: ApprovalDecision,
  check: (decision: ApprovalDecision) => AcceptedDecision,
  datedAt?: string,
): void {
  const dated = (accepted: AcceptedDecision) => (datedAt === undefined ? accepted : { ...accepted, datedAt });
  let accepted: AcceptedDecision;
  try {
    accepted = check(decision);
    refuseSignalledOnceExpired(
      context,
      decision,
      datedAt === undefined ? sentByTaskClock(decision) : Date.parse(datedAt),
    );
    refuseSignalledFields(context, decision);
  } catch (error) {
    ignoreSignalledDecision(context, decision, error);
    return;
  }
  if (!editCheckedByTool(context, accepted)) {
    applyDecision(context, decision, dated(accepted));
    return;
  }
  void checkEdit(context, decision.toolCallId, accepted)
    .then(() => applyDecision(context, decision, dated(check(decision))))
    .catch((error: unknown) => ignoreSignalledDecision(context, decision, error));
}

/** The checks a signalled decision gets that need no time, each under the rule that brought it (asked only then). */
function refuseSignalledFields(context: RunContext, decision: ApprovalDecision): void {
  if (nonTextField(decision) !== undefined && context.patches.decisionFieldsAreText()) {
    refuseNonTextField(decision);
  }
  if (undeclaredEdit(context, decision) && context.patches.editedFieldsDeclared()) {
    refuseUndeclaredFields(context, decision);
  }
}

/** Refuses a signalled decision sent at `sent` once its call had expired, under the rule that refuses it. */
function refuseSignalledOnceExpired(context: RunContext, decision: ApprovalDecision, sent: number): void {
  if (expiresBefore(context, decision, sent) !== undefined && context.patches.expiredDecisionRefused()) {
    refuseOnceExpired(context, decision, sent);
  }
}

/** A decision signalled that the run does not take: logged, and recorded where the run's rules say (ignored-decisions.ts). */
function ignoreSignalledDecision(context: RunContext, decision: ApprovalDecision, error: unknown): void {
  log.warn('Ignored an invalid approval signal', {
    toolCallId: signalledCallId(decision),
    reason: describeFailure(error),
  });
  recordIgnoredDecision(context, decision, error);
}

/**
 * A decision by update; an approval with an edit is taken once the tool's own schema has checked the edit, and checked
 * again then, since another decision, the wait's timeout or the run's end may have come meanwhile.
 */
function decideByUpdate(
  context: RunContext,
  decision: ApprovalDecision,
  check: (decision: ApprovalDecision) => AcceptedDecision,
): ApprovalOutcome | Promise<ApprovalOutcome> {
  const accepted = check(decision);
  if (!editCheckedByTool(context, accepted)) return applyDecision(context, decision, accepted);
  // The edit's check ends in a later task, which a query's replay can run under this task's clock: dated here.
  const datedAt = context.patches.decisionTimeFixedBeforeTaken() ? decisionSentAt(context, accepted) : undefined;
  const dated = datedAt !== undefined ? { datedAt } : {};
  return checkEdit(context, decision.toolCallId, accepted).then(() =>
    applyDecision(context, decision, { ...check(decision), ...dated }),
  );
}

/**
 * Whether an accepted decision waits for the tool's own schema to check its edit, under the rule
 * `approved-edit-checked-by-tool` (asked at such an approval only): the JSON Schema the run checks with knows none of
 * the tool's refinements, so an edit they refuse was approved, then failed as `validation` when the tool ran.
 */
function editCheckedByTool(context: RunContext, accepted: AcceptedDecision): boolean {
  return accepted.approved && accepted.edited && context.patches.approvedEditCheckedByTool();
}

/** Refuses an edit the tool's own schema refuses (approval_input_invalid, with its issues), as the JSON Schema's are. */
async function checkEdit(context: RunContext, toolCallId: string, accepted: AcceptedDecision): Promise<void> {
  const pending = context.run.approvals.get(toolCallId);
  if (!pending) throw notPending();
  const verdict = await checkEditedInput(pending.toolName, accepted.input);
  if (!verdict.valid) throw editRefusal(verdict);
}

/**
 * Refuses a decision sent at `sent` once its call's wait had expired. A fired timer and a decision can reach the run
 * in one workflow task when no worker took the timer's task before the decision was sent; the decision then comes
 * first, and would win.
 */
function refuseOnceExpired(context: RunContext, decision: ApprovalDecision, sent: number): void {
  const expiresAt = expiresBefore(context, decision, sent);
  if (expiresAt === undefined) return;
  throw ApplicationFailure.create({
    type: 'approval_not_pending',
    message: `Tool call '${decision.toolCallId}' expired at ${expiresAt}: a decision sent after it is not taken`,
    nonRetryable: true,
  });
}

/**
 * Refuses an edited input with a field the tool's schema does not name (ToolCallValidator.checkEdit). Asked by the
 * update's validator and, under its rule, the signal handler, not by what applies a decision: a run that accepted
 * such an edit before the rule replays it.
 */
function refuseUndeclaredFields(context: RunContext, decision: ApprovalDecision): void {
  const refused = undeclaredEdit(context, decision);
  if (refused) throw editRefusal(refused);
}

/** The failed check of an edited input whose fields the tool's schema does not all name, else undefined. */
function undeclaredEdit(
  context: RunContext,
  decision: ApprovalDecision,
): Extract<ToolCallCheck, { valid: false }> | undefined {
  const pending = decision.input === undefined ? undefined : context.run.approvals.get(decision.toolCallId);
  if (!pending) return undefined;
  const check = context.validator.checkEdit(pending.toolName, decision.input);
  return check.valid ? undefined : check;
}

/** The call's `expiresAt` when `decision`, sent at `sent`, came at or after it (see {@link refuseOnceExpired}). */
function expiresBefore(context: RunContext, decision: ApprovalDecision, sent: number): string | undefined {
  const expiresAt = context.run.approvals.get(decision.toolCallId)?.expiresAt;
  return expiresAt !== undefined && sent >= Date.parse(expiresAt) ? expiresAt : undefined;
}

/**
 * When a decision was sent, as the task that takes it can tell: when its client said (`decidedAt`), no later than
 * this task, else this task's time. Only where a task's own clock is sure to be the one replay reads: an update's
 * validator, or a signal under the runs' rules from before decision-time-fixed-before-taken.
 */
function sentByTaskClock(decision: ApprovalDecision): number {
  const taskTime = Date.now();
  return decision.decidedAt === undefined ? taskTime : Math.min(Date.parse(decision.decidedAt), taskTime);
}

/**
 * Refuses a decision once the run's cancellation has reached it: no call of a cancelled run runs. Only the update's
 * validator asks, since validators do not run on replay; a decision delivered in the task that brings the
 * cancellation comes before it and is still accepted (tool-calls.ts ends such a call as awaiting approval).
 */
function refuseOnceCancelled(toolCallId: string): void {
  if (!CancellationScope.current().consideredCancelled) return;
  throw ApplicationFailure.create({
    type: 'approval_not_pending',
    message: `Tool call '${toolCallId}' is not awaiting approval: the run is being cancelled`,
    nonRetryable: true,
  });
}

/**
 * Records an accepted decision; the waiting call acts on it at the run's next step. Handlers never wait: where the
 * decision's time is not known here, the waiting call records its event once it has read one (recordDecisionWhenAccepted).
 */
function applyDecision(context: RunContext, decision: ApprovalDecision, accepted: AcceptedDecision): ApprovalOutcome {
  const { run } = context;
  const pending = run.approvals.get(decision.toolCallId);
  if (!pending) throw notPending();
  const ids = { toolCallId: pending.toolCallId, toolName: pending.toolName };
  if (!accepted.approved) {
    acceptDecision(context, ids, accepted);
    return { ...ids, decision: 'reject' };
  }
  if (isOneOfSeveral(accepted)) recordApprovalAdded(context, pending, accepted);
  else acceptDecision(context, ids, accepted);
  const counts = accepted.approvals
    ? { approvals: accepted.approvals.count, approvalsRequired: accepted.approvals.required }
    : {};
  return { ...ids, decision: 'approve', input: accepted.input, ...counts };
}

/** Takes the decision that ends a call's wait: recorded now when its handler records it, else by the waiting call. */
function acceptDecision(
  context: RunContext,
  ids: { toolCallId: string; toolName: string },
  accepted: AcceptedDecision,
): void {
  const recordedAt = recordDecisionWhenAccepted(context, ids, accepted);
  context.run.approvals.accept(ids.toolCallId, recordedAt === undefined ? accepted : { ...accepted, recordedAt });
}

/** A decision for a call the approval book has just found waiting and no longer holds: never expected, never taken. */
function notPending(): ApplicationFailure {
  return ApplicationFailure.create({ type: 'approval_not_pending', message: 'Not pending', nonRetryable: true });
}
