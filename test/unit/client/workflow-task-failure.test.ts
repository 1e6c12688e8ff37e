import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import {
  describeResetFor,
  explainUnavailable,
  workflowTaskFailureIn,
} from '../../../src/client/workflow-task-failure.js';
import type { WorkflowTaskFailure } from '../../../src/client/workflow-task-failure.js';
import { RelayError } from '../../../src/shared/errors.js';

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

const noFailure: WorkflowTaskFailure = { message: '', nondeterministic: false, workflowCodeFailed: false };

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
      workflowCodeFailed: false,
      resetEventId: 4,
    });
    expect(describeResetFor('run_1', { ...noFailure, nondeterministic: true, resetEventId: 4 })).toBe(
      'temporal workflow reset --workflow-id run_1 --event-id 4 --reason "history no longer replays"',
    );
  });

  it('says how to find the event when the message names none', () => {
    const failure = workflowTaskFailureIn(history('scheduled', 'completed', 'scheduled', failed(nondeterminism)));
    expect(failure).toEqual({ message: nondeterminism, nondeterministic: true, workflowCodeFailed: false });
    expect(describeResetFor('run_1', failure ?? noFailure)).toContain(
      '--event-id <id> --reason "history no longer replays", <id> being the newest WorkflowTaskCompleted event before',
    );
  });

  it('is none once a later task completed; for another cause, says whether the workflow code failed it', () => {
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
      workflowCodeFailed: true,
    });
    const passing = failed('signal arrived', WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND);
    expect(workflowTaskFailureIn(history('scheduled', 'completed', 'scheduled', passing))).toEqual({
      message: 'signal arrived',
      nondeterministic: false,
      workflowCodeFailed: false,
    });
  });
});

describe('a run that cannot answer, said again with why', () => {
  const unavailable = new RelayError('run_unavailable', "Run 'run_1' cannot answer right now: its last task failed");

  it('names a history that no longer replays and the reset that recovers it, the failure in its details', async () => {
    const failure = { ...noFailure, message: 'TMPRL1100 x', nondeterministic: true, resetEventId: 9 };
    const explained = await explainUnavailable(unavailable, 'run_1', async () => failure);
    expect(explained).toMatchObject({ code: 'run_unavailable', details: { workflowTaskFailure: failure } });
    expect(explained.message).toContain('its history no longer replays');
    expect(explained.message).toContain('temporal workflow reset --workflow-id run_1 --event-id 9');
  });

  it('names the error the workflow code fails its task with', async () => {
    const failure = { ...noFailure, message: 'This code is broken', workflowCodeFailed: true };
    const explained = await explainUnavailable(unavailable, 'run_1', async () => failure);
    expect(explained.message).toBe(
      "Run 'run_1' cannot answer: its workflow task fails on the workers (This code is broken), and they take it " +
        'again until one completes it.',
    );
    expect(explained.cause).toBe(unavailable);
  });

  it('leaves it as it is when no task failed or the failure passes with the next attempt', async () => {
    expect(await explainUnavailable(unavailable, 'run_1', async () => undefined)).toBe(unavailable);
    expect(await explainUnavailable(unavailable, 'run_1', async () => ({ ...noFailure, message: 'x' }))).toBe(
      unavailable,
    );
  });

  it('says so when the history could not be read', async () => {
    const explained = await explainUnavailable(unavailable, 'run_1', () => Promise.reject(new Error('refused')));
    expect(explained).toMatchObject({ code: 'run_unavailable' });
    expect(explained.message).toBe(`${unavailable.message} (its history could not be read to say why: refused)`);
  });
});
