import type { ApprovalHints } from './tool-catalog.js';

/** The most bytes of a call's input (as JSON) a notice carries whole; past it, a preview. */
export const maxNoticeInputBytes = 8 * 1024;

/**
 * What a tenant's approvers are told when a tool call starts waiting for them: the body the worker posts to the
 * tenant's approval webhook. Workflow-safe (no Node imports): the run builds it.
 */
export interface ApprovalNotice extends ApprovalHints {
  type: 'approval.requested';
  /** The same on every delivery of this notice (`<runId>/<toolCallId>`): a receiver drops repeats by it. */
  id: string;
  tenantId: string;
  runId: string;
  model: string;
  userId?: string;
  sessionId?: string;
  toolCallId: string;
  toolName: string;
  step: number;
  /** The input that runs if approved unchanged; over {@link maxNoticeInputBytes} of JSON, a truncated preview (the inbox has it whole). */
  input: unknown;
  requestedAt: string;
  expiresAt: string;
  /** The call's page in the approvals inbox, when the worker was told where the inbox is. */
  inboxUrl?: string;
}

/** How a notice ended: delivered (2xx), given up on, or not sent because the tenant has no webhook. */
export type ApprovalNoticeOutcome =
  | { outcome: 'delivered'; status: number; attempt: number }
  | { outcome: 'failed'; error: string; status?: number; attempt: number }
  | { outcome: 'not_configured' };

/**
 * How long a notice is retried: about 13 minutes in all (1 s doubling to 2 minutes, twelve attempts), enough to ride
 * out a receiver's restart, short of an approval's default 24 hours. The last attempt reports the failure instead of
 * throwing, so the run records it.
 */
export const approvalNoticeRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '2 minutes',
  maximumAttempts: 12,
} as const;
