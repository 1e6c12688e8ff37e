import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { describeResetFor, workflowTaskFailureIn } from '../../../src/client/workflow-task-failure.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const { WorkflowTaskFailedCause } = proto.temporal.api.enums.v1;
const nondeterminism = '[TMPRL1100] Nondeterminism error: UpsertWorkflowSearchAttributesMachine does not handle';

/** A history's events, numbered from 1, of the kinds these rules read. */
function history(...kinds: (HistoryEvent | 'completed' | 'scheduled')[]): HistoryEvent[] {
  return kinds.map((kind, index) => event(index + 1, kind));
}

function event(eventId: number, kind: HistoryEvent | 'completed' | 'scheduled'): HistoryEvent {
  const attributes =
    kind === 'completed'
      ? { workflowTaskCompletedEventAttributes: {} }
      : kind === 'scheduled'
        ? { workflowTaskScheduledEventAttributes: {} }
        : kind;
  // fromObject turns the number into the Long a history's event id is.
  return proto.temporal.api.history.v1.HistoryEvent.fromObject({ eventId, ...attributes });
}

function failed(message: string, cause = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR) {
  return { workflowTaskFailedEventAttributes: { cause, failure: { message } } };
}

describe('the failure of the workflow task a run is stuck on', () => {
  it('names the task completed before the event a nondeterminism error names, to reset the run to', () => {
    const events = history('scheduled', 'completed', 'scheduled', 'completed', 'scheduled', 'completed', 'scheduled');
    events.push(event(8, failed(`${nondeterminism} HistoryEvent(id: 5, WorkflowPropertiesModified)`)));
    expect(workflowTaskFailureIn(events)).toEqual({
      message: `${nondeterminism} HistoryEvent(id: 5, WorkflowPropertiesModified)`,
      nondeterministic: true,
      resetEventId: 4,
    });
    expect(describeResetFor('run_1', { message: '', nondeterministic: true, resetEventId: 4 })).toBe(
      'temporal workflow reset --workflow-id run_1 --event-id 4 --reason "history no longer replays"',
    );
  });

  it('says how to find the event when the message names none', () => {
    const failure = workflowTaskFailureIn(history('scheduled', 'completed', 'scheduled', failed(nondeterminism)));
    expect(failure).toEqual({ message: nondeterminism, nondeterministic: true });
    expect(describeResetFor('run_1', failure ?? { message: '', nondeterministic: true })).toContain(
      '--event-id <id> --reason "history no longer replays", <id> being the newest WorkflowTaskCompleted event before',
    );
  });

  it('is none once a later task completed, and not nondeterministic for another cause', () => {
    const recovered = history(
      'scheduled',
      failed(`${nondeterminism} HistoryEvent(id: 1, x)`),
      'scheduled',
      'completed',
    );
    expect(workflowTaskFailureIn(recovered)).toBeUndefined();
    expect(workflowTaskFailureIn(history('scheduled', 'completed'))).toBeUndefined();
    const other = failed('boom', WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE);
    expect(workflowTaskFailureIn(history('scheduled', 'completed', 'scheduled', other))).toEqual({
      message: 'boom',
      nondeterministic: false,
    });
  });
});
