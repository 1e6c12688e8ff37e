import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { ApprovalNotice, ApprovalNoticeOutcome } from '../src/shared/approval-notice.js';
import { ApprovalDeliveryError, approvalWebhookFor, postApprovalNotice } from '../src/notify/approval-webhook.js';
import type { ApprovalWebhook, ApprovalWebhooks } from '../src/notify/approval-webhook.js';
import { errorMessage } from '../src/shared/error-message.js';
import { RelayError } from '../src/shared/errors.js';
import { hasAttemptsLeft } from './attempts.js';
import type { Recorded } from './index.js';

/**
 * The activity that posts a notice to the tenant's approval webhook. A delivery that could succeed later is thrown,
 * so the run's retry policy tries again; the last attempt, and a request the receiver refused outright, return the
 * failure instead, so the run records it as an event rather than as a failed activity only the Temporal UI shows.
 */
export function createNotifyApprovers(webhooks: ApprovalWebhooks | undefined) {
  return async function notifyApprovers(notice: ApprovalNotice): Promise<Recorded<ApprovalNoticeOutcome>> {
    const context = Context.current();
    if (webhooks === undefined) {
      // The worker that read the run's catalog had a webhook, this one has none: workers of a queue should agree.
      const error = `The worker that took this notice on task queue ${context.info.taskQueue} has no approval webhook`;
      return { outcome: 'failed', error, attempt: context.info.attempt, at: new Date().toISOString() };
    }
    let webhook: ApprovalWebhook | undefined;
    try {
      webhook = approvalWebhookFor(webhooks, notice.tenantId);
    } catch (error) {
      const why = errorMessage(error);
      // The tenant's webhook is not one that could deliver (a bad URL, a short secret): no retry mends that. Anything
      // else the team's function threw (its lookup failed) may pass, so it is tried again while attempts are left.
      const refused = RelayError.isInstance(error) && error.code === 'invalid_input';
      if (!refused && hasAttemptsLeft(context)) {
        log.warn('The tenant’s approval webhook could not be looked up; retrying', { noticeId: notice.id, error: why });
        throw ApplicationFailure.retryable(why, 'approval_webhook_lookup_failed');
      }
      return { outcome: 'failed', error: why, attempt: context.info.attempt, at: new Date().toISOString() };
    }
    if (webhook === undefined) return { outcome: 'not_configured', at: new Date().toISOString() };
    const linked = webhook.inboxUrl
      ? {
          ...notice,
          inboxUrl: new URL(`inbox/runs/${encodeURIComponent(notice.runId)}`, withSlash(webhook.inboxUrl)).href,
        }
      : notice;
    const { attempt } = context.info;
    try {
      const status = await postApprovalNotice(webhook, linked);
      return { outcome: 'delivered', status, attempt, at: new Date().toISOString() };
    } catch (error) {
      if (!(error instanceof ApprovalDeliveryError)) throw error;
      if (error.permanent || !hasAttemptsLeft(context)) {
        const status = error.status !== undefined ? { status: error.status } : {};
        return { outcome: 'failed', error: error.message, ...status, attempt, at: new Date().toISOString() };
      }
      log.warn('Approval notice not delivered; retrying', { noticeId: notice.id, attempt, error: error.message });
      throw ApplicationFailure.retryable(error.message, 'approval_webhook_unavailable');
    }
  };
}

/** `base` as a folder, so a relative path resolves below it rather than beside its last segment. */
function withSlash(base: string): string {
  return base.endsWith('/') ? base : `${base}/`;
}
