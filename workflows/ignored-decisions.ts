import { ApplicationFailure } from '@temporalio/workflow';
import { isRecord } from '../src/shared/is-record.js';
import { maxDecisionReasonLength, maxIgnoredDecisionsRecorded } from '../src/shared/run-types.js';
import { isIsoTime } from './approvals.js';
import { describeFailure } from './describe-failure.js';
import type { RunContext } from './run-context.js';

/** The longest text of the signal's own (a call id, an approver) that an ignored decision's event repeats. */
const maxEchoedLength = 256;

/**
 * Records a decision signalled to the run that it did not take, under the rule `ignored-decision-recorded` (asked at
 * the first such signal): a signal has no answer to carry the refusal, so a decision sent from the Temporal UI with a
 * wrong call id or approver otherwise left only a worker log line. At most {@link maxIgnoredDecisionsRecorded} an
 * execution. Dated at the run's newest event: a handler does not wait for a clock activity, and the signal's own
 * `decidedAt` (kept beside) would date every later event after it, a timeout fired in the same task included.
 */
export function recordIgnoredDecision(context: RunContext, signalled: unknown, error: unknown): void {
  if (context.ignoredDecisionsRecorded >= maxIgnoredDecisionsRecorded) return;
  if (!context.patches.ignoredDecisionRecorded()) return;
  context.ignoredDecisionsRecorded += 1;
  const { run } = context;
  const toolCallId = signalledCallId(signalled);
  const toolName = toolCallId === undefined ? undefined : run.approvals.get(toolCallId)?.toolName;
  const { decision, approver, decidedAt } = fieldsOf(signalled);
  run.emit(
    {
      type: 'decision_ignored',
      ...(toolCallId !== undefined ? { toolCallId } : {}),
      ...(toolName !== undefined ? { toolName } : {}),
      ...(decision === 'approve' || decision === 'reject' ? { decision } : {}),
      ...(typeof approver === 'string' ? { approver: approver.slice(0, maxEchoedLength) } : {}),
      ...(isIsoTime(decidedAt) ? { decidedAt } : {}),
      code: error instanceof ApplicationFailure && error.type ? error.type : 'invalid_input',
      error: describeFailure(error).slice(0, maxDecisionReasonLength),
    },
    { at: run.latestAt },
  );
}

/** The call id a signal named, when it is text (cut to a readable length): a raw signal can hold anything. */
export function signalledCallId(signalled: unknown): string | undefined {
  const { toolCallId } = fieldsOf(signalled);
  return typeof toolCallId === 'string' ? toolCallId.slice(0, maxEchoedLength) : undefined;
}

/** A signal's fields, or none when it is not an object (a raw signal of `null`, a number, a list). */
function fieldsOf(signalled: unknown): Record<string, unknown> {
  return isRecord(signalled) ? signalled : {};
}
