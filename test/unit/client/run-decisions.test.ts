import { AsyncLocalStorage } from 'node:async_hooks';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { describe, expect, it } from 'vitest';
import { decide } from '../../../src/client/run-decisions.js';
import type { DecisionContext } from '../../../src/client/run-decisions.js';
import type { ApprovalOutcome } from '../../../src/shared/run-types.js';

// How a decision meets a run whose workflow task is failing, against a client whose refusals the test chooses: a
// stand-in for Temporal's answers, which no real server gives on cue (a task failed exactly once, then passing). The
// refusing side with real Temporal is in the workflow suites (run-unavailable.test.ts, reset-after-nondeterminism.test.ts).

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const { WorkflowTaskFailedCause } = proto.temporal.api.enums.v1;

/** What Temporal answers an update while the run's last workflow task failed: a gRPC error, as the client sees it. */
function taskFailingRefusal(): Error {
  const message = 'Workflow Task in failed state.';
  return Object.assign(new Error(message), { code: 9, details: message, metadata: {} });
}

const outcome: ApprovalOutcome = { toolCallId: 'call_1_0', toolName: 'transfer_funds', decision: 'approve' };

/**
 * A run of tenant `acme` whose workflow task is at `attempt` (1 when none failed) and whose history is `events`: its
 * first `refusals` updates are refused as a failing task's are, the next is answered with `outcome`.
 */
function runWithFailingTask({
  attempt,
  refusals,
  events,
}: {
  attempt: number;
  refusals: number;
  events: HistoryEvent[];
}) {
  const storage = new AsyncLocalStorage<{ abortSignal?: AbortSignal }>();
  const counts = { updates: 0, historyReads: 0 };
  const handle = {
    describe: async () => ({
      taskQueue: 'q',
      status: { name: 'RUNNING' },
      typedSearchAttributes: { get: () => 'acme' },
      raw: { pendingWorkflowTask: { attempt } },
    }),
    executeUpdate: async () => {
      counts.updates += 1;
      if (counts.updates <= refusals) throw taskFailingRefusal();
      return outcome;
    },
  };
  const temporal = {
    options: { namespace: 'default' },
    connection: { callContextStorage: storage },
    withDeadline: <R>(_deadline: number, fn: () => Promise<R>) => fn(),
    withAbortSignal: <R>(abortSignal: AbortSignal, fn: () => Promise<R>) =>
      storage.run({ ...storage.getStore(), abortSignal }, fn),
    workflow: { getHandle: () => handle },
    workflowService: {
      describeTaskQueue: async () => ({ pollers: [{ identity: 'worker' }] }),
      describeWorkflowExecution: async () => ({ workflowExecutionInfo: {} }),
      getWorkflowExecutionHistory: async () => {
        counts.historyReads += 1;
        return { history: { events } };
      },
    },
  };
  const context = { temporal, taskQueue: 'q', decisionWaitMs: 30_000 } as unknown as DecisionContext;
  const approve = () => decide(context, 'run_1', { toolCallId: 'call_1_0', decision: 'approve' }, { tenantId: 'acme' });
  return { approve, counts };
}

/** A history whose last workflow task failed with `cause` after one completed. */
function failedTaskHistory(cause: number, message: string): HistoryEvent[] {
  return [
    { eventId: 1, workflowTaskScheduledEventAttributes: {} },
    { eventId: 2, workflowTaskCompletedEventAttributes: {} },
    { eventId: 3, workflowTaskScheduledEventAttributes: {} },
    { eventId: 4, workflowTaskFailedEventAttributes: { cause, failure: { message } } },
  ].map((event) => proto.temporal.api.history.v1.HistoryEvent.fromObject(event));
}

const workflowCodeFailure = failedTaskHistory(
  WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE,
  'This workflow code is broken',
);

describe('a decision sent while the run’s workflow task is failing', () => {
  it('is sent again until the task passes when it failed only once, without reading the history', async () => {
    // Even a history that names a lasting failure is not read: one failure may pass at the next attempt.
    const { approve, counts } = runWithFailingTask({ attempt: 2, refusals: 2, events: workflowCodeFailure });
    await expect(approve()).resolves.toEqual(outcome);
    expect(counts).toEqual({ updates: 3, historyReads: 0 });
  });

  it('is refused at once, not recorded, when the task failed twice in a row and the history says it lasts', async () => {
    const { approve, counts } = runWithFailingTask({ attempt: 3, refusals: Infinity, events: workflowCodeFailure });
    await expect(approve()).rejects.toMatchObject({
      code: 'run_unavailable',
      message:
        "Run 'run_1' cannot answer: its workflow task fails on the workers (This workflow code is broken), and they " +
        'take it again until one completes it.\nThe decision was not recorded: decide again once the run answers.',
    });
    expect(counts).toEqual({ updates: 1, historyReads: 1 });
  });

  it('is sent again when the task failed twice in a row for a reason that passes, reading the history once', async () => {
    const passing = failedTaskHistory(
      WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_UNHANDLED_COMMAND,
      'a signal came as the task completed',
    );
    const { approve, counts } = runWithFailingTask({ attempt: 3, refusals: 3, events: passing });
    await expect(approve()).resolves.toEqual(outcome);
    expect(counts).toEqual({ updates: 4, historyReads: 1 });
  });
});
