import { ApplicationFailure } from '@temporalio/workflow';
import { isRecord } from '../src/shared/is-record.js';
import { maxDecisionReasonLength } from '../src/shared/run-types.js';
import type { ApprovalDecision, GivenApproval, PendingApproval } from '../src/shared/run-types.js';
import type { ToolCallCheck } from './tool-call-validator.js';

/** A decision accepted for a pending call, waiting for the run to act on it. */
export interface AcceptedDecision {
  approved: boolean;
  /** The input that runs when approved: the pending one, or the checked edit. */
  input: unknown;
  approver?: string;
  /** Why the human decided so; a rejection's reason goes back to the model. */
  reason?: string;
  edited: boolean;
  /** When the decider's client sent it, as it said (see ApprovalDecision.decidedAt). */
  decidedAt?: string;
  /**
   * Its time as fixed from history before it was taken (the decision-time-fixed-before-taken rule): taken as it is,
   * never bounded again by the clock of a later activation, which a query's replay can show earlier.
   */
  datedAt?: string;
  /** The time of its `tool_approved` / `tool_rejected` event, when the handler that accepted it recorded one. */
  recordedAt?: string;
  /** An approval of a call that needs several: how many it has with this one, of how many it needs, and by whom. */
  approvals?: ApprovalCount;
}

export interface ApprovalCount {
  count: number;
  required: number;
  approvedBy: string[];
}

/** An approval of a call that needs more of them: recorded, while the call keeps waiting. */
export type OneOfSeveral = AcceptedDecision & { approved: true; approver: string; approvals: ApprovalCount };

export function isOneOfSeveral(decision: AcceptedDecision): decision is OneOfSeveral {
  const { approvals } = decision;
  return (
    decision.approved &&
    decision.approver !== undefined &&
    approvals !== undefined &&
    approvals.count < approvals.required
  );
}

/**
 * The approval state machine of one run. A call is `pending` from the moment the run asks for a decision, then
 * `decided` (by update or signal) or expired or cancelled, and `settled` once the run has acted on it; nothing moves
 * a settled call again. Decisions are checked here before anything is written, so the update's validator and the
 * signal handler refuse the same things.
 */
export class ApprovalBook {
  private readonly pending = new Map<string, PendingApproval>();
  private readonly accepted = new Map<string, AcceptedDecision>();
  private readonly settled = new Set<string>();
  /** The calls whose waits the closing run ended (settleAll): their waits end there, whatever they resume to. */
  private readonly endedByRun = new Set<string>();

  constructor(carried: readonly PendingApproval[] = []) {
    for (const approval of carried) this.pending.set(approval.toolCallId, approval);
  }

  /** Puts a call in `pending`. */
  request(approval: PendingApproval): void {
    this.pending.set(approval.toolCallId, approval);
  }

  get(toolCallId: string): PendingApproval | undefined {
    return this.pending.get(toolCallId);
  }

  get count(): number {
    return this.pending.size;
  }

  list(): PendingApproval[] {
    return [...this.pending.values()];
  }

  /** The decision accepted for a call that is still waiting, if any. */
  decisionFor(toolCallId: string): AcceptedDecision | undefined {
    return this.accepted.get(toolCallId);
  }

  /**
   * Throws the `ApplicationFailure` that refuses `decision`, or returns the decision as it would be accepted.
   * `checkInput` checks an edited input against the call's tool schema.
   */
  check(
    decision: ApprovalDecision,
    runTenantId: string,
    checkInput: (toolName: string, input: unknown) => ToolCallCheck,
  ): AcceptedDecision {
    if (!isRecord(decision)) {
      // A raw signal can carry anything: `null` from the Temporal UI must be refused, not throw here.
      throw refusal('invalid_input', 'A decision is an object: { toolCallId, decision, approver?, reason?, input? }');
    }
    if (decision.tenantId !== undefined && decision.tenantId !== runTenantId) {
      throw refusal('tenant_mismatch', 'This run belongs to another tenant');
    }
    const pending = this.pending.get(decision.toolCallId);
    if (!pending || this.settled.has(decision.toolCallId) || this.accepted.has(decision.toolCallId)) {
      throw refusal(
        'approval_not_pending',
        `Tool call '${decision.toolCallId}' ${this.whyNotPending(decision.toolCallId)}`,
      );
    }
    refuseAnotherRequest(pending, decision);
    if (decision.decision !== 'approve' && decision.decision !== 'reject') {
      throw refusal('invalid_input', "decision must be 'approve' or 'reject'");
    }
    checkApprover(pending, decision);
    if (decision.decidedAt !== undefined && !isIsoTime(decision.decidedAt)) {
      throw refusal('invalid_input', 'decidedAt must be a time in ISO 8601 (as toISOString writes it)');
    }
    const who = {
      ...(typeof decision.approver === 'string' ? { approver: decision.approver.slice(0, 256) } : {}),
      ...(typeof decision.reason === 'string' ? { reason: decision.reason.slice(0, maxDecisionReasonLength) } : {}),
      ...(decision.decidedAt !== undefined ? { decidedAt: decision.decidedAt } : {}),
    };
    if (decision.decision === 'reject') return { approved: false, input: pending.input, edited: false, ...who };
    if (decision.input === undefined) {
      return { approved: true, input: pending.input, edited: false, ...who, ...approvalCount(pending, who.approver) };
    }
    const check = checkInput(pending.toolName, decision.input);
    if (!check.valid) throw editRefusal(check);
    return { approved: true, input: check.input, edited: true, ...who };
  }

  /** Why a decision for `toolCallId` finds no wait to end, in the words of the refusal that says so. */
  private whyNotPending(toolCallId: string): string {
    if (this.endedByRun.has(toolCallId)) return 'is no longer awaiting approval: the run ended its wait as it closed';
    if (this.settled.has(toolCallId) || this.accepted.has(toolCallId)) return 'was already decided or has expired';
    return 'is not awaiting approval';
  }

  /** Adds one approval to a call that needs several; the call keeps waiting for the rest. */
  addApproval(toolCallId: string, approval: GivenApproval): void {
    const pending = this.pending.get(toolCallId);
    if (pending) this.pending.set(toolCallId, { ...pending, approvals: [...(pending.approvals ?? []), approval] });
  }

  /** Records a checked decision; the run acts on it at its next activation. */
  accept(toolCallId: string, decision: AcceptedDecision): void {
    this.accepted.set(toolCallId, decision);
  }

  /** Ends the wait for one call, whatever ended it; a later decision for it is refused. */
  settle(toolCallId: string): void {
    this.pending.delete(toolCallId);
    this.accepted.delete(toolCallId);
    this.settled.add(toolCallId);
  }

  /** Settles every call still waiting (the run was cancelled or is failing) and returns them. */
  settleAll(): PendingApproval[] {
    const waiting = this.list();
    for (const approval of waiting) {
      this.settle(approval.toolCallId);
      this.endedByRun.add(approval.toolCallId);
    }
    return waiting;
  }

  /** Whether the closing run ended the call's wait ({@link settleAll}): what its wait resumes to is moot. */
  wasEndedByRun(toolCallId: string): boolean {
    return this.endedByRun.has(toolCallId);
  }
}

/** The refusal of an edited input that fails its check, with the issues for the approver's form. */
export function editRefusal(check: Extract<ToolCallCheck, { valid: false }>): ApplicationFailure {
  return ApplicationFailure.create({
    type: 'approval_input_invalid',
    message: `Edited input rejected. ${check.error}`,
    details: [check.issues],
    nonRetryable: true,
  });
}

/** The decision's `approver` or `reason` when given as something other than text, else undefined. */
export function nonTextField(decision: ApprovalDecision): 'approver' | 'reason' | undefined {
  if (!isRecord(decision)) return undefined;
  const given = decision as { approver?: unknown; reason?: unknown };
  if (given.approver !== undefined && typeof given.approver !== 'string') return 'approver';
  if (given.reason !== undefined && typeof given.reason !== 'string') return 'reason';
  return undefined;
}

/**
 * Refuses a decision whose approver or reason is not text: a raw signal's `approver: ["cfo"]` would pass a tool's
 * approver list by string coercion and be recorded naming nobody, and a reason that is not text would be dropped.
 */
export function refuseNonTextField(decision: ApprovalDecision): void {
  const field = nonTextField(decision);
  if (field === undefined) return;
  const given = (decision as unknown as Record<string, unknown>)[field];
  const kind = Array.isArray(given) ? 'a list' : given === null ? 'null' : `a ${typeof given}`;
  throw refusal('invalid_input', `${field} must be text, not ${kind}`);
}

/**
 * Refuses a decision made on another request of the call than the one waiting (see ApprovalDecision.requestedAt):
 * call ids repeat in a run started again under the same id.
 */
function refuseAnotherRequest(pending: PendingApproval, decision: ApprovalDecision): void {
  if (decision.requestedAt === undefined || decision.requestedAt === pending.requestedAt) return;
  throw refusal(
    'approval_not_pending',
    `Tool call '${pending.toolCallId}' waiting now was requested at ${pending.requestedAt}, not at ` +
      `${String(decision.requestedAt).slice(0, 64)}: the decision was made on another request`,
  );
}

/** The approver must be one the tool names, if it names any, and count as a new one where several must approve. */
function checkApprover(pending: PendingApproval, decision: ApprovalDecision): void {
  if (pending.approvers && !pending.approvers.includes(String(decision.approver ?? ''))) {
    const who = typeof decision.approver === 'string' ? `'${decision.approver.slice(0, 256)}'` : 'an unnamed approver';
    const allowed = pending.approvers.join(' or ');
    throw refusal('approver_not_allowed', `Tool '${pending.toolName}' is decided by ${allowed} only, not by ${who}`);
  }
  if (pending.approvalsRequired !== undefined && decision.decision === 'approve') checkOneOfSeveral(pending, decision);
}

/**
 * An approval of a call that needs several must name its approver, who counts once, and leave the input as it is:
 * the call runs the input every approver saw.
 */
function checkOneOfSeveral(pending: PendingApproval, decision: ApprovalDecision): void {
  const required = pending.approvalsRequired;
  if (typeof decision.approver !== 'string' || decision.approver.trim() === '') {
    throw refusal(
      'invalid_input',
      `Tool '${pending.toolName}' needs ${required} approvals: each must name its approver`,
    );
  }
  const approver = decision.approver.slice(0, 256);
  if (pending.approvals?.some((given) => given.approver === approver)) {
    throw refusal(
      'approver_not_allowed',
      `'${approver}' has approved this call already: it needs ${required} different approvers`,
    );
  }
  if (decision.input !== undefined) {
    throw refusal(
      'invalid_input',
      `A call that needs ${required} approvals cannot be edited: each approver approves the input the others saw`,
    );
  }
}

/** The count an approval brings a call that needs several; nothing for a call that needs one. */
function approvalCount(pending: PendingApproval, approver: string | undefined): { approvals?: ApprovalCount } {
  if (pending.approvalsRequired === undefined || approver === undefined) return {};
  const approvedBy = [...(pending.approvals ?? []).map((given) => given.approver), approver];
  return { approvals: { count: approvedBy.length, required: pending.approvalsRequired, approvedBy } };
}

/** `2026-12-04T12:00:00.000Z`, as `Date.prototype.toISOString` writes it: compared as text with other event times. */
export function isIsoTime(value: unknown): value is string {
  return (
    typeof value === 'string' &&
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/.test(value) &&
    !Number.isNaN(Date.parse(value))
  );
}

function refusal(type: string, message: string): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true });
}
