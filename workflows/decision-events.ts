import type { AcceptedDecision } from './approvals.js';
import type { RunState } from './run-state.js';

/** The `tool_approved` or `tool_rejected` event of an accepted decision, at `at` (see RunState.emit). */
export function emitDecision(
  run: RunState,
  ids: { toolCallId: string; toolName: string },
  accepted: AcceptedDecision,
  at?: string,
): void {
  const who = {
    ...(accepted.approver !== undefined ? { approver: accepted.approver } : {}),
    ...(accepted.reason !== undefined ? { reason: accepted.reason } : {}),
  };
  if (!accepted.approved) {
    run.emit({ type: 'tool_rejected', ...ids, ...who }, { at });
    return;
  }
  run.emit({ type: 'tool_approved', ...ids, ...who, input: accepted.input, edited: accepted.edited }, { at });
}
