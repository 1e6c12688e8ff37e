import type { ApprovalHints } from './tool-catalog.js';

/** The most bytes of a call's input (as JSON) a notice carries whole; past it, a preview. */
export const maxNoticeInputBytes = 8 * 1024;

/** What every notice says of its call: the run, the call, and when it started and stops waiting. */
interface ApprovalNoticeBase extends ApprovalHints {
  /** The same on every delivery of this notice (`<runId>/<toolCallId>/<requested|expiring|decided>`): drop repeats. */
  id: string;
  tenantId: string;
  runId: string;
  model: string;
  userId?: string;
  sessionId?: string;
  toolCallId: string;
  toolName: string;
  step: number;
  requestedAt: string;
  expiresAt: string;
  /** The run's page in the approvals inbox, when the worker was told where the inbox is. */
  inboxUrl?: string;
  /** The only approvers who may decide the call, when its tool names them. */
  approvers?: string[];
  /** How many different approvers must approve the call, when its tool asks for more than one. */
  approvalsRequired?: number;
}

/** A tool call started waiting for a human. */
export interface ApprovalRequestedNotice extends ApprovalNoticeBase {
  type: 'approval.requested';
  /** The input that runs if approved unchanged; over {@link maxNoticeInputBytes} of JSON, a truncated preview. */
  input: unknown;
}

/**
 * A call that needs several approvers (`approvalsRequired`) got one more approval and still waits for the rest. Its
 * `id` ends in `added-<approvals>`, one per approval.
 */
export interface ApprovalAddedNotice extends ApprovalNoticeBase {
  type: 'approval.added';
  approver: string;
  reason?: string;
  /** How many approvals the call has with this one, of the `approvalsRequired` it needs. */
  approvals: number;
  approvalsRequired: number;
}

/**
 * A call still waits, and expires at `expiresAt`: the reminder a worker told to remind approvers sends once, that long
 * before.
 */
export interface ApprovalExpiringNotice extends ApprovalNoticeBase {
  type: 'approval.expiring';
  /** As in {@link ApprovalRequestedNotice}. */
  input: unknown;
}

/**
 * The wait for a call ended: a human approved or rejected it, nobody decided before `expiresAt`, or the run was
 * cancelled or failed while the call waited (`withdrawn`, `runStatus` says which).
 */
export interface ApprovalDecidedNotice extends ApprovalNoticeBase {
  type: 'approval.decided';
  outcome: 'approved' | 'rejected' | 'expired' | 'withdrawn';
  /** When the wait ended: the decision's event time, `expiresAt` when expired, the run's end when withdrawn. */
  decidedAt: string;
  /** Why a withdrawn call will never run: its run was cancelled, or failed. */
  runStatus?: 'cancelled' | 'failed';
  approver?: string;
  reason?: string;
  /** Approved with an edited input. */
  edited?: boolean;
  /** Every approver of a call that needed several, in the order they approved. */
  approvedBy?: string[];
}

/**
 * What a tenant's approvers are told of a call that waits for them: the body the worker posts to the tenant's approval
 * webhook. Workflow-safe (no Node imports): the run builds it.
 */
export type ApprovalNotice =
  ApprovalRequestedNotice | ApprovalAddedNotice | ApprovalExpiringNotice | ApprovalDecidedNotice;

/** How a notice ended: delivered (2xx), given up on, or not sent because the tenant has no webhook. */
export type ApprovalNoticeOutcome =
  | { outcome: 'delivered'; status: number; attempt: number }
  | { outcome: 'failed'; error: string; status?: number; attempt: number }
  | { outcome: 'not_configured' };

/** How one notice a run handed off ended, by its id: the result of the workflow it was handed to, one per notice. */
export type HandedOffNoticeOutcome = { id: string } & ApprovalNoticeOutcome;

/**
 * How long a notice is retried: twelve attempts, 1 s apart doubling to 2 minutes, so about 10 minutes (607 s) of
 * waits between the first and the last, plus the attempts themselves: enough to ride out a receiver's restart, short
 * of an approval's default 24 hours. The last attempt reports the failure instead of throwing, so the run records it.
 */
export const approvalNoticeRetry = {
  initialInterval: '1 second',
  backoffCoefficient: 2,
  maximumInterval: '2 minutes',
  maximumAttempts: 12,
} as const;
