import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import type { RunSnapshot } from '../shared/run-types.js';
import type { RelayClient, TenantScope } from './relay-client.js';
import type { RunAccess } from './run-access.js';
import { readHistory } from './read-history.js';
import { errorMessage } from '../shared/error-message.js';
import { RelayError } from '../shared/errors.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const { WorkflowTaskFailedCause } = proto.temporal.api.enums.v1;
const nondeterministicCause = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR;
const workflowCodeCause = WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_WORKFLOW_WORKER_UNHANDLED_FAILURE;

/** Why a run's workflow task fails, read from its history: what an operator needs when the run cannot answer. */
export interface WorkflowTaskFailure {
  /** The failure's message, as the worker reported it. */
  message: string;
  /** Whether the workers' code no longer gives the commands the run's history recorded (`TMPRL1100`). */
  nondeterministic: boolean;
  /**
   * Whether the workflow code itself failed the task (an error it threw, `WORKFLOW_WORKER_UNHANDLED_FAILURE`), which
   * the workers repeat on every attempt until their code changes; other causes (a signal arriving as the task
   * completed, a sticky queue reset) pass with the next attempt.
   */
  workflowCodeFailed: boolean;
  /**
   * For a nondeterministic failure whose message names an event: the `WorkflowTaskCompleted` event before it, the
   * task whose commands the replay no longer gives, which the run is reset to (docs/operations.md).
   */
  resetEventId?: number;
}

/**
 * The failure of the run's current workflow task, when its newest task failed and none has completed since; else
 * undefined. Reads the whole history, in pages a run at the payload limits fits (readHistory): this is for an
 * operator looking at one stuck run, not for a poller.
 */
export async function readWorkflowTaskFailure(
  access: RunAccess,
  runId: string,
): Promise<WorkflowTaskFailure | undefined> {
  return workflowTaskFailureIn((await readHistory(access.temporal, runId)).events ?? []);
}

/** The failure of the workflow task a history ends in, if its newest task failed and none has completed since. */
export function workflowTaskFailureIn(events: readonly HistoryEvent[]): WorkflowTaskFailure | undefined {
  const lastCompleted = events.findLastIndex((event) => event.workflowTaskCompletedEventAttributes);
  const failed = events.slice(lastCompleted + 1).findLast((event) => event.workflowTaskFailedEventAttributes);
  const attributes = failed?.workflowTaskFailedEventAttributes;
  if (!attributes) return undefined;
  const message = attributes.failure?.message ?? '';
  if (attributes.cause !== nondeterministicCause) {
    return { message, nondeterministic: false, workflowCodeFailed: attributes.cause === workflowCodeCause };
  }
  const named = namedEventId(message);
  const resetEventId = named === undefined ? undefined : taskCompletedBefore(events, named);
  return {
    message,
    nondeterministic: true,
    workflowCodeFailed: false,
    ...(resetEventId !== undefined ? { resetEventId } : {}),
  };
}

/** The event a nondeterminism error names, as sdk-core writes it: `… HistoryEvent(id: 26, …)`. */
function namedEventId(message: string): number | undefined {
  const named = /HistoryEvent\(id: (\d+)/.exec(message);
  return named ? Number(named[1]) : undefined;
}

function taskCompletedBefore(events: readonly HistoryEvent[], eventId: number): number | undefined {
  const completed = events.findLast(
    (event) => event.workflowTaskCompletedEventAttributes && Number(event.eventId) < eventId,
  );
  return completed ? Number(completed.eventId) : undefined;
}

/**
 * The command that resets a run stuck on `failure`, or how to find its event when the message names none (see
 * docs/operations.md, "A run whose history no longer replays").
 */
export function describeResetFor(runId: string, failure: WorkflowTaskFailure): string {
  const eventId = failure.resetEventId === undefined ? '<id>' : String(failure.resetEventId);
  const where =
    failure.resetEventId === undefined
      ? ', <id> being the newest WorkflowTaskCompleted event before the event the message names'
      : '';
  return `temporal workflow reset --workflow-id ${runId} --event-id ${eventId} --reason "history no longer replays"${where}`;
}

/**
 * Rethrows `error`, a read of the run that found it unable to answer (`run_unavailable`), as {@link explainUnavailable}
 * says it; any other error as it is.
 */
export async function rethrowNamingTaskFailure(
  error: unknown,
  runId: string,
  readFailure: () => Promise<WorkflowTaskFailure | undefined>,
): Promise<never> {
  if (!RelayError.hasCode(error, 'run_unavailable')) throw error;
  throw await explainUnavailable(error, runId, readFailure);
}

/**
 * The run's snapshot, or why it cannot answer ({@link explainUnavailable}): for one read a person waits on (the API's
 * read of a run, the inbox's run page), not for a poller, since a run that cannot answer has its history read.
 */
export async function getRunNamingTaskFailure(
  client: Pick<RelayClient, 'getRun' | 'workflowTaskFailure'>,
  runId: string,
  scope: TenantScope,
): Promise<RunSnapshot> {
  return client
    .getRun(runId, scope)
    .catch((error: unknown) => rethrowNamingTaskFailure(error, runId, () => client.workflowTaskFailure(runId, scope)));
}

/**
 * `unavailable` (`run_unavailable`) said again with why, when the run's workflow task fails: a history that no longer
 * replays with the reset that recovers it, or the error the workflow code fails it with; as it is otherwise (no worker
 * polls, or a failure that passes with the next attempt). `readFailure` reads the failure
 * ({@link readWorkflowTaskFailure}); a read that fails is said too.
 */
export async function explainUnavailable(
  unavailable: RelayError,
  runId: string,
  readFailure: () => Promise<WorkflowTaskFailure | undefined>,
): Promise<RelayError> {
  let failure: WorkflowTaskFailure | undefined;
  try {
    failure = await readFailure();
  } catch (readError) {
    const why = `its history could not be read to say why: ${errorMessage(readError)}`;
    return new RelayError('run_unavailable', `${unavailable.message} (${why})`, { cause: unavailable });
  }
  if (failure === undefined || (!failure.nondeterministic && !failure.workflowCodeFailed)) return unavailable;
  // The failure rides in the details, which is how a caller tells a named failure (namesTaskFailure).
  const details = { details: { workflowTaskFailure: failure } };
  if (failure.workflowCodeFailed) {
    return new RelayError(
      'run_unavailable',
      `Run '${runId}' cannot answer: its workflow task fails on the workers (${failure.message}), ` +
        'and they take it again until one completes it.',
      { cause: unavailable, ...details },
    );
  }
  return new RelayError(
    'run_unavailable',
    `Run '${runId}' cannot answer: its history no longer replays with the workers' code (${failure.message}). ` +
      `Reset it to the workflow task before that event (docs/operations.md says what a reset does again):\n` +
      `  ${describeResetFor(runId, failure)}`,
    { cause: unavailable, ...details },
  );
}

/** Whether `error`, from {@link explainUnavailable}, names a workflow task failure that lasts until someone acts. */
export function namesTaskFailure(error: RelayError): boolean {
  return error.details?.['workflowTaskFailure'] !== undefined;
}
