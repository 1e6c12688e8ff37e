import { approvalNoticeRetry } from '../src/shared/approval-notice.js';
import type { ApprovalNotice, ApprovalNoticeOutcome, HandedOffNoticeOutcome } from '../src/shared/approval-notice.js';
import { describeFailure } from './describe-failure.js';
import { notifyApprovers } from './notify-approvers-activity.js';

/**
 * Delivers the approval notices a run handed off because it closed with them still in flight (its grace period
 * spent), one after the other so a call's notices keep their order, each with the notice activity's own retries. The
 * run's event log is closed by then: how each ended is this workflow's result, and its history in the Temporal UI.
 */
export async function deliverApprovalNotices(notices: ApprovalNotice[]): Promise<HandedOffNoticeOutcome[]> {
  const outcomes: HandedOffNoticeOutcome[] = [];
  for (const notice of notices) {
    const ending = await notifyApprovers(notice).then(
      ({ at: _at, ...outcome }): ApprovalNoticeOutcome => outcome,
      (error: unknown): ApprovalNoticeOutcome => ({
        outcome: 'failed',
        error: describeFailure(error),
        attempt: approvalNoticeRetry.maximumAttempts,
      }),
    );
    outcomes.push({ id: notice.id, ...ending });
  }
  return outcomes;
}
