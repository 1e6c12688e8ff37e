import {
  ActivityCancellationType,
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { Duration } from '@temporalio/common';
import type {
  ExecuteToolInput,
  Recorded,
  RelayActivities,
  ToolCallInputCheck,
  ToolInputVerdict,
} from '../activities/index.js';
import { boundEchoedInput } from '../src/shared/payload-limits.js';
import { approvalHints, maximumAttemptsOf, retriesTimeouts, toolActivitySummary } from '../src/shared/tool-catalog.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import { withEffectWarning } from '../src/shared/tool-result.js';
import type { ToolFailure, ToolResult } from '../src/shared/tool-result.js';
import type { ToolCall } from '../src/shared/transcript.js';
import type { PendingApproval } from '../src/shared/run-types.js';
import type { RunContext } from './run-context.js';
import type { CallBeingChecked, UnfinishedCall } from './run-state.js';
import type { ToolCallCheck } from './tool-call-validator.js';
import type { AcceptedDecision } from './approvals.js';
import { decisionSentAt, emitDecision } from './decision-events.js';
import { readRecordedTime, usesRecordedTime } from './recorded-clock.js';
import { recordedOrNow } from './run-state.js';
import { publishRunState } from './run-visibility.js';
import { notifyApprovalDecided, notifyApprovalExpiring, notifyApprovalRequested } from './approval-notices.js';
import { describeFailure } from './describe-failure.js';

const inputCheckOptions = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 3 } } as const;
const { checkToolCallInput: checkToolCallInputLocally } = proxyLocalActivities<RelayActivities>(inputCheckOptions);
// A regular activity under the reads-from-history patch: its result lands in history in order with the other calls'
// results, while a local activity's can be delivered in another workflow task live than on replay, which could
// reorder a parallel call's events. A call that needs approval waits for a human anyway, so the round trip is cheap.
const { checkToolCallInput } = proxyActivities<RelayActivities>(inputCheckOptions);

/**
 * Handles every call of one step at once; the results come back in call order. `at` is when the model's answer
 * that proposed them was recorded.
 */
export function handleToolCalls(context: RunContext, calls: readonly ToolCall[], at?: string): Promise<ToolResult[]> {
  // One call, the common case, in one promise rather than Promise.all's two (see handleToolCall on why it counts).
  const [only] = calls;
  if (only && calls.length === 1) {
    context.callsOfStep = undefined;
    return handleToolCall(context, only, at).then((result) => [result]);
  }
  // A scope of their own, so a run failing by one of them can stop the others (stopCallsOfFailingStep); cancelling
  // the run still cancels it, and making one records nothing in history. The scope only gives the calls its context:
  // its own promise is left aside, since waiting on it would move the step's next commands after other continuations
  // of the same workflow task, and runs recorded before would replay in another order.
  const scope = new CancellationScope();
  let handled: Array<Promise<ToolResult>> = [];
  void scope.run(() => {
    handled = calls.map((call) => handleToolCall(context, call, at));
    return Promise.resolve();
  });
  context.callsOfStep = { settled: Promise.allSettled(handled), scope };
  return Promise.all(handled);
}

/**
 * Waits, in a cancelled run, until every call of the step has ended: a step's only call ends before the run sees the
 * cancellation (its activity waits for the tool to acknowledge it), but of several the first to stop would end the
 * step. Under the rule `cancelled-run-waits-for-running-calls`, asked only where a call still runs.
 */
export async function runningCallsEnded(context: RunContext): Promise<void> {
  const step = context.callsOfStep;
  if (!step || !context.run.unfinishedCalls().some(({ stage }) => stage === 'executing')) return;
  if (context.patches.cancelledRunWaitsForRunningCalls()) await step.settled;
}

/**
 * Stops the calls of the step still running or having their input checked when one of them fails the run, and waits
 * until each has ended, under the rule `failed-run-stops-running-calls` (asked only where such a call is left): their
 * tools see `ctx.signal` abort, as in a cancelled run, and the run's record ends each. Resolves to the calls whose
 * activities the stop cut short, for their `tool_cancelled` events (a call whose tool finished anyway has recorded its
 * own result); undefined where nothing is stopped, so a run with nothing to stop closes without an await more.
 */
export function stopCallsOfFailingStep(
  context: RunContext,
): Promise<Array<UnfinishedCall | CallBeingChecked>> | undefined {
  const { run } = context;
  const step = context.callsOfStep;
  const stillGoing = () => [
    ...run.unfinishedCalls().filter(({ stage }) => stage === 'executing'),
    ...run.callsBeingChecked(),
  ];
  if (!step || stillGoing().length === 0 || !context.patches.failedRunStopsRunningCalls()) return undefined;
  step.scope.cancel();
  return step.settled.then(stillGoing);
}

/**
 * Validate, wait for approval when the tool requires it, then execute: one call's whole path, as data. Not async
 * where no human is asked: the SDK records a stack trace for every promise a workflow makes, and an async layer here
 * would add two a call. A check that throws rejects, as an async function would, so the other calls still run.
 */
function handleToolCall(context: RunContext, call: ToolCall, proposedAt?: string): Promise<ToolResult> {
  const { run } = context;
  let check: ToolCallCheck;
  try {
    check = context.validator.check(call.name, call.input);
  } catch (error) {
    // The validator throws Errors only (a recorded schema that does not compile, a fault in checking).
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
  const ids = callIds(call);
  if (!check.valid) return Promise.resolve(refuseInput(context, call, check, proposedAt));
  const { requiresApproval, approvalByRule } = check.entry;
  // A rule's answer comes with the input check that follows: until then the call only may need a human.
  const byRule = approvalByRule ? { approvalByRule } : {};
  run.emit(
    { type: 'tool_call_validated', ...ids, input: check.input, requiresApproval, ...byRule },
    { at: proposedAt },
  );
  if (!requiresApproval) return executeToolCall(context, check.entry, call, check.input);
  return executeAfterApproval(context, check.entry, call, check.input, proposedAt);
}

/** A call whose tool requires approval: its input checked by the tool's own schema, then a human's decision. */
async function executeAfterApproval(
  context: RunContext,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
  proposedAt: string | undefined,
): Promise<ToolResult> {
  let checkedAt = proposedAt;
  if (context.exact) {
    // The JSON Schema passed; the tool's own schema (refinements) may still refuse it. A human is never asked to
    // approve an input the tool would refuse.
    context.run.checkStarted(call);
    let verdict: ToolInputVerdict;
    try {
      verdict = await checkInputOfCall(context, entry, call, input);
    } catch (error) {
      // A check that failed for good fails the run and ends its call: only a check still going is stopped with the
      // step (stopCallsOfFailingStep). A try, not a `catch`: one more promise would move this call's next event.
      if (!isCancellation(error)) context.run.callEnded(call.id);
      throw error;
    }
    checkedAt = verdict.at;
    if (!verdict.valid) {
      context.run.callEnded(call.id);
      return refuseInput(context, call, verdict, checkedAt);
    }
    // Only a rule's recorded `false` skips the human: catalogs and verdicts recorded before rules carry none.
    if (verdict.approvalNeeded === false) {
      context.run.emit({ type: 'tool_approval_not_required', ...callIds(call) }, { at: checkedAt });
      return executeToolCall(context, entry, call, input);
    }
  }
  const approval = await awaitApproval(context, entry, call, input, checkedAt);
  if (!approval.approved) return approval.failure;
  return executeToolCall(context, entry, call, approval.input);
}

/**
 * Checks a call's input with the tool's own schema (see checkToolCallInput for which kind of activity), and asks the
 * tool's approval rule when it has one.
 */
function checkInputOfCall(
  { run, patches }: RunContext,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
): Promise<ToolInputVerdict> {
  const asked: ToolCallInputCheck = { toolName: call.name, input };
  if (entry.approvalByRule) asked.approvalRuleContext = { ...run.actingFor, runId: run.runId, toolCallId: call.id };
  return patches.readsFromHistory() ? checkToolCallInput(asked) : checkToolCallInputLocally(asked);
}

/**
 * Checks an approver's edited input with the tool's own schema (its refinements too), as a call's input is checked
 * before a human is asked; the tool's approval rule is not asked again. Not cancelled with the run: the decision
 * that waits for it still gets its answer.
 */
export function checkEditedInput(toolName: string, input: unknown): Promise<ToolInputVerdict> {
  return CancellationScope.nonCancellable(() => checkToolCallInput({ toolName, input }));
}

/** Tells the model the call's input was refused; no activity runs. */
function refuseInput(
  context: RunContext,
  call: ToolCall,
  refusal: { errorType: 'validation' | 'not_found'; error: string; issues: ToolFailure['issues'] & object },
  at: string | undefined,
): ToolFailure {
  const ids = callIds(call);
  // The call itself is in the transcript already; an echo of a huge input would only double it.
  const input = boundEchoedInput(call.input);
  const { error, errorType, issues } = refusal;
  context.run.emit({ type: 'tool_validation_failed', ...ids, error, issues, input }, { at });
  return { success: false, ...ids, error, errorType, issues, input };
}

/** Who may decide a call and how many must approve, for its awaiting event, in runs that record them there. */
function approversNamed(
  context: RunContext,
  entry: ToolCatalogEntry,
): { approvers?: string[]; approvalsRequired?: number } {
  const { approvers, approvalsRequired } = entry;
  if (!approvers && !approvalsRequired) return {};
  if (!context.patches.awaitingEventNamesApprovers()) return {};
  return { ...(approvers ? { approvers } : {}), ...(approvalsRequired ? { approvalsRequired } : {}) };
}

type ApprovalWait = { approved: true; input: unknown } | { approved: false; failure: ToolFailure };

async function awaitApproval(
  context: RunContext,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
  checkedAt: string | undefined,
): Promise<ApprovalWait> {
  const { run } = context;
  const ids = callIds(call);
  // Where the tool comes from and whether it may destroy data, shown to the approver (MCP tools).
  const hints = approvalHints(entry);
  const requestedAt = recordedOrNow(checkedAt);
  const waitMs = approvalWaitMs(context, entry);
  const expiresAt = new Date(Date.parse(requestedAt) + waitMs).toISOString();
  // Who may decide, when the tool says: the approval book refuses anyone else (approvals.ts).
  const approvers = entry.approvers ? { approvers: entry.approvers } : {};
  // How many must approve, when more than one: the approval book counts them (approvals.ts).
  const several = entry.approvalsRequired ? { approvalsRequired: entry.approvalsRequired, approvals: [] } : {};
  const pending = { ...ids, ...hints, input, step: run.step, requestedAt, expiresAt, ...approvers, ...several };
  run.awaitApproval(pending);
  run.callStarted(call, 'awaiting_approval');
  const deciders = approversNamed(context, entry);
  run.emit({ type: 'tool_awaiting_approval', ...ids, ...hints, ...deciders, input, expiresAt }, { at: requestedAt });
  publishRunState(context);
  // Only a catalog recorded by a worker with an approval webhook says so: runs recorded without one replay as they were.
  if (entry.notifiesApprovers) notifyApprovalRequested(context, pending);

  const decidedInTime = await waitForDecision(context, entry, pending, waitMs);
  stopIfEndedByRun(context, call);
  // A decision the update accepted is the one applied, even when the timeout fired in the same activation.
  const decision = context.exact || decidedInTime ? run.approvals.decisionFor(call.id) : undefined;
  if (decision?.approved) stopIfCancelledBeforeExecuting(context);
  const recordedAt =
    decision && readsApprovalTimeWhileWaiting(context, decision)
      ? await recordApprovalWhileWaiting(context, ids, decision)
      : decision?.recordedAt;
  run.settleApproval(call.id);
  run.callEnded(call.id);
  publishRunState(context);
  // When the wait ended: the decision's event (recorded by its handler, else here at a time history records), or
  // the timeout's just below. The awaits are those from before handlers recorded any, so older runs replay alike.
  const endedAt = decision
    ? (recordedAt ?? emitDecision(run, ids, decision, await decisionTime(context, decision)))
    : expiresAt;
  if (entry.notifiesApprovers) notifyApprovalDecided(context, pending, decision, endedAt);

  if (!decision) {
    // The timer fired at expiresAt: the time its wait ended, whichever task delivered it.
    run.emit({ type: 'tool_approval_timed_out', ...ids, expiresAt }, { at: expiresAt });
    const error = `No decision on this call before ${expiresAt}: it was not executed.`;
    return { approved: false, failure: { success: false, ...ids, error, errorType: 'approval_timeout' } };
  }
  if (!decision.approved) {
    const reason = context.exact && decision.reason ? ` Their reason: ${decision.reason}` : '';
    const error = `A human rejected this call: it was not executed.${reason}`;
    return { approved: false, failure: { success: false, ...ids, error, errorType: 'rejected' } };
  }
  return { approved: true, input: decision.input };
}

/**
 * Leaves a wait the closing run has already ended (its `tool_cancelled` is the run's to record) without an event, a
 * state change or a notice, under the rule `wait-ended-by-run-stays-ended`: the run settled the call, so "no
 * decision" here does not mean the wait timed out. The closing run no longer reads the step's results, so nothing
 * reads what this throws.
 */
function stopIfEndedByRun(context: RunContext, call: ToolCall): void {
  if (!context.run.approvals.wasEndedByRun(call.id) || !context.patches.waitEndedByRunStaysEnded()) return;
  throw ApplicationFailure.create({
    type: 'wait_ended_by_run',
    message: `The run ended the wait of call '${call.id}' as it closed`,
    nonRetryable: true,
  });
}

/**
 * Whether the closing run ended `pending`'s wait before its reminder was due, under the rule
 * `no-reminder-after-run-ended-wait`; asked only then, so runs that sent such a reminder replay it.
 */
function endedByRunBeforeReminder(context: RunContext, pending: PendingApproval): boolean {
  return context.run.approvals.wasEndedByRun(pending.toolCallId) && context.patches.noReminderAfterRunEndedWait();
}

/**
 * Ends an approved call's wait as a cancellation while the call still counts as awaiting approval, under the rule
 * `approval-beside-cancellation-never-executes`: an approval taken in the workflow task that cancels the run would
 * mark the call executing, though its tool can no longer be scheduled.
 */
function stopIfCancelledBeforeExecuting(context: RunContext): void {
  if (!CancellationScope.current().consideredCancelled) return;
  if (context.patches.approvalBesideCancellationNeverExecutes()) throw new CancelledFailure('Workflow cancelled');
}

/**
 * Whether `decision` is an approval whose time only a worker's clock can give (its client sent none), under the rule
 * `approval-time-read-while-waiting` (asked only then): the call keeps waiting while the clock is read.
 */
function readsApprovalTimeWhileWaiting(context: RunContext, decision: AcceptedDecision): boolean {
  if (!decision.approved || decision.recordedAt !== undefined) return false;
  // As decisionSentAt answers, without asking the rule it may ask later (decision-time-bounded-by-task) any sooner.
  const sentAtKnown =
    decision.datedAt !== undefined || (decision.decidedAt !== undefined && context.patches.decisionTimeFromDecider());
  return !sentAtKnown && context.patches.approvalTimeReadWhileWaiting();
}

/**
 * Records an approval at a time a clock activity reads, its call still waiting: a cancellation that arrives during
 * the read ends the call as awaiting approval (stopIfCancelledBeforeExecuting), as one beside the approval does.
 */
async function recordApprovalWhileWaiting(
  context: RunContext,
  ids: { toolCallId: string; toolName: string },
  decision: AcceptedDecision,
): Promise<string> {
  const at = emitDecision(context.run, ids, decision, await readRecordedTime());
  stopIfCancelledBeforeExecuting(context);
  return at;
}

/**
 * Waits up to `waitMs` for a decision on `pending`, and says whether one came. When the run's catalog says to remind
 * approvers (a lead time shorter than the wait), the wait is split there, and a call still waiting then gets its
 * `approval.expiring` notice; catalogs recorded without a lead time wait in one piece, as they did.
 */
async function waitForDecision(
  context: RunContext,
  entry: ToolCatalogEntry,
  pending: PendingApproval,
  waitMs: number,
): Promise<boolean> {
  const decided = () => context.run.approvals.decisionFor(pending.toolCallId) !== undefined;
  const summary = `approval of ${pending.toolName} (${pending.toolCallId})`;
  const wait = (ms: number) => (context.exact ? condition(decided, ms, { summary }) : condition(decided, ms));
  // Catalogs carry a lead time only beside notifiesApprovers; the check keeps a run from splitting a wait for nothing.
  const leadMs = entry.notifiesApprovers ? entry.remindApproversBeforeMs : undefined;
  if (leadMs === undefined || leadMs >= waitMs) return wait(waitMs);
  // A decision taken in the activation the reminder's timer fired in needs no reminder.
  if ((await wait(waitMs - leadMs)) || decided()) return true;
  // Its approvers were told the call was withdrawn; the caller leaves the wait (stopIfEndedByRun).
  if (endedByRunBeforeReminder(context, pending)) return false;
  notifyApprovalExpiring(context, pending);
  return wait(leadMs);
}

/**
 * How long a call waits for a decision: its tool's own limit when the catalog recorded one (never longer than a limit
 * the run set itself), else the run's. Catalogs recorded before tools had limits wait the run's.
 */
function approvalWaitMs(context: RunContext, entry: ToolCatalogEntry): number {
  const toolLimit = entry.approvalTimeoutMs;
  if (toolLimit === undefined) return context.approvalTimeoutMs;
  return context.run.input.approvalTimeout === undefined ? toolLimit : Math.min(toolLimit, context.approvalTimeoutMs);
}

/**
 * Runs the tool's activity and records its result. Not async, for the reason handleToolCall gives: one `then` makes
 * one promise where an async function and its await make two.
 */
function executeToolCall(
  context: RunContext,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
): Promise<ToolResult> {
  const { run } = context;
  const { executeTool } = proxyActivities<RelayActivities>(toolActivityOptions(entry));
  run.callStarted(call, 'executing');
  const request: ExecuteToolInput = {
    toolName: call.name,
    toolCallId: call.id,
    input,
    idempotencyKey: idempotencyKeyFor(context, call),
    ...run.actingFor,
    runId: run.runId,
    ...toolCallOptions(context, entry),
  };
  return executeTool.executeWithOptions({ summary: toolActivitySummary(entry, call.id) }, [request]).then(
    (result) => recordToolResult(context, call, result),
    (error: unknown) => recordToolActivityFailure(context, call, error),
  );
}

/** A tool activity that failed for good: the failure is the call's result, at the recorded time where the run uses it. */
async function recordToolActivityFailure(context: RunContext, call: ToolCall, error: unknown): Promise<ToolResult> {
  if (isCancellation(error)) throw error;
  const ids = callIds(call);
  const failure =
    activityTimedOut(error) && context.patches.toolActivityTimeoutTold()
      ? { success: false as const, ...ids, error: timedOutActivityError(error), errorType: 'timeout' as const }
      : { success: false as const, ...ids, error: describeFailure(error), errorType: 'execution' as const };
  const at = usesRecordedTime(context) ? await readRecordedTime() : undefined;
  return recordToolResult(context, call, { ...failure, at });
}

/** Temporal stopped waiting for the activity (no heartbeat, or past its timeout): its worker died or hung mid-tool. */
function activityTimedOut(error: unknown): error is ActivityFailure {
  return error instanceof ActivityFailure && error.cause instanceof TimeoutFailure;
}

/** As the executor words its own timeouts: the model must not take the call for one that did nothing. */
function timedOutActivityError(error: ActivityFailure): string {
  return withEffectWarning(describeFailure(error), 'its worker stopped answering while it ran');
}

function recordToolResult(context: RunContext, call: ToolCall, result: Recorded<ToolResult>): ToolResult {
  const { run } = context;
  const ids = callIds(call);
  run.callEnded(call.id);
  const { at, ...toolResult } = result;
  if (toolResult.success) {
    const truncated = toolResult.truncated ? { truncated: true } : {};
    run.emit({ type: 'tool_succeeded', ...ids, output: toolResult.data, ...truncated }, { at });
  } else {
    run.emit({ type: 'tool_failed', ...ids, error: toolResult.error, errorType: toolResult.errorType }, { at });
  }
  return toolResult;
}

/**
 * The run's config and the tool's timeout rule; under the lean-history rules, only what differs from the defaults, and a
 * large output kept by reference.
 */
function toolCallOptions(
  context: RunContext,
  entry: ToolCatalogEntry,
): Pick<ExecuteToolInput, 'config' | 'retryTimeouts' | 'outputByReference'> {
  const config = context.run.input.config ?? {};
  const retryTimeouts = retriesTimeouts(entry);
  if (!context.patches.leanHistory()) {
    return { config, ...(context.exact ? { retryTimeouts } : {}) };
  }
  return {
    ...(Object.keys(config).length > 0 ? { config } : {}),
    ...(retryTimeouts ? { retryTimeouts } : {}),
    outputByReference: true,
  };
}

/** The ids every event and result of a call carries. */
function callIds(call: ToolCall): { toolCallId: string; toolName: string } {
  return { toolCallId: call.id, toolName: call.name };
}

/**
 * Unique to one call of one run: the run id alone repeats when a workflow id is used again, so the first
 * execution's Temporal run id (the same across continue-as-new) is part of it.
 */
function idempotencyKeyFor(context: RunContext, call: ToolCall): string {
  const { run } = context;
  return context.exact ? `${run.runId}/${workflowInfo().firstExecutionRunId}/${call.id}` : `${run.runId}/${call.id}`;
}

/** The grace the activity's own timeout leaves after the tool's, so the executor's timeout always ends it first. */
const activityTimeoutGraceMs = 5_000;

/**
 * Tools that require approval are not retried unless they say so: a human approved one execution. The
 * activity waits for the tool to acknowledge a cancellation so that `ctx.signal` really fires before the
 * run reports itself cancelled.
 */
function toolActivityOptions(entry: ToolCatalogEntry): ActivityOptions {
  const retry = entry.retry ?? {};
  return {
    startToCloseTimeout: (entry.timeoutMs ?? 10 * 60_000) + activityTimeoutGraceMs,
    heartbeatTimeout: '5 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      maximumAttempts: maximumAttemptsOf(entry),
      initialInterval: msToNumber((retry.initialInterval ?? '1 second') as Duration),
      backoffCoefficient: retry.backoffCoefficient ?? 2,
      maximumInterval: msToNumber((retry.maximumInterval ?? '30 seconds') as Duration),
    },
  };
}

/** The time a decision's event is stamped with: the one its client sent (decisionSentAt), else a worker's. */
function decisionTime(context: RunContext, decision: AcceptedDecision): Promise<string> | string {
  return decisionSentAt(context, decision) ?? readRecordedTime();
}
