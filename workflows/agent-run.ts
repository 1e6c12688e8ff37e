import {
  ActivityFailure,
  ApplicationFailure,
  CancellationScope,
  CancelledFailure,
  condition,
  ContinueAsNew,
  continueAsNew,
  allHandlersFinished,
  isCancellation,
  log,
  proxyActivities,
  upsertMemo,
  TemporalFailure,
  TimeoutFailure,
  workflowInfo,
} from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { Recorded, RelayActivities } from '../activities/index.js';
import type { AgentRunInput, RunResult } from '../src/shared/run-types.js';
import { agentRunInputSchema } from '../src/shared/run-input-schema.js';
import { closedRunMemo, closedRunMemoKey, closedRunRecord } from '../src/shared/closed-run-record.js';
import { checkToolInput } from '../src/shared/tool-input.js';
import { compactTranscript, defaultMaxTranscriptBytes } from '../src/shared/transcript-budget.js';
import { modelToolSpecs } from '../src/shared/tool-catalog.js';
import type { CatalogSnapshot } from '../src/shared/tool-catalog.js';
import type { ToolResult } from '../src/shared/tool-result.js';
import type {
  ModelCallResult,
  ModelContextRequest,
  ModelRequest,
  ModelResponse,
  ToolCall,
} from '../src/shared/transcript.js';
import { defaultModelCallStartMs } from '../src/shared/transcript.js';
import { ModelContextTracker } from './model-context.js';
import { answerMessage, assignLegacyCallIds } from '../src/shared/call-ids.js';
import { readRecordedTime, usesRecordedTime } from './recorded-clock.js';
import { decisionsBeingDated, registerRunHandlers } from './run-handlers.js';
import { RunState } from './run-state.js';
import type { CallBeingChecked, CarriedRunState, UnfinishedCall } from './run-state.js';
import { boundCarriedState } from './carried-state.js';
import type { CompactionLog } from './carried-state.js';
import { describeFailure } from './describe-failure.js';
import { handleToolCalls, runningCallsEnded, stopCallsOfFailingStep } from './tool-calls.js';
import type { RunContext } from './run-context.js';
import { publishRunState, publishRunStateIfChanged } from './run-visibility.js';
import { modelContextTools, receiveCatalog, recordRefusal, RunRefused, startRun } from './run-start.js';
import { decideRunPatches } from './run-patches.js';
import { noRunNotices, noticesDelivered, withdrawWaitingCalls } from './approval-notices.js';
import { ToolCallValidator } from './tool-call-validator.js';

const { callModel } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/** Default time a call may wait for a human decision. */
const defaultApprovalTimeout = '24h';

/**
 * One durable agent run: call the model, check every proposed tool call against the run's catalog, wait for a
 * human where a tool requires approval, execute the rest as activities, feed the results back, and repeat until
 * the model answers in text or the step budget is spent.
 */
export async function agentRun(input: AgentRunInput, carried?: CarriedRunState): Promise<RunResult> {
  checkRunInput(input);
  const patches = decideRunPatches();
  const context: RunContext = {
    run: new RunState(workflowInfo().workflowId, input, carried),
    exact: patches.exact,
    patches,
    validator: new ToolCallValidator(carried?.catalog ?? [], patches),
    approvalTimeoutMs: msToNumber(input.approvalTimeout ?? defaultApprovalTimeout),
    notices: noRunNotices(),
    ignoredDecisionsRecorded: 0,
    datingDecisions: new Set(),
    ...(patches.modelContextByReference() ? { modelContext: new ModelContextTracker(patches.leanHistory()) } : {}),
  };
  registerRunHandlers(context);
  try {
    if (!carried) await startRun(context);
    return await runSteps(context);
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (error instanceof RunRefused) throw recordRefusal(context, error);
    if (isCancellation(error)) {
      await recordCancellation(context);
      throw error;
    }
    throw await recordFailure(context, error);
  } finally {
    recordClosedRun(context);
  }
}

/**
 * Leaves the final snapshot and the newest events in the run's memo when it closes, so a closed run reads without a
 * worker (queries need one); deflated when long (see closedRunMemo). A run that continues as new has no stop reason
 * yet and records nothing.
 */
function recordClosedRun({ run, patches }: RunContext): void {
  if (run.stopReason === undefined || !patches.closedRunRecord()) return;
  const outputInResult = patches.closedRunOutputInResult();
  const record = closedRunRecord(run.snapshot(), run.keptEvents(), { outputInResult });
  upsertMemo({ [closedRunMemoKey]: patches.deflatedClosedRunRecord() ? closedRunMemo(record) : record });
}

/** The loop: one step after another until the model answers, the budget is spent, or the run continues as new. */
async function runSteps(context: RunContext): Promise<RunResult> {
  const { run } = context;
  const stepsAtStart = run.step;
  for (;;) {
    if (run.step >= run.maxSteps) {
      const dating = decisionsBeingDated(context);
      if (dating) await dating;
      if (context.notices.inFlight.size > 0) await noticesDelivered(context);
      return finishRun(context, 'max_steps', { at: run.latestAt });
    }
    run.step += 1;
    // Plain functions around the loop's own awaits: the SDK records a stack trace for every promise a workflow
    // makes, so async layers between the loop and the activities would cost CPU on every step for nothing.
    prepareModelCall(context);
    const response = recordModelResponse(context, receiveCatalog(context, await requestModelTurn(context)));
    if ((response.toolCalls ?? []).length === 0) {
      refuseUnfinishedAnswer(context, response.finishReason);
      stopIfCancelled(context);
      const dating = decisionsBeingDated(context);
      if (dating) await dating;
      if (context.notices.inFlight.size > 0) await noticesDelivered(context);
      return finishRun(context, 'final_answer', { output: response.text ?? '', at: response.at });
    }
    // Read where the answer resumed the run, before any await, and only where it can matter.
    const suggested = context.patches.continueAsNewSuggested();
    const calls = recordProposedCalls(context, response);
    recordToolResults(run, calls, await handleToolCalls(context, calls, response.at));
    stopIfCancelled(context);
    publishRunStateIfChanged(context);
    if (shouldContinueAsNew(context, stepsAtStart, suggested)) {
      const dating = decisionsBeingDated(context);
      if (dating) await dating;
      await condition(allHandlersFinished);
      if (context.notices.inFlight.size > 0) await noticesDelivered(context);
      const input = continuedInput(context);
      return await continueAsNew<typeof agentRun>(input, carryState(context, input));
    }
  }
}

/**
 * Ends a cancelled run where its step ends, under the rule `cancellation-ends-step` (asked only then): a tool that
 * finished before its heartbeat carried the cancellation, or a model answer delivered with it, leaves nothing else
 * to stop the run, which would otherwise count a step it never calls the model for, or complete. Not async: an
 * await here could reorder the commands of runs recorded before it.
 */
function stopIfCancelled(context: RunContext): void {
  if (!CancellationScope.current().consideredCancelled) return;
  if (context.patches.cancellationEndsStep()) throw new CancelledFailure('Workflow cancelled');
}

/** Keeps the transcript within budget before the model is called. */
function prepareModelCall(context: RunContext): void {
  const { run } = context;
  const maxBytes = run.input.maxTranscriptBytes ?? defaultMaxTranscriptBytes;
  const compaction = compactTranscript(run.transcript, maxBytes, { elideTexts: context.exact });
  // It follows from the step's last result, not from a new fact of history: it takes that result's time.
  if (compaction) run.emit({ type: 'transcript_compacted', ...compaction }, { at: run.latestAt });
  if (context.exact && compaction && compaction.bytesAfter > maxBytes) {
    throw ApplicationFailure.create({
      type: 'payload_too_large',
      message: `The transcript is ${compaction.bytesAfter} bytes after compaction, over maxTranscriptBytes (${maxBytes}): the newest turn alone does not fit`,
      nonRetryable: true,
    });
  }
}

/** Records the model's answer. */
function recordModelResponse(context: RunContext, response: Recorded<ModelResponse>): Recorded<ModelResponse> {
  const { run } = context;
  run.addUsage(response.usage);
  run.emit(
    {
      type: 'model_responded',
      ...(response.text !== undefined ? { text: response.text } : {}),
      ...(response.storedText ? { storedText: response.storedText } : {}),
      toolCallCount: (response.toolCalls ?? []).length,
      ...(response.usage ? { usage: response.usage } : {}),
      ...(response.finishReason ? { finishReason: response.finishReason } : {}),
    },
    { at: response.at },
  );
  return response;
}

/** A model call's answer as the loop gets it: with the catalog on a run's first call (see receiveCatalog). */
type ModelTurn = Recorded<ModelResponse & { catalog?: CatalogSnapshot }>;

/** What each finish reason that means an unfinished answer tells the run's owner (see refuseUnfinishedAnswer). */
const unfinishedAnswerReasons = new Map([
  ['length', 'it reached its output token limit (modelSettings.maxOutputTokens, or the model’s own)'],
  ['content-filter', 'a content filter stopped it'],
  ['error', 'the provider reported an error'],
]);

/**
 * Fails the run on a final answer the model did not finish, under the `unfinished-answer-fails-run` rule: completed,
 * the run would hand on a cut or empty output as if it were the answer. Its text stays in the `model_responded` event.
 */
function refuseUnfinishedAnswer(context: RunContext, finishReason: string | undefined): void {
  const why = finishReason === undefined ? undefined : unfinishedAnswerReasons.get(finishReason);
  if (why === undefined || !context.patches.unfinishedAnswerFailsRun()) return;
  throw ApplicationFailure.create({
    type: 'model_answer_unfinished',
    message: `The model stopped before finishing its answer (finish reason '${finishReason}': ${why})`,
    nonRetryable: true,
  });
}

/** Calls the model with the run's transcript and tools: by reference where the run can, else whole. */
function requestModelTurn(context: RunContext): Promise<ModelTurn> {
  const { run, modelContext } = context;
  const callFacts = {
    step: run.step,
    runId: run.runId,
    tenantId: run.input.tenantId,
    ...(run.input.modelSettings ? { settings: run.input.modelSettings } : {}),
  };
  if (!modelContext) {
    const tools = modelToolSpecs(run.catalog);
    return callModelActivity(run, { model: run.input.model, messages: run.transcript, tools, ...callFacts });
  }
  return callModelByReference(context, modelContext, callFacts, (error) =>
    resendLostContext(context, modelContext, callFacts, error),
  );
}

/** When the context the call referred to is out of reach (isStoredContextLost), sends the whole transcript again. */
async function resendLostContext(
  context: RunContext,
  modelContext: ModelContextTracker,
  callFacts: Omit<ModelContextRequest, 'model' | 'context'>,
  error: unknown,
): Promise<ModelTurn> {
  const { run } = context;
  if (!isStoredContextLost(error)) throw error;
  const queue = modelContext.workerQueue;
  const message =
    queue && notStartedByStoringWorker(error)
      ? `The worker that stored the context (task queue ${queue.name}) did not start the call within ${startTimeoutText(queue.startMs)}`
      : describeFailure(error);
  log.warn('The stored model context is out of reach; sending the whole transcript again', {
    step: run.step,
    error: message,
  });
  const at = usesRecordedTime(context) ? await readRecordedTime() : undefined;
  run.emit({ type: 'model_context_resent', error: message }, { at });
  modelContext.forget();
  return await callModelByReference(context, modelContext, callFacts);
}

/**
 * Sends what is new since the stored context and keeps what the worker stored for the next call; a failed call goes
 * to `onFailure` when given. Not async, and one `then` for both outcomes: the SDK records a stack trace for every
 * promise a workflow makes, and an async function's own promise, its await's and a separate `catch` add three.
 */
function callModelByReference(
  context: RunContext,
  modelContext: ModelContextTracker,
  callFacts: Omit<ModelContextRequest, 'model' | 'context'>,
  onFailure?: (error: unknown) => Promise<ModelTurn>,
): Promise<ModelTurn> {
  const { run } = context;
  const sent = [...run.transcript];
  const request = {
    model: run.input.model,
    ...callFacts,
    context: modelContext.next(sent, () => modelContextTools(context)),
  };
  return callModelActivity(run, request, modelContext.workerQueue).then(({ stored, ...response }) => {
    modelContext.remember(sent, stored);
    return response;
  }, onFailure);
}

/** The wait a call sent to the storing worker had, as the resend's event says it ('5 seconds' by default). */
function startTimeoutText(startMs = defaultModelCallStartMs): string {
  const seconds = startMs / 1000;
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

function callModelActivity(
  run: RunState,
  request: ModelRequest | ModelContextRequest,
  workerQueue?: { name: string; startMs?: number },
): Promise<Recorded<ModelCallResult>> {
  const summary = `model ${run.input.model}, step ${run.step}`;
  if (workerQueue === undefined) return callModel.executeWithOptions({ summary }, [request]);
  // The storing worker's own wait when it named one (modelCallStartTimeout), else the default.
  const scheduleToStartTimeout = workerQueue.startMs ?? defaultModelCallStartMs;
  return callModel.executeWithOptions({ summary, taskQueue: workerQueue.name, scheduleToStartTimeout }, [request]);
}

/**
 * The stored context the call referred to is out of reach: the worker's store no longer holds it (another worker, or
 * it expired), or the worker that stored it did not start the call in time.
 */
function isStoredContextLost(error: unknown): boolean {
  const lost = error instanceof ActivityFailure && error.cause instanceof ApplicationFailure;
  return (lost && error.cause.type === 'payload_not_found') || notStartedByStoringWorker(error);
}

/** The call sent to the worker that stored the context was not started there in time. */
function notStartedByStoringWorker(error: unknown): boolean {
  return (
    error instanceof ActivityFailure &&
    error.cause instanceof TimeoutFailure &&
    error.cause.timeoutType === 'SCHEDULE_TO_START'
  );
}

/** Names the model's calls and puts them in the transcript; the caller handles each (in parallel). */
function recordProposedCalls(context: RunContext, response: Recorded<ModelResponse>): ToolCall[] {
  const { run } = context;
  const message = context.exact
    ? answerMessage(response, run.step)
    : answerMessage(response, run.step, assignLegacyCallIds);
  run.transcript.push(message);
  context.modelContext?.answered(message);
  return message.toolCalls;
}

/** Puts the calls' results in the transcript in call order. */
function recordToolResults(run: RunState, calls: readonly ToolCall[], results: readonly ToolResult[]): void {
  calls.forEach((call, index) => {
    const result = results[index];
    if (!result) return;
    run.transcript.push({
      role: 'tool',
      toolCallId: call.id,
      toolName: call.name,
      result,
      ...(call.providerCallId !== undefined ? { providerCallId: call.providerCallId } : {}),
    });
  });
}

/**
 * `suggestedAtModelAnswer` is Temporal's suggestion as the model's answer found it: the activation that delivers an
 * activity's result is the same live and on replay, unlike the one after the step's calls, and under
 * `continue-as-new-suggestion-recorded` replay reads it as the run read it live (see run-patches.ts).
 */
function shouldContinueAsNew(context: RunContext, stepsAtStart: number, suggestedAtModelAnswer: boolean): boolean {
  const stepsThisExecution = context.run.step - stepsAtStart;
  const suggested = context.patches.readsFromHistory() ? suggestedAtModelAnswer : workflowInfo().continueAsNewSuggested;
  return suggested || stepsThisExecution >= (context.run.input.continueAsNewAfterSteps ?? Infinity);
}

/**
 * The input the next execution starts with: under `continued-input-without-messages` (asked here), without what the
 * carried transcript holds, which would otherwise count twice against the continue-as-new payload limit.
 */
function continuedInput(context: RunContext): AgentRunInput {
  const { input } = context.run;
  if (!context.patches.continuedInputWithoutMessages()) return input;
  // A continued execution reads its messages from the carried transcript; the placeholder keeps the input valid.
  const slim: AgentRunInput = { ...input, prompt: promptInCarriedTranscript };
  delete slim.messages;
  delete slim.system;
  return slim;
}

/** What a continued execution's input says in place of its prompt. */
const promptInCarriedTranscript = '(carried in the transcript)';

/**
 * What the next execution starts from, within Temporal's payload limit (with the `input` it starts with) for runs
 * under the exact rules.
 */
function carryState(context: RunContext, input: AgentRunInput): CarriedRunState {
  const carried = context.run.carry();
  if (!context.exact) return carried;
  const maxBytes = context.run.input.maxTranscriptBytes ?? defaultMaxTranscriptBytes;
  return boundCarriedState(input, carried, maxBytes, carriedCompactionLog(context));
}

/**
 * Logs the compactions of the carried transcript under `carried-compaction-logged` (asked only at one): the next
 * execution finds its transcript within budget, so its first step would not log them.
 */
function carriedCompactionLog(context: RunContext): CompactionLog {
  const { run, patches } = context;
  return {
    logs: () => patches.carriedCompactionLogged(),
    // As prepareModelCall's, it follows from the step's last result, not from a new fact of history.
    emit: (compaction) => run.emit({ type: 'transcript_compacted', ...compaction }, { at: run.latestAt }),
  };
}

function finishRun(
  context: RunContext,
  stopReason: 'final_answer' | 'max_steps',
  { output, at }: { output?: string; at: string | undefined },
): RunResult {
  const { run } = context;
  run.finish('completed', stopReason, output !== undefined ? { output } : {});
  if (output !== undefined) run.transcript.push({ role: 'assistant', content: output });
  run.emit({ type: 'run_completed', stopReason, ...(output !== undefined ? { output } : {}) }, { at });
  publishRunState(context);
  return {
    runId: run.runId,
    status: 'completed',
    stopReason,
    ...(output !== undefined ? { output } : {}),
    steps: run.step,
    usage: run.usage,
  };
}

/**
 * Records a cancelled run's end, once the step's running calls have ended (runningCallsEnded). Under the exact rules
 * every call still waiting for a human or still running gets a `tool_cancelled` event and leaves the pending list, so
 * the snapshot and the search attributes show none, and the approvers told of a waiting call are told it was
 * withdrawn. The time is read outside the cancelled scope (readRecordedTime), so the cancellation cannot interrupt it.
 */
async function recordCancellation(context: RunContext): Promise<void> {
  const { run } = context;
  endWaitsUnder(context, () => context.patches.cancelledRunEndsWaitsFirst());
  await runningCallsEnded(context);
  const dating = decisionsBeingDated(context);
  if (dating) await dating;
  const at = usesRecordedTime(context) ? await readRecordedTime() : undefined;
  if (context.exact) {
    for (const call of [...run.unfinishedCalls(), ...checksEndedByCancellation(context)]) {
      const { toolCallId, toolName, stage } = call;
      run.emit({ type: 'tool_cancelled', toolCallId, toolName, stage }, { at });
    }
    run.approvals.settleAll();
  }
  await withdrawWaitingCalls(context, 'cancelled', at ?? run.latestAt);
  run.finish('cancelled', 'cancelled');
  run.emit({ type: 'run_cancelled' }, { at });
  publishRunState(context);
}

/** The calls a cancellation caught in their input check, under the rule that records them (a late patch). */
function checksEndedByCancellation(context: RunContext): CallBeingChecked[] {
  const checked = context.run.callsBeingChecked();
  return checked.length > 0 && context.patches.cancelledRunEndsChecks() ? checked : [];
}

/**
 * Records a failed run's end and returns the failure that ends the workflow: the calls of its step still waiting,
 * running or checked are ended first (a late patch each), each with a `tool_cancelled` event.
 */
async function recordFailure(context: RunContext, error: unknown): Promise<ApplicationFailure> {
  const { run } = context;
  const waiting = endWaitsOfFailingRun(context);
  const stopping = stopCallsOfFailingStep(context);
  const ended = stopping ? [...waiting, ...(await stopping)] : waiting;
  const dating = decisionsBeingDated(context);
  if (dating) await dating;
  const at = usesRecordedTime(context) ? await readRecordedTime() : undefined;
  const message = describeFailure(error);
  const code = context.exact ? runFailureCode(error, context.patches.runFailedCodeFromCause()) : undefined;
  for (const { toolCallId, toolName, stage } of ended) {
    run.emit({ type: 'tool_cancelled', toolCallId, toolName, stage }, { at });
  }
  await withdrawWaitingCalls(context, 'failed', at ?? run.latestAt);
  run.finish('failed', 'error', { error: message });
  run.emit({ type: 'run_failed', error: message, ...(code ? { code } : {}) }, { at });
  publishRunState(context);
  return ApplicationFailure.create({
    type: 'run_failed',
    message,
    nonRetryable: true,
    cause: error instanceof Error ? error : undefined,
  });
}

/**
 * Ends the waits of the calls still waiting for a human when the run fails (rule `failed-run-cancels-waiting-calls`);
 * returns those calls, whose `tool_cancelled` events follow once the clock is read.
 */
function endWaitsOfFailingRun(context: RunContext): UnfinishedCall[] {
  if (!endWaitsUnder(context, () => context.patches.failedRunCancelsWaitingCalls())) return [];
  return context.run.unfinishedCalls().filter(({ stage }) => stage === 'awaiting_approval');
}

/**
 * Ends the waits of the calls still waiting for a human as the run closes, before it reads its clock, so no decision
 * is accepted meanwhile for a call that will never run: where calls wait and the run's rule says so (a late patch,
 * asked only then). Says whether it did.
 */
function endWaitsUnder(context: RunContext, rule: () => boolean): boolean {
  if (context.run.approvals.list().length === 0 || !rule()) return false;
  context.run.approvals.settleAll();
  return true;
}

/**
 * The type of the first application failure along the failure's causes: a failure of an activity (the model's
 * answer over maxModelResponseBytes, say) names its code on its cause. Runs that failed before the
 * run-failed-code-from-cause patch replay with the code of the failure itself only.
 */
function runFailureCode(error: unknown, fromCause: boolean): string | undefined {
  if (!fromCause) return error instanceof ApplicationFailure && error.type ? error.type : undefined;
  for (let current: unknown = error; current instanceof TemporalFailure; current = current.cause) {
    if (current instanceof ApplicationFailure && current.type) return current.type;
  }
  return undefined;
}

function checkRunInput(input: AgentRunInput): void {
  const check = checkToolInput(agentRunInputSchema(), input);
  if (!check.success) {
    throw ApplicationFailure.create({
      type: 'invalid_input',
      message: `Invalid run input. ${check.message}`,
      nonRetryable: true,
    });
  }
}
