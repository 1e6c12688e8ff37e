import { toJsonText, utf8ByteLength } from './payload-limits.js';
import type { PendingApproval } from './run-types.js';

/** The memo key under which a waiting run keeps its calls waiting for a human (rule `pending-approvals-in-memo`). */
export const pendingApprovalsMemoKey = 'relayPendingApprovals';

/**
 * The most bytes (as JSON) of waiting calls a run keeps in its memo: the memo is written into history each time the
 * waiting calls change, and sent with every visibility listing of the run. A run waiting on more (a long input to
 * approve) removes the key, and the approvals list asks the run itself, as it does runs recorded before the rule.
 */
const maxPendingApprovalsMemoBytes = 16 * 1024;

/** What a waiting run keeps in its memo: its calls waiting for a human, and what an approvals list shows of the run. */
export interface PendingApprovalsMemo {
  model: string;
  userId?: string;
  sessionId?: string;
  approvals: PendingApproval[];
}

/** The memo value for `memo`, or undefined (the key removed) when nothing waits or it is over its budget. */
export function pendingApprovalsMemoValue(memo: PendingApprovalsMemo): PendingApprovalsMemo | undefined {
  if (memo.approvals.length === 0) return undefined;
  const json = toJsonText(memo);
  return json !== undefined && utf8ByteLength(json) <= maxPendingApprovalsMemoBytes ? memo : undefined;
}

/** The waiting calls a listed run's memo holds; undefined when it holds none in this form (the run is asked). */
export function readPendingApprovalsMemo(value: unknown): PendingApprovalsMemo | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  const memo = value as Partial<PendingApprovalsMemo>;
  if (typeof memo.model !== 'string' || !Array.isArray(memo.approvals)) return undefined;
  return memo.approvals.every(isPendingApproval) ? (memo as PendingApprovalsMemo) : undefined;
}

function isPendingApproval(value: unknown): value is PendingApproval {
  if (typeof value !== 'object' || value === null) return false;
  const approval = value as Partial<PendingApproval>;
  return (
    typeof approval.toolCallId === 'string' &&
    typeof approval.toolName === 'string' &&
    typeof approval.requestedAt === 'string' &&
    typeof approval.expiresAt === 'string'
  );
}
