import { isCancellation, proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../activities/index.js';
import { approvalNoticeRetry, maxNoticeInputBytes } from '../src/shared/approval-notice.js';
import type { ApprovalNotice } from '../src/shared/approval-notice.js';
import { boundEchoedInput } from '../src/shared/payload-limits.js';
import type { PendingApproval } from '../src/shared/run-types.js';
import type { RunContext } from './run-context.js';
import { readRecordedTime } from './recorded-clock.js';

// One delivery may take the webhook's own timeout (10 s by default) and some; the retry policy spans minutes.
const { notifyApprovers } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '1 minute',
  retry: approvalNoticeRetry,
});

/**
 * Tells the tenant's approvers that `approval` waits for them (the worker's approval webhook), without holding up
 * the wait: the decision may come before the notice is delivered. How it ended is recorded as an event when it
 * comes: `tool_approval_notified`, or `tool_approval_notice_failed` with why.
 */
export function notifyApproversOf(context: RunContext, approval: PendingApproval): void {
  const { run } = context;
  const ids = { toolCallId: approval.toolCallId, toolName: approval.toolName };
  notifyApprovers(noticeOf(context, approval)).then(
    (ending) => {
      if (ending.outcome === 'delivered') {
        const { status, attempt } = ending;
        run.emit({ type: 'tool_approval_notified', ...ids, status, attempt }, { at: ending.at, step: approval.step });
      } else if (ending.outcome === 'failed') {
        const { error, attempt } = ending;
        const status = ending.status !== undefined ? { status: ending.status } : {};
        const event = { type: 'tool_approval_notice_failed', ...ids, error, ...status, attempt } as const;
        run.emit(event, { at: ending.at, step: approval.step });
      }
    },
    async (error: unknown) => {
      // The run was cancelled, or its scope closed: nobody needs telling any more.
      if (isCancellation(error)) return;
      // Every attempt timed out or its worker died: the activity did not get to say so itself.
      const at = await readRecordedTime();
      const why = error instanceof Error ? (error.cause instanceof Error ? error.cause.message : error.message) : '';
      const event = {
        type: 'tool_approval_notice_failed',
        ...ids,
        error: why,
        attempt: approvalNoticeRetry.maximumAttempts,
      } as const;
      run.emit(event, { at, step: approval.step });
    },
  );
}

function noticeOf({ run }: RunContext, approval: PendingApproval): ApprovalNotice {
  const { tenantId, userId, sessionId, model } = run.input;
  const { runId } = run;
  const { toolCallId, toolName, step, requestedAt, expiresAt, source, destructiveHint } = approval;
  return {
    type: 'approval.requested',
    id: `${runId}/${toolCallId}`,
    tenantId,
    runId,
    model,
    ...(userId !== undefined ? { userId } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
    toolCallId,
    toolName,
    step,
    input: boundEchoedInput(approval.input, maxNoticeInputBytes),
    requestedAt,
    expiresAt,
    ...(source ? { source } : {}),
    ...(destructiveHint !== undefined ? { destructiveHint } : {}),
  };
}
