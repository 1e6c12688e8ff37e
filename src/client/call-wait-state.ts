import type { RunEvent } from '../shared/run-types.js';

/** Events after which a call no longer waits for a decision, or never will. */
const endsTheWait = new Set<RunEvent['type']>([
  'tool_validation_failed',
  'tool_approval_not_required',
  'tool_approved',
  'tool_rejected',
  'tool_approval_timed_out',
  'tool_cancelled',
  'tool_succeeded',
  'tool_failed',
]);

/**
 * Where a call stands in its wait for a human, read from the run's events: `waiting` for a decision now, `on_its_way`
 * when it was validated as one that needs approval and its input check (an activity) has not answered yet, or
 * `not_waiting` (unknown, never needed a human, or its wait has ended).
 */
export function callWaitState(
  events: readonly RunEvent[],
  toolCallId: string,
): 'waiting' | 'on_its_way' | 'not_waiting' {
  const ofCall = events.filter((event) => 'toolCallId' in event && event.toolCallId === toolCallId);
  if (ofCall.some((event) => endsTheWait.has(event.type))) return 'not_waiting';
  if (ofCall.some((event) => event.type === 'tool_awaiting_approval')) return 'waiting';
  const validated = ofCall.find((event) => event.type === 'tool_call_validated');
  return validated?.type === 'tool_call_validated' && validated.requiresApproval ? 'on_its_way' : 'not_waiting';
}
