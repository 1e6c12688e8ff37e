import { proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../activities/index.js';
import { approvalNoticeRetry } from '../src/shared/approval-notice.js';

/**
 * The activity that posts an approval notice, for the run (approval-notices.ts) and for the workflow a run hands its
 * last notices to (deliver-approval-notices.ts). One delivery may take the webhook's own timeout (10 s by default)
 * and some; the retry policy spans minutes.
 */
export const { notifyApprovers } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '1 minute',
  retry: approvalNoticeRetry,
});
