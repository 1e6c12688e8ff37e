import { setTimeout as sleep } from 'node:timers/promises';
import { WorkflowUpdateFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { decideSignal, decideUpdate } from '../../workflows/messages.js';
import { RelayError, errorCodes } from '../shared/errors.js';
import type { ErrorCode } from '../shared/errors.js';
import type { ApprovalDecision, ApprovalOutcome } from '../shared/run-types.js';
import { maxDecisionReasonLength } from '../shared/run-types.js';
import { askWhileWorkersPoll, noWorkerPollsWhy } from './ask-while-workers-poll.js';
import { callWaitState } from './call-wait-state.js';
import { noWorkerAnsweredIn } from './no-worker-answered.js';
import { readRunEvents } from './read-run.js';
import type { ApproveOptions, TenantScope } from './relay-client.js';
import { callRun, checkTenant, describeInScope, isWorkflowTaskFailing, runHandle, runNotFound } from './run-access.js';
import type { RunAccess } from './run-access.js';
import { explainUnavailable, namesTaskFailure, readWorkflowTaskFailure } from './workflow-task-failure.js';

/** What a decision is sent through: a run's access, and how long the run has to take the decision. */
export interface DecisionContext extends RunAccess {
  readonly decisionWaitMs: number;
}

/**
 * How long a decision waits for the run to take it by default: a run whose workflow task is failing (a worker died
 * mid-task) recovers within this.
 */
const defaultDecisionWaitMs = 60_000;

/** How long a refused decision waits for its call's input check before the refusal stands (decide). */
const callCheckPatienceMs = 10_000;

/** The decision wait a client was given, or the default; anything but a positive number is refused. */
export function checkedDecisionWaitMs(decisionWaitMs: number | undefined): number {
  if (decisionWaitMs === undefined) return defaultDecisionWaitMs;
  if (Number.isFinite(decisionWaitMs) && decisionWaitMs > 0) return decisionWaitMs;
  throw new RelayError(
    'invalid_input',
    `decisionWaitMs must be a positive number of milliseconds, not ${decisionWaitMs}`,
  );
}

/** The fields of a decision its options give: who decided, why, the edited input and the request it was made on. */
export function decisionFields(
  options: ApproveOptions,
): Omit<ApprovalDecision, 'toolCallId' | 'decision' | 'tenantId'> {
  return {
    ...(options.approver !== undefined ? { approver: options.approver } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.requestedAt !== undefined ? { requestedAt: options.requestedAt } : {}),
  };
}

/**
 * Sends an approval or rejection for `RelayClient.approve` and `reject`, and answers once the run has accepted it;
 * a refusal from a run that had not yet seen the call is tried once more when the call comes to wait.
 */
export async function decide(
  context: DecisionContext,
  runId: string,
  decision: ApprovalDecision,
  scope: TenantScope,
): Promise<ApprovalOutcome> {
  refuseOverlongReason(decision);
  // The tenant is checked before sending: the run's own check needs a worker, and without one another tenant would
  // wait. The description names the task queue whose workers take the decision.
  const { taskQueue } = await describeInScope(context, runId, scope);
  const stamped = stampedNow(decision);
  const scoped = scope.tenantId !== undefined ? { ...stamped, tenantId: scope.tenantId } : stamped;
  const send = () => sendDecision({ ...context, taskQueue }, runId, scoped, scope);
  try {
    return await send();
  } catch (error) {
    if (!RelayError.hasCode(error, 'approval_not_pending')) throw error;
    if (!(await comesToWait(context, runId, decision.toolCallId, scope))) throw error;
    // Refused by a run that had not applied the model answer proposing the call yet: Temporal hands a workflow task's
    // updates to the run before its activity results, so a decision sent as soon as a reader saw the call can come
    // in the task that delivers it. The call waits now: the same decision goes once more.
    return send();
  }
}

/** Sends a decision as a signal for `RelayClient.signalDecision`, once its reason and tenant pass the checks here. */
export async function signalDecision(access: RunAccess, runId: string, decision: ApprovalDecision): Promise<void> {
  refuseOverlongReason(decision);
  await checkTenant(access, runId, decision.tenantId !== undefined ? { tenantId: decision.tenantId } : {});
  await callRun(access, runId, () => runHandle(access, runId).signal(decideSignal, stampedNow(decision)));
}

/**
 * Whether the call waits for a decision, once the run has checked its input (an activity, up to
 * {@link callCheckPatienceMs}); false when it never will, has stopped waiting, or the run cannot be read.
 */
async function comesToWait(access: RunAccess, runId: string, toolCallId: string, scope: TenantScope): Promise<boolean> {
  const deadline = Date.now() + callCheckPatienceMs;
  for (;;) {
    const events = await readRunEvents(access, runId, scope).catch(() => undefined);
    const state = events === undefined ? 'not_waiting' : callWaitState(events, toolCallId);
    if (state !== 'on_its_way' || Date.now() > deadline) return state === 'waiting';
    await sleep(200);
  }
}

/**
 * Sends a decision by update and turns the run's refusal into a `RelayError` with the refusal's code; the context's
 * task queue is the run's.
 */
async function sendDecision(
  context: DecisionContext,
  runId: string,
  decision: ApprovalDecision,
  scope: TenantScope,
): Promise<ApprovalOutcome> {
  // Temporal holds an update until a worker takes it: the deadline ends the wait of a run no worker serves, and so
  // does a task queue that lists no worker.
  const deadline = Date.now() + context.decisionWaitMs;
  const update = () => runHandle(context, runId).executeUpdate(decideUpdate, { args: [decision] });
  const noWorker = () => decisionUnanswered(runId, `took no decision: ${noWorkerPollsWhy(context.taskQueue)}`);
  const workers = { taskQueue: context.taskQueue, runId, probe: false };
  const send = () => askWhileWorkersPoll(context, workers, update, noWorker);
  try {
    return await context.temporal.withDeadline(deadline, () =>
      callRun(context, runId, () => retryWhileWorkflowTaskFails(context, runId, send, deadline), scope),
    );
  } catch (error) {
    // Already said: no worker listed, a run stuck for good, or its task failing until the deadline.
    if (RelayError.hasCode(error, 'run_unavailable')) throw error;
    if (noWorkerAnsweredIn(error, deadline)) {
      const waited = `took no decision within ${context.decisionWaitMs / 1000} s: no worker answered.`;
      throw decisionUnanswered(
        runId,
        `${waited} Is a Relay-E worker running on task queue '${context.taskQueue}'?`,
        error,
      );
    }
    // Temporal answers an update to a closed workflow as "not found": tell an ended run from a missing one.
    if (RelayError.hasCode(error, 'run_not_found') && (await hasEnded(context, runId, scope))) {
      throw new RelayError('approval_not_pending', `Run '${runId}' has ended; it takes no more decisions`, {
        details: { toolCallId: decision.toolCallId },
      });
    }
    if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
      const code = toErrorCode(error.cause.type);
      if (code === 'tenant_mismatch') throw runNotFound(runId);
      const issues: unknown = error.cause.details?.[0];
      throw new RelayError(code, error.cause.message, {
        cause: error,
        details: { toolCallId: decision.toolCallId, ...(Array.isArray(issues) ? { issues } : {}) },
      });
    }
    throw error;
  }
}

/**
 * Temporal refuses an update, before recording anything, while the run's last workflow task failed or timed
 * out, which is what a worker killed mid-task leaves behind until another worker picks the run up. The
 * approver should not see that: retry with backoff until it clears or `deadline` passes, unless the run's task has
 * failed twice in a row and its history (read once) says it fails for good.
 */
async function retryWhileWorkflowTaskFails<T>(
  access: RunAccess,
  runId: string,
  call: () => Promise<T>,
  deadline: number,
): Promise<T> {
  let historyRead = false;
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!isWorkflowTaskFailing(error) || Date.now() >= deadline) throw error;
      if (!historyRead && (await failedTwiceInARow(access, runId))) {
        historyRead = true;
        await refuseIfStuck(access, runId);
      }
      await sleep(Math.min(250 * attempt, 2_000));
    }
  }
}

/**
 * Whether the run's workflow task is at its third attempt or later. A task that failed once may pass at its next
 * attempt (a deadlock detected on a loaded worker, a worker with other code); twice in a row is taken as lasting.
 */
async function failedTwiceInARow(access: RunAccess, runId: string): Promise<boolean> {
  const description = await runHandle(access, runId)
    .describe()
    .catch(() => undefined);
  return (description?.raw.pendingWorkflowTask?.attempt ?? 0) >= 3;
}

/**
 * Fails the decision at once when the run's workflow task fails in a way no retry passes (its history no longer
 * replays, or its workflow code throws), saying why and what recovers it. A history that cannot be read is no
 * answer: the retries go on, and their end says the run could not answer.
 */
async function refuseIfStuck(access: RunAccess, runId: string): Promise<void> {
  const unanswered = new RelayError('run_unavailable', `Run '${runId}' cannot take a decision`);
  const explained = await explainUnavailable(unanswered, runId, () => readWorkflowTaskFailure(access, runId));
  if (!namesTaskFailure(explained)) return;
  throw new RelayError(
    'run_unavailable',
    `${explained.message}\nThe decision was not recorded: decide again once the run answers.`,
    { cause: explained, ...(explained.details ? { details: explained.details } : {}) },
  );
}

/**
 * A decision no worker took (`why`: within `decisionWaitMs`, or before its task queue was found to list no worker), as
 * `run_unavailable`. Temporal keeps it for the run: a worker that picks the run up later may still apply it.
 */
function decisionUnanswered(runId: string, why: string, cause?: unknown): RelayError {
  return new RelayError(
    'run_unavailable',
    `Run '${runId}' ${why} Temporal keeps the decision, and a worker that takes the run later may still apply it: ` +
      'read the run before deciding again.',
    cause === undefined ? undefined : { cause },
  );
}

/**
 * True when the run exists, belongs to the scope's tenant (if any) and is no longer running; false when it does not
 * exist for the scope. Any other failure to describe it is thrown, not taken for an answer.
 */
async function hasEnded(access: RunAccess, runId: string, scope: TenantScope): Promise<boolean> {
  try {
    return (await describeInScope(access, runId, scope)).status.name !== 'RUNNING';
  } catch (error) {
    if (RelayError.hasCode(error, 'run_not_found')) return false;
    throw error;
  }
}

function toErrorCode(type: string | undefined | null): ErrorCode {
  return (errorCodes as readonly string[]).includes(type ?? '') ? (type as ErrorCode) : 'invalid_input';
}

/** Refuses a reason the run would cut short: it keeps (and the model reads) only its first characters. */
function refuseOverlongReason({ reason, toolCallId }: ApprovalDecision): void {
  if (reason === undefined || reason.length <= maxDecisionReasonLength) return;
  throw new RelayError(
    'invalid_input',
    `A decision's reason is at most ${maxDecisionReasonLength} characters, not ${reason.length}`,
    { details: { toolCallId } },
  );
}

/** A decision stamped with this client's clock unless it says when it was sent (the run records that time). */
function stampedNow(decision: ApprovalDecision): ApprovalDecision {
  return { decidedAt: new Date().toISOString(), ...decision };
}
