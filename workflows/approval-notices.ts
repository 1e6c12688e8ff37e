import { condition, isCancellation, proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../activities/index.js';
import { approvalNoticeRetry, maxNoticeInputBytes } from '../src/shared/approval-notice.js';
import type { ApprovalDecidedNotice, ApprovalNotice } from '../src/shared/approval-notice.js';
import { boundEchoedInput } from '../src/shared/payload-limits.js';
import type { PendingApproval } from '../src/shared/run-types.js';
import type { AcceptedDecision } from './approvals.js';
import type { RunContext } from './run-context.js';
import { describeFailure } from './describe-failure.js';
import { readRecordedTime } from './recorded-clock.js';

// One delivery may take the webhook's own timeout (10 s by default) and some; the retry policy spans minutes.
const { notifyApprovers } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '1 minute',
  retry: approvalNoticeRetry,
});

/**
 * How long a run that is about to end (or continue as new) waits for its notices still in flight: a notice pending
 * when its run closes is dropped, so a decision's notice would otherwise race the run's last steps.
 */
const noticeGraceMs = 30_000;

/**
 * Tells the tenant's approvers that `approval` waits for them (the worker's approval webhook), without holding up
 * the wait: the decision may come before the notice is delivered.
 */
export function notifyApprovalRequested(context: RunContext, approval: PendingApproval): void {
  sendNotice(context, approval, {
    ...noticeBase(context, approval, 'requested'),
    type: 'approval.requested',
    input: boundEchoedInput(approval.input, maxNoticeInputBytes),
  });
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
  };
  sendNotice(context, approval, notice);
}

/**
 * Waits, at most {@link noticeGraceMs}, for the notices still in flight, so a run that ends right after a decision
 * still tells its approvers. Callers ask only when one is ({@link RunContext.noticesInFlight}): an await where runs
 * had none would change their commands.
 */
export async function noticesDelivered(context: RunContext): Promise<void> {
  await condition(() => context.noticesInFlight === 0, noticeGraceMs);
}

/**
 * Sends one notice through the `notifyApprovers` activity and records how it ended, when it ends:
 * `tool_approval_notified`, or `tool_approval_notice_failed` with why.
 */
function sendNotice(context: RunContext, approval: PendingApproval, notice: ApprovalNotice): void {
  const { run } = context;
  const about = { toolCallId: approval.toolCallId, toolName: approval.toolName, notice: notice.type };
  const options = { step: approval.step };
  context.noticesInFlight += 1;
  notifyApprovers(notice)
    .then(
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
        // The run was cancelled: nobody needs telling any more.
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
    )
    .finally(() => {
      context.noticesInFlight -= 1;
    });
}

function noticeBase({ run }: RunContext, approval: PendingApproval, kind: 'requested' | 'decided') {
  const { runId } = run;
  const { toolCallId, toolName, step, requestedAt, expiresAt, source, destructiveHint } = approval;
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
  };
}
