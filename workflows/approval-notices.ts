import {
  CancellationScope,
  ParentClosePolicy,
  condition,
  isCancellation,
  startChild,
  workflowInfo,
} from '@temporalio/workflow';
import { approvalNoticeRetry, maxNoticeInputBytes } from '../src/shared/approval-notice.js';
import type { ApprovalAddedNotice, ApprovalDecidedNotice, ApprovalNotice } from '../src/shared/approval-notice.js';
import { boundEchoedInput } from '../src/shared/payload-limits.js';
import type { PendingApproval } from '../src/shared/run-types.js';
import type { AcceptedDecision } from './approvals.js';
import type { RunContext } from './run-context.js';
import { describeFailure } from './describe-failure.js';
import { readRecordedTime } from './recorded-clock.js';
import { relaySearchAttributes } from '../src/shared/search-attributes.js';
import { deliverApprovalNotices } from './deliver-approval-notices.js';
import { notifyApprovers } from './notify-approvers-activity.js';

/**
 * How long a run that is about to end (or continue as new) waits for its notices still in flight: a notice pending
 * when its run closes is dropped, so a decision's notice would otherwise race the run's last steps. Under the
 * approvers-told-every-ending rule, what is still in flight then is handed to a workflow of its own.
 */
const noticeGraceMs = 30_000;

/** One run's approval notices. */
export interface RunNotices {
  /**
   * The notices sent (or waiting for the one before them) that have not ended, by id, in the order sent: the run
   * waits for them before it ends, and hands off those still here after its grace period.
   */
  readonly inFlight: Map<string, { approval: PendingApproval; notice: ApprovalNotice }>;
  /**
   * Under the approvers-told-every-ending rule (run-patches.ts), the calls whose approvers were told they wait and
   * not yet how the wait ended, each with the end of its latest notice, which the next one waits for.
   */
  readonly waiting: Map<string, { approval: PendingApproval; lastEnded: Promise<void> }>;
  /** The ids of the notices this execution handed to a workflow of their own (handOffNotices). */
  readonly handedOff: Set<string>;
}

export function noRunNotices(): RunNotices {
  return { inFlight: new Map(), waiting: new Map(), handedOff: new Set() };
}

/**
 * Tells the tenant's approvers that `approval` waits for them (the worker's approval webhook), without holding up
 * the wait: the decision may come before the notice is delivered.
 */
export function notifyApprovalRequested(context: RunContext, approval: PendingApproval): void {
  const everyEnding = context.patches.approversToldEveryEnding();
  const lastEnded = sendNotice(context, approval, {
    ...noticeBase(context, approval, 'requested'),
    type: 'approval.requested',
    input: boundEchoedInput(approval.input, maxNoticeInputBytes),
  });
  if (everyEnding) context.notices.waiting.set(approval.toolCallId, { approval, lastEnded });
}

/**
 * Tells the approvers of a call that needs several approvals that it got one more (`approval.added`), in order after
 * the notices before it. Only approvers told that the call waits, under the approvers-told-every-ending rule, are
 * told: a run without a webhook, or from before that rule, sends nothing here.
 */
export function notifyApprovalAdded(
  context: RunContext,
  approval: PendingApproval,
  added: { approver: string; reason?: string; approvals: number; approvalsRequired: number },
): void {
  const { waiting } = context.notices;
  const told = waiting.get(approval.toolCallId);
  if (!told) return;
  const notice: ApprovalAddedNotice = {
    ...noticeBase(context, approval, `added-${added.approvals}`),
    type: 'approval.added',
    ...added,
  };
  waiting.set(approval.toolCallId, { approval, lastEnded: sendNotice(context, approval, notice, told.lastEnded) });
}

/**
 * Reminds the approvers that `approval` still waits and expires at its `expiresAt` (a worker told to remind them
 * recorded the lead time in the run's catalog), once its first notice has ended.
 */
export function notifyApprovalExpiring(context: RunContext, approval: PendingApproval): void {
  const { waiting } = context.notices;
  const told = waiting.get(approval.toolCallId);
  const lastEnded = sendNotice(
    context,
    approval,
    {
      ...noticeBase(context, approval, 'expiring'),
      type: 'approval.expiring',
      input: boundEchoedInput(approval.input, maxNoticeInputBytes),
    },
    told?.lastEnded,
  );
  if (told) waiting.set(approval.toolCallId, { approval, lastEnded });
}

/** Tells the approvers how the wait for `approval` ended: `decision` at `decidedAt`, or expired without one. */
export function notifyApprovalDecided(
  context: RunContext,
  approval: PendingApproval,
  decision: AcceptedDecision | undefined,
  decidedAt: string,
): void {
  const outcome = decision === undefined ? 'expired' : decision.approved ? 'approved' : 'rejected';
  const notice: ApprovalDecidedNotice = {
    ...noticeBase(context, approval, 'decided'),
    type: 'approval.decided',
    outcome,
    decidedAt,
    ...(decision?.approver !== undefined ? { approver: decision.approver } : {}),
    ...(decision?.reason !== undefined ? { reason: decision.reason } : {}),
    ...(decision?.edited ? { edited: true } : {}),
    ...(decision?.approvals ? { approvedBy: decision.approvals.approvedBy } : {}),
  };
  sendDecidedNotice(context, approval, notice);
}

/**
 * For a run about to close cancelled or failed, under the approvers-told-every-ending rule: settles the calls still
 * waiting (no decision is taken while the run closes), tells their approvers they were withdrawn, and waits for every
 * notice in flight, {@link noticeGraceMs} at most, even in a cancelled run. Runs without the rule (or without
 * notices) close as they did.
 */
export async function withdrawWaitingCalls(
  context: RunContext,
  runStatus: 'cancelled' | 'failed',
  at: string,
): Promise<void> {
  const { notices, run } = context;
  // A notice was sent whenever either holds, so the rule was asked then and is not asked here for the first time.
  if (notices.waiting.size === 0 && notices.inFlight.size === 0) return;
  if (!context.patches.approversToldEveryEnding()) return;
  run.approvals.settleAll();
  for (const { approval } of [...notices.waiting.values()]) {
    const notice: ApprovalDecidedNotice = {
      ...noticeBase(context, approval, 'decided'),
      type: 'approval.decided',
      outcome: 'withdrawn',
      runStatus,
      decidedAt: at,
    };
    sendDecidedNotice(context, approval, notice);
  }
  await CancellationScope.nonCancellable(() => noticesDelivered(context));
}

/**
 * Waits, at most {@link noticeGraceMs}, for the notices still in flight, so a run that ends right after a decision
 * still tells its approvers. Callers ask only when one is ({@link RunNotices.inFlight}): an await where runs had none
 * would change their commands.
 */
export async function noticesDelivered(context: RunContext): Promise<void> {
  if (onlyHandedOffInFlight(context)) return;
  const delivered = await condition(() => context.notices.inFlight.size === 0, noticeGraceMs);
  if (!delivered && context.patches.approversToldEveryEnding()) await handOffNotices(context);
}

/**
 * Whether every notice still in flight was handed off already, under `handed-off-notices-not-awaited` (asked only
 * then): a run whose state is too large to carry on after its hand-off fails, and its workflow delivers them. A run
 * sends no notice after a hand-off (nothing waits once a step has ended), so no other notice goes without its wait.
 */
function onlyHandedOffInFlight({ notices, patches }: RunContext): boolean {
  const { inFlight, handedOff } = notices;
  if (handedOff.size === 0 || [...inFlight.keys()].some((id) => !handedOff.has(id))) return false;
  return patches.handedOffNoticesNotAwaited();
}

/**
 * Starts `deliverApprovalNotices` with the notices still in flight, as a child workflow the run's close abandons
 * rather than ends, so they are still delivered, and records a `tool_approval_notice_handed_off` event for each. A
 * notice whose activity is still in an attempt may then arrive twice: receivers drop repeats by id.
 */
async function handOffNotices(context: RunContext): Promise<void> {
  const { run, notices } = context;
  const handedOff = [...notices.inFlight.values()];
  // Named after the execution, not the run: a run's id is not in its recorded history, so replay could not match it.
  const deliveredBy = `approval-notices/${workflowInfo().runId}`;
  await startChild(deliverApprovalNotices, {
    args: [handedOff.map(({ notice }) => notice)],
    workflowId: deliveredBy,
    parentClosePolicy: ParentClosePolicy.ABANDON,
    // Its tenant's codec tokens read it, as they read the run.
    typedSearchAttributes: [{ key: relaySearchAttributes.tenant, value: run.input.tenantId }],
  });
  for (const { approval, notice } of handedOff) {
    notices.handedOff.add(notice.id);
    const { toolCallId, toolName, step } = approval;
    const event = {
      type: 'tool_approval_notice_handed_off',
      toolCallId,
      toolName,
      notice: notice.type,
      deliveredBy,
    } as const;
    run.emit(event, { step, at: run.latestAt });
  }
}

/** Sends a call's last notice: under the rule, once its notices before have ended, so receivers get them in order. */
function sendDecidedNotice(context: RunContext, approval: PendingApproval, notice: ApprovalDecidedNotice): void {
  const { waiting } = context.notices;
  const told = waiting.get(approval.toolCallId);
  waiting.delete(approval.toolCallId);
  void sendNotice(context, approval, notice, told?.lastEnded);
}

/**
 * Sends one notice through the `notifyApprovers` activity (after `after`, when given) and records how it ended, when
 * it ends: `tool_approval_notified`, or `tool_approval_notice_failed` with why. Under the approvers-told-every-ending
 * rule the activity is not cancelled with its run: it still has to tell the approvers.
 */
function sendNotice(
  context: RunContext,
  approval: PendingApproval,
  notice: ApprovalNotice,
  after?: Promise<void>,
): Promise<void> {
  const { inFlight } = context.notices;
  inFlight.set(notice.id, { approval, notice });
  const deliver = () => deliverNotice(context, approval, notice);
  return (after === undefined ? deliver() : after.then(deliver)).finally(() => {
    inFlight.delete(notice.id);
  });
}

function deliverNotice(context: RunContext, approval: PendingApproval, notice: ApprovalNotice): Promise<void> {
  const { run } = context;
  const about = { toolCallId: approval.toolCallId, toolName: approval.toolName, notice: notice.type };
  const options = { step: approval.step };
  const sent = context.patches.approversToldEveryEnding()
    ? CancellationScope.nonCancellable(() => notifyApprovers(notice))
    : notifyApprovers(notice);
  return sent.then(
    (ending) => {
      if (ending.outcome === 'delivered') {
        const { status, attempt } = ending;
        run.emit({ type: 'tool_approval_notified', ...about, status, attempt }, { ...options, at: ending.at });
      } else if (ending.outcome === 'failed') {
        const { error, attempt } = ending;
        const status = ending.status !== undefined ? { status: ending.status } : {};
        const event = { type: 'tool_approval_notice_failed', ...about, error, ...status, attempt } as const;
        run.emit(event, { ...options, at: ending.at });
      }
    },
    async (error: unknown) => {
      // The run was cancelled (runs before the approvers-told-every-ending rule): nobody needs telling any more.
      if (isCancellation(error)) return;
      // Every attempt timed out or its worker died: the activity did not get to say so itself.
      const at = await readRecordedTime();
      const attempt = approvalNoticeRetry.maximumAttempts;
      const failed = {
        type: 'tool_approval_notice_failed',
        ...about,
        error: describeFailure(error),
        attempt,
      } as const;
      run.emit(failed, { ...options, at });
    },
  );
}

function noticeBase(
  { run }: RunContext,
  approval: PendingApproval,
  kind: 'requested' | 'expiring' | 'decided' | `added-${number}`,
) {
  const { runId } = run;
  const { toolCallId, toolName, step, requestedAt, expiresAt, source, destructiveHint, approvers } = approval;
  const { approvalsRequired } = approval;
  return {
    id: `${runId}/${toolCallId}/${kind}`,
    ...run.actingFor,
    runId,
    model: run.input.model,
    toolCallId,
    toolName,
    step,
    requestedAt,
    expiresAt,
    ...(source ? { source } : {}),
    ...(destructiveHint !== undefined ? { destructiveHint } : {}),
    ...(approvers ? { approvers } : {}),
    ...(approvalsRequired !== undefined ? { approvalsRequired } : {}),
  };
}
