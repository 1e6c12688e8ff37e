import { patched } from '@temporalio/workflow';
import { suggestionAsRecorded, suggestionOfTheTask } from './continue-as-new-suggestion.js';

/**
 * Stands for every patch below at once. Each `patched()` that a new run asks records a marker and an upsert of
 * Temporal's change-version search attribute, two events and two commands in the first task; a run that records
 * this one follows all the rules below with one of each. Runs recorded before it ask each patch as they did; runs
 * recorded after it ask the marker that stands for it and more ({@link compactStartPatch}). Its own rules:
 * - a start whose search attributes the starter already set (as `RelayClient` does) is not upserted again;
 * - lean history: history holds each step's facts once. The context the worker stores for a model call ends with
 *   the model's answer (a delta after the context before it), so the next call sends only the tool results; after a
 *   compaction it sends only the replaced messages (model-context.ts); a tool output over 4 KiB stays in a shared
 *   payload store; a tool call's input leaves out an empty config and the default `retryTimeouts: false`.
 */
const oneMarkerPatch = 'one-marker-for-every-rule';

/**
 * Stands for every rule of {@link oneMarkerPatch} and brings its own: the first model call's activity snapshots the
 * tool catalog (no activity, local or regular, of its own: one workflow activation less a run), and a closed run's
 * record is kept deflated in its memo when its JSON is long. Runs recorded under the one marker ask it as they did.
 */
const compactStartPatch = 'catalog-in-first-model-call';

/**
 * Stands for every rule of {@link compactStartPatch} and brings its own: a decision that says when its client sent it
 * (`decidedAt`, which `RelayClient` sets) is stamped with that time, so the approved tool starts without waiting for
 * a clock-reading activity; a decision without it (a signal from the Temporal UI) still waits for one. Runs recorded
 * under the earlier markers ask them as they did.
 */
const decisionTimePatch = 'decision-time-from-decider';

/**
 * Stands for every rule of {@link decisionTimePatch} and brings its own: the calls waiting for a human are kept in
 * the run's memo (run-visibility.ts), so a tenant's approvals list reads them from visibility without asking the run
 * (no worker needed). Runs recorded under the earlier markers ask them as they did.
 */
const pendingApprovalsMemoPatch = 'pending-approvals-in-memo';

/**
 * Stands for every rule of {@link pendingApprovalsMemoPatch} and brings its own: Temporal's suggestion to continue as
 * new, read where the model's answer resumes the run, is recorded at the first step with tool calls where it is true
 * live, and replay answers from that record, not from the suggestion its task carries ({@link suggestionAsRecorded}). A query answered by
 * replay could apply a model answer under the previous task's suggestion: when the suggestion came with the task that
 * delivered the answer, the run went on live and continued as new on replay, which then failed. Runs recorded under
 * the earlier markers ask them as they did.
 */
const suggestionRecordedPatch = 'continue-as-new-suggestion-recorded';

/**
 * Run-wide ids unique across steps, idempotency keys unique across executions, byte limits, the tool's own schema
 * checked before approval, decisions that win over a simultaneous timeout, and a true record of a cancellation.
 * Runs started before these rules replay with the old ones.
 */
const exactRunPatch = 'exact-identities-and-limits';

// The catalog is read from the worker's own registry, so a local activity on the worker running the workflow does
// the same job without a round trip through the task queue (bench/throughput.ts). Runs which snapshotted it as a
// regular activity replay as they were.
const catalogAsLocalActivityPatch = 'catalog-as-local-activity';

/** Leaves the final snapshot and the newest events in the memo at close (see recordClosedRun). */
const closedRunRecordPatch = 'closed-run-record';

/** A long output stays in the run's result instead of the closed-run memo too; records written before keep it. */
const closedRunOutputInResultPatch = 'closed-run-output-in-result';

/** `run_failed` carries the code of the first application failure along the causes, not only the failure's own. */
const runFailedCodeFromCausePatch = 'run-failed-code-from-cause';

/** Skips the search-attribute upsert after a step that changed neither status nor pending count. */
const skipUnchangedSearchAttributesPatch = 'skip-unchanged-search-attributes';

/** Model calls send what is new since the context the worker stored, and the tools by reference (model-context.ts). */
const modelContextByReferencePatch = 'model-context-by-reference';

/**
 * Every event time comes from history: activities return the time they finished, and an event that follows from no
 * activity's result (a decision, a failure, a cancellation) waits for a clock-reading activity; an approval's input
 * check is a regular activity, so its result is ordered in history with the parallel calls' results; and the
 * continue-as-new suggestion is read where the model's answer resumed the run. A local activity's result can reach
 * the run in another workflow task live than on replay, and a query answered by replay can apply history no task
 * has processed yet under the previous task's clock: either made an event read differently later.
 */
const readsFromHistoryPatch = 'reads-from-history';

/**
 * Decides the run's other patches in its first workflow task, before any local activity. A patch first asked for in
 * the continuation of a local activity can be asked in another task on replay than when it was recorded (a
 * follower's query can split the task that delivers the activity's result), and replay then fails. Runs started
 * before this ask each patch where they first did.
 */
const patchesAtStartPatch = 'patches-at-start';

/**
 * Approvers are told how every wait ends, in order: a call's `approval.decided` notice is sent once its
 * `approval.requested` one has ended, notices are not cancelled with their run, and a run cancelled or failing while
 * calls wait tells their approvers the calls were withdrawn and waits for its notices before it closes
 * (approval-notices.ts). Unlike the patches above it is asked at a run's first notice, not at its start, so only runs
 * with an approval webhook record its marker and every other run's history stays as it was. That is safe only where
 * no local activity runs past the start, which holds for runs under the reads-from-history rule (their input checks
 * are regular activities); older runs never ask it (see {@link patchesAtStartPatch} for why).
 */
const approversToldEveryEndingPatch = 'approvers-told-every-ending';

/**
 * A decision whose time is known when it is accepted (its `decidedAt`, under the decision-time-from-decider rule) is
 * recorded by the handler that accepts it, not by the waiting call once it resumes. A workflow task hands the run its
 * signals and updates before its activity results, but a waiting call resumes after the results' own continuations:
 * recorded there, a decision came after a tool result that arrived after it in the same task and before one in a later
 * task, so a follower that read the run between two tasks could see another order than the final log's. Asked at a
 * run's first such decision, as {@link approversToldEveryEndingPatch} is at its first notice, by the same runs.
 */
const decisionRecordedWhenAcceptedPatch = 'decision-recorded-when-accepted';

/**
 * A call whose tool names its approvers or asks more than one approval says so in its `tool_awaiting_approval` event
 * (`approvers`, `approvalsRequired`), so a follower of the run knows who may decide without reading its snapshot. Asked
 * at a run's first wait for such a call, as {@link approversToldEveryEndingPatch} is at its first notice, by the same
 * runs: every other run's history stays as it was, and a run recorded before it replays the event it showed then.
 */
const awaitingEventNamesApproversPatch = 'awaiting-event-names-approvers';

/**
 * A run that fails while calls wait for a human ends their waits as a cancelled run does: each gets a `tool_cancelled`
 * event (stage `awaiting_approval`) before `run_failed` and leaves the pending list, so the closed snapshot, the memo
 * and the search attributes show nothing waiting. Asked at such a failure only, by the same runs as
 * {@link approversToldEveryEndingPatch}; runs that failed so before it keep their waiting calls in their record.
 */
const failedRunCancelsWaitingCallsPatch = 'failed-run-cancels-waiting-calls';

/**
 * A run cancelled while calls wait for a human ends their waits before it reads its clock, so no decision is accepted
 * (and answered as accepted) in between for a call that will never run; their `tool_cancelled` events follow as
 * before. Asked at such a cancellation only, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const cancelledRunEndsWaitsFirstPatch = 'cancelled-run-ends-waits-first';

/**
 * A run cancelled while calls of a step of several run waits for their activities to end before it reads its clock
 * and closes, as it does for a step's only call: the first call to stop (a wait for a human ends at once) would
 * otherwise close the run while another tool had not yet seen `ctx.signal` abort, or was finishing. Asked at such a
 * cancellation only, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const cancelledRunWaitsForRunningCallsPatch = 'cancelled-run-waits-for-running-calls';

/**
 * A decision's time from its client (`decidedAt`) that is later than the workflow task that took it (a client whose
 * clock runs ahead) is taken back to that task's time: every later event is stamped no earlier than the one before,
 * so one fast clock would otherwise date the rest of the run in the future. Asked at such a decision only, by the
 * same runs as {@link approversToldEveryEndingPatch}.
 */
const decisionTimeBoundedByTaskPatch = 'decision-time-bounded-by-task';

/**
 * A run cancelled while a call's input is being checked before a human is asked (its tool's own schema or approval
 * rule, an activity) gives that call a `tool_cancelled` event too (stage `checking_input`): before, such a call ended
 * the log at `tool_call_validated`. Asked at such a cancellation only, by the same runs as
 * {@link approversToldEveryEndingPatch}.
 */
const cancelledRunEndsChecksPatch = 'cancelled-run-ends-input-checks';

/**
 * A final answer the model did not finish (its finish reason `length`, `content-filter` or `error`: a token limit, a
 * filter, a provider error) fails the run with `model_answer_unfinished` instead of completing it with a cut or empty
 * output. Asked at such an answer only, by the same runs as {@link approversToldEveryEndingPatch}; runs that ended so
 * before it completed, and replay so.
 */
const unfinishedAnswerFailsRunPatch = 'unfinished-answer-fails-run';

/**
 * A call whose wait the closing run ended (a failing or cancelled run settles every wait) stays ended when its wait
 * resumes later: a decision accepted in the task that failed the run, or its timer firing while the run closes, no
 * longer gives it a `tool_approval_timed_out` dated at its `expiresAt` (up to a day ahead, and every later event
 * with it) and an `expired` notice beside its `tool_cancelled`. Asked when such a wait resumes, by the same runs as
 * {@link approversToldEveryEndingPatch}.
 */
const waitEndedByRunStaysEndedPatch = 'wait-ended-by-run-stays-ended';

/**
 * A call whose wait the closing run ended gets no `approval.expiring` reminder when its reminder's timer fires while
 * the run closes (its grace for notices in flight): its approvers were told it was withdrawn, and the reminder, sent
 * after and not in order with that notice, told them it still waited. Asked when such a reminder is due, by the same
 * runs as {@link approversToldEveryEndingPatch}; runs that sent it before replay it.
 */
const noReminderAfterRunEndedWaitPatch = 'no-reminder-after-run-ended-wait';

/**
 * A run whose cancellation arrives while its step's calls finish (a tool that ended before its heartbeat carried the
 * cancellation) or with the model's final answer closes cancelled there: before, it went on to its next step,
 * counting a model call it never made, or completed with `max_steps` or the answer though its cancellation had been
 * accepted. Asked when the run finds itself cancelled at that point, by the same runs as
 * {@link approversToldEveryEndingPatch}.
 */
const cancellationEndsStepPatch = 'cancellation-ends-step';

/**
 * A call approved in the workflow task that cancels its run ends as still awaiting approval (`tool_cancelled`, stage
 * `awaiting_approval`, and a `withdrawn` notice) without being marked executing: its tool could never start. Asked at
 * such an approval, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const approvalBesideCancellationPatch = 'approval-beside-cancellation-never-executes';

/**
 * A run that continues as new starts its next execution with an input that leaves out what the carried transcript
 * holds (its messages, system message and prompt, which a placeholder stands for): carried twice, input messages of
 * about 1 MB made the state too large to carry, and the run failed with `payload_too_large`. Asked at a continue-as-new
 * only, by the same runs as {@link approversToldEveryEndingPatch}; runs that continued before it carried their input.
 */
const continuedInputWithoutMessagesPatch = 'continued-input-without-messages';

/**
 * A compaction made while the run carries its transcript into continue-as-new (to keep it within `maxTranscriptBytes`,
 * or the carried state within Temporal's payload limit) is logged as `transcript_compacted` and carried with the
 * events: before, the next execution found its transcript within budget, and no event said outputs had been elided.
 * Asked where such a compaction happens, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const carriedCompactionLoggedPatch = 'carried-compaction-logged';

/**
 * A decision sent by signal after its call's wait expired (by its `decidedAt`, no later than the task that takes it;
 * without one, by that task's time) is ignored, as the update's validator refuses it: before, a decision that reached
 * the run in the same workflow task as the fired timer (no worker had taken the timer's task before the decision was
 * sent) was applied, and the tool ran. Asked at such a signal only, by the same runs as
 * {@link approversToldEveryEndingPatch}; runs that applied one replay it.
 */
const expiredDecisionRefusedPatch = 'expired-decision-refused';

/**
 * A decision signalled with an approver or reason that is not text (a raw signal's `approver: ["cfo"]`) is ignored,
 * as the update's validator refuses it: before, a list naming an allowed approver passed the tool's approver list by
 * string coercion, and the call was approved with an event naming no approver. Asked at such a signal only, by the
 * same runs as {@link approversToldEveryEndingPatch}; runs that applied one replay it.
 */
const decisionFieldsAreTextPatch = 'decision-fields-are-text';

/**
 * An approval signalled with an edited input holding a field the tool's schema does not name (an approver's
 * `dry_run: true`) is ignored, as the update's validator refuses it: before, it was approved and recorded with the
 * field, and the tool, whose Zod schema drops unknown keys, ran without it. Asked at such a signal only, by the same
 * runs as {@link approversToldEveryEndingPatch}; runs that applied one replay it.
 */
const editedFieldsDeclaredPatch = 'edited-fields-declared';

/**
 * A tool activity that timed out for good (its worker died or hung mid-tool, so no heartbeat came) is recorded as a
 * `timeout` that may still have had an effect, as the tool's own timeouts are: before, it was a plain `execution`
 * failure, and the model could call a tool again whose first call had taken effect. Asked at such a failure only, by
 * the same runs as {@link approversToldEveryEndingPatch}.
 */
const toolActivityTimeoutToldPatch = 'tool-activity-timeout-told';

/**
 * A run failed by one call of a step of several (its input check failed for good, say) stops the step's other calls
 * still running or having their input checked, and waits until each has ended before it reads its clock and closes,
 * as a cancelled run does: before, their tools went on after the run had closed, and their log ended at
 * `tool_call_validated`. Each gets a `tool_cancelled` event (stage `executing` or `checking_input`) before
 * `run_failed`, unless its tool finished anyway. Asked at such a failure only, by the same runs as
 * {@link approversToldEveryEndingPatch}.
 */
const failedRunStopsRunningCallsPatch = 'failed-run-stops-running-calls';

/**
 * A decision signalled to the run that it ignores (a call that does not wait, an approver the tool does not name, an
 * expired wait, …) is recorded as a `decision_ignored` event, at most 20 an execution: a signal has no answer, and
 * before, only the worker's log said so. Asked at such a signal only, by the same runs as
 * {@link approversToldEveryEndingPatch}.
 */
const ignoredDecisionRecordedPatch = 'ignored-decision-recorded';

/**
 * An approval with an edited input is taken only once the tool's own schema (its refinements too, in the
 * `checkToolCallInput` activity) has checked the edit: the update refuses an edit it refuses (`approval_input_invalid`,
 * with its issues) and the call keeps waiting; a signal's is ignored (`decision_ignored`). Before, only the JSON Schema
 * checked it, so such an edit was approved, then failed as `validation` when the tool ran. Asked at such an approval
 * only, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const approvedEditCheckedByToolPatch = 'approved-edit-checked-by-tool';

/**
 * An approval whose time a worker's clock gives (a signal without `decidedAt`, as the Temporal UI sends) is recorded
 * while its call still waits, and a run cancelled during that clock read ends the call as still awaiting approval.
 * Before, the call left its wait first and was marked executing, though its tool could no longer start. Asked at
 * such an approval only, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const approvalTimeReadWhileWaitingPatch = 'approval-time-read-while-waiting';

/**
 * A tool's JSON Schema `pattern` that needs Unicode mode (`\p{L}`, `\u{1F600}`) is read in it, as JSON Schema means it
 * and as an MCP server reads it: before, every pattern was read without flags, where `\p{L}` is the text `p{L}`, so
 * such a tool refused real input. Asked only at a call whose check differs between the two readings, by the same
 * runs as {@link approversToldEveryEndingPatch}.
 */
const patternsInUnicodeModePatch = 'patterns-in-unicode-mode';

/**
 * A run that fails after handing its notices off (its state too large to carry into its next execution) fails with
 * its own reason: it neither waits for those notices again nor hands them to a second workflow of the same id, which
 * Temporal refused, so the run failed as "Workflow execution already started" and left no `run_failed` event or
 * record. Asked only where a run that has handed notices off waits for them again, by the same runs as
 * {@link approversToldEveryEndingPatch}.
 */
const handedOffNoticesNotAwaitedPatch = 'handed-off-notices-not-awaited';

/**
 * A call whose input nests objects and arrays more than 128 levels deep goes back to the model as `input_too_deep`
 * before its schema is followed: before, the check followed it, and against a recursive schema a deep enough input
 * exhausted the stack or outlasted the workflow task's time limit, so the task failed again and again and the run
 * stopped. Asked only at such a call, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const inputDepthBoundedPatch = 'input-depth-bounded';

/**
 * A decision's time is fixed from history before the run takes it, never read from the clock of the task that takes
 * it: a signal's is its `decidedAt` as sent (its call's expiry judged by it), or without one a clock activity's reading
 * (the decision taken then; a run waits for such readings before it ends or continues as new); an update's approval
 * that waits for the tool to check its edit is dated in the task that accepted the update. A query answered by
 * replaying the run on a worker that does not have it cached can apply a signal, or an activity's result, that no
 * workflow task has processed yet, under the previous task's clock, and that worker then carries the state into the
 * next task: a decision dated or refused by that clock recorded a time, a patch marker, an event that the run's replay
 * does not reproduce, and replay then failed. Asked at every signalled decision, before its checks, and at an
 * update's approval whose edit the tool checks, by the same runs as {@link approversToldEveryEndingPatch}.
 */
const decisionTimeFixedBeforeTakenPatch = 'decision-time-fixed-before-taken';

/** The answers to the patches a run follows. */
export interface RunPatches {
  /** False for runs started before the exact identity and limit rules: they replay with the old ones. */
  exact: boolean;
  catalogAsLocalActivity(): boolean;
  closedRunRecord(): boolean;
  closedRunOutputInResult(): boolean;
  runFailedCodeFromCause(): boolean;
  skipUnchangedSearchAttributes(): boolean;
  readsFromHistory(): boolean;
  modelContextByReference(): boolean;
  /** Rules the one marker brings of its own (see oneMarkerPatch). */
  startSearchAttributesFromStarter(): boolean;
  leanHistory(): boolean;
  /** Rules {@link compactStartPatch} brings of its own. */
  catalogInFirstModelCall(): boolean;
  deflatedClosedRunRecord(): boolean;
  /** The rule {@link decisionTimePatch} brings of its own. */
  decisionTimeFromDecider(): boolean;
  /** The rule {@link pendingApprovalsMemoPatch} brings of its own. */
  pendingApprovalsInMemo(): boolean;
  /**
   * Temporal's suggestion to continue as new, asked where the model's answer resumes the run: under
   * {@link suggestionRecordedPatch}, as the run read it live.
   */
  continueAsNewSuggested(): boolean;
  /** Asked at the run's first approval notice, never before (see {@link approversToldEveryEndingPatch}). */
  approversToldEveryEnding(): boolean;
  /** Asked at the run's first decision with a known time, never before (see {@link decisionRecordedWhenAcceptedPatch}). */
  decisionRecordedWhenAccepted(): boolean;
  /** Asked at the run's first wait for a call with named approvers or several approvals (see {@link awaitingEventNamesApproversPatch}). */
  awaitingEventNamesApprovers(): boolean;
  /** Asked when the run fails while calls wait for a human (see {@link failedRunCancelsWaitingCallsPatch}). */
  failedRunCancelsWaitingCalls(): boolean;
  /** Asked when the run is cancelled while calls wait for a human (see {@link cancelledRunEndsWaitsFirstPatch}). */
  cancelledRunEndsWaitsFirst(): boolean;
  /**
   * Asked when the run is cancelled while calls of a step of several still run (see
   * {@link cancelledRunWaitsForRunningCallsPatch}).
   */
  cancelledRunWaitsForRunningCalls(): boolean;
  /** Asked at a decision whose `decidedAt` is later than its task (see {@link decisionTimeBoundedByTaskPatch}). */
  decisionTimeBoundedByTask(): boolean;
  /** Asked when the run is cancelled while a call's input is checked (see {@link cancelledRunEndsChecksPatch}). */
  cancelledRunEndsChecks(): boolean;
  /** Asked at a final answer the model did not finish (see {@link unfinishedAnswerFailsRunPatch}). */
  unfinishedAnswerFailsRun(): boolean;
  /** Asked when a wait the closing run ended resumes (see {@link waitEndedByRunStaysEndedPatch}). */
  waitEndedByRunStaysEnded(): boolean;
  /** Asked when a reminder is due for a call the closing run ended (see {@link noReminderAfterRunEndedWaitPatch}). */
  noReminderAfterRunEndedWait(): boolean;
  /**
   * Asked when the run finds itself cancelled as its step's calls end or its final answer comes (see
   * {@link cancellationEndsStepPatch}).
   */
  cancellationEndsStep(): boolean;
  /** Asked at an approval that resumes its call in a cancelled run (see {@link approvalBesideCancellationPatch}). */
  approvalBesideCancellationNeverExecutes(): boolean;
  /** Asked when the run continues as new (see {@link continuedInputWithoutMessagesPatch}). */
  continuedInputWithoutMessages(): boolean;
  /** Asked at a compaction made while carrying the transcript (see {@link carriedCompactionLoggedPatch}). */
  carriedCompactionLogged(): boolean;
  /** Asked at a decision signalled after its call expired (see {@link expiredDecisionRefusedPatch}). */
  expiredDecisionRefused(): boolean;
  /** Asked at a decision signalled with an approver or reason that is not text (see {@link decisionFieldsAreTextPatch}). */
  decisionFieldsAreText(): boolean;
  /** Asked at an approval signalled with an edit holding an undeclared field (see {@link editedFieldsDeclaredPatch}). */
  editedFieldsDeclared(): boolean;
  /** Asked at a tool activity that timed out for good (see {@link toolActivityTimeoutToldPatch}). */
  toolActivityTimeoutTold(): boolean;
  /** Asked when the run fails while other calls of its step still run (see {@link failedRunStopsRunningCallsPatch}). */
  failedRunStopsRunningCalls(): boolean;
  /** Asked at a signalled decision the run ignores (see {@link ignoredDecisionRecordedPatch}). */
  ignoredDecisionRecorded(): boolean;
  /** Asked at an approval with an edited input (see {@link approvedEditCheckedByToolPatch}). */
  approvedEditCheckedByTool(): boolean;
  /** Asked at an approval whose time a clock activity reads (see {@link approvalTimeReadWhileWaitingPatch}). */
  approvalTimeReadWhileWaiting(): boolean;
  /** Asked at a call its tool's patterns check otherwise in Unicode mode (see {@link patternsInUnicodeModePatch}). */
  patternsInUnicodeMode(): boolean;
  /** Asked where notices handed off would be waited for again (see {@link handedOffNoticesNotAwaitedPatch}). */
  handedOffNoticesNotAwaited(): boolean;
  /** Asked at a call whose input nests too deeply to be checked (see {@link inputDepthBoundedPatch}). */
  inputDepthBounded(): boolean;
  /** Asked at a decision whose time is fixed before it is taken (see {@link decisionTimeFixedBeforeTakenPatch}). */
  decisionTimeFixedBeforeTaken(): boolean;
  /**
   * Runs an update's validator: a late patch it asks first answers as it would live, without recording its marker. A
   * validator runs only live, and one that refuses leaves nothing in history, so a marker it recorded would meet no
   * command on replay (a nondeterminism error); the handler that follows an accepted update records it.
   */
  whileValidating<T>(validate: () => T): T;
}

/** The rules decided at the start, without those asked later in the run. */
type StartRules = Omit<
  RunPatches,
  | 'approversToldEveryEnding'
  | 'decisionRecordedWhenAccepted'
  | 'awaitingEventNamesApprovers'
  | 'failedRunCancelsWaitingCalls'
  | 'cancelledRunEndsWaitsFirst'
  | 'cancelledRunWaitsForRunningCalls'
  | 'decisionTimeBoundedByTask'
  | 'cancelledRunEndsChecks'
  | 'unfinishedAnswerFailsRun'
  | 'waitEndedByRunStaysEnded'
  | 'noReminderAfterRunEndedWait'
  | 'cancellationEndsStep'
  | 'approvalBesideCancellationNeverExecutes'
  | 'continuedInputWithoutMessages'
  | 'carriedCompactionLogged'
  | 'expiredDecisionRefused'
  | 'decisionFieldsAreText'
  | 'editedFieldsDeclared'
  | 'toolActivityTimeoutTold'
  | 'failedRunStopsRunningCalls'
  | 'ignoredDecisionRecorded'
  | 'approvedEditCheckedByTool'
  | 'approvalTimeReadWhileWaiting'
  | 'patternsInUnicodeMode'
  | 'handedOffNoticesNotAwaited'
  | 'inputDepthBounded'
  | 'decisionTimeFixedBeforeTaken'
  | 'whileValidating'
>;

const everyRule: StartRules = {
  exact: true,
  catalogAsLocalActivity: () => true,
  closedRunRecord: () => true,
  closedRunOutputInResult: () => true,
  runFailedCodeFromCause: () => true,
  skipUnchangedSearchAttributes: () => true,
  readsFromHistory: () => true,
  modelContextByReference: () => true,
  startSearchAttributesFromStarter: () => true,
  leanHistory: () => true,
  catalogInFirstModelCall: () => true,
  deflatedClosedRunRecord: () => true,
  decisionTimeFromDecider: () => true,
  pendingApprovalsInMemo: () => true,
  continueAsNewSuggested: suggestionAsRecorded,
};

const pendingApprovalsMemoRules: StartRules = { ...everyRule, continueAsNewSuggested: suggestionOfTheTask };

const decisionTimeRules: StartRules = { ...pendingApprovalsMemoRules, pendingApprovalsInMemo: () => false };

const compactStartRules: StartRules = { ...decisionTimeRules, decisionTimeFromDecider: () => false };

const oneMarkerRules: StartRules = {
  ...compactStartRules,
  catalogInFirstModelCall: () => false,
  deflatedClosedRunRecord: () => false,
};

/** The rules that came with the markers standing for all the patches: runs recorded before them follow none. */
const noMarkerRules = {
  startSearchAttributesFromStarter: () => false,
  leanHistory: () => false,
  catalogInFirstModelCall: () => false,
  deflatedClosedRunRecord: () => false,
  decisionTimeFromDecider: () => false,
  pendingApprovalsInMemo: () => false,
  continueAsNewSuggested: suggestionOfTheTask,
};

/** The patches a run follows: those decided at its start, and those it asks later when it first needs them. */
export function decideRunPatches(): RunPatches {
  const rules = decideStartRules();
  const late = rules.readsFromHistory();
  const validating = { now: false };
  return {
    ...rules,
    whileValidating: (validate) => {
      validating.now = true;
      try {
        return validate();
      } finally {
        validating.now = false;
      }
    },
    approversToldEveryEnding: askedOnce(late ? approversToldEveryEndingPatch : undefined, validating),
    decisionRecordedWhenAccepted: askedOnce(late ? decisionRecordedWhenAcceptedPatch : undefined, validating),
    awaitingEventNamesApprovers: askedOnce(late ? awaitingEventNamesApproversPatch : undefined, validating),
    failedRunCancelsWaitingCalls: askedOnce(late ? failedRunCancelsWaitingCallsPatch : undefined, validating),
    cancelledRunEndsWaitsFirst: askedOnce(late ? cancelledRunEndsWaitsFirstPatch : undefined, validating),
    cancelledRunWaitsForRunningCalls: askedOnce(late ? cancelledRunWaitsForRunningCallsPatch : undefined, validating),
    decisionTimeBoundedByTask: askedOnce(late ? decisionTimeBoundedByTaskPatch : undefined, validating),
    cancelledRunEndsChecks: askedOnce(late ? cancelledRunEndsChecksPatch : undefined, validating),
    unfinishedAnswerFailsRun: askedOnce(late ? unfinishedAnswerFailsRunPatch : undefined, validating),
    waitEndedByRunStaysEnded: askedOnce(late ? waitEndedByRunStaysEndedPatch : undefined, validating),
    noReminderAfterRunEndedWait: askedOnce(late ? noReminderAfterRunEndedWaitPatch : undefined, validating),
    cancellationEndsStep: askedOnce(late ? cancellationEndsStepPatch : undefined, validating),
    approvalBesideCancellationNeverExecutes: askedOnce(late ? approvalBesideCancellationPatch : undefined, validating),
    continuedInputWithoutMessages: askedOnce(late ? continuedInputWithoutMessagesPatch : undefined, validating),
    carriedCompactionLogged: askedOnce(late ? carriedCompactionLoggedPatch : undefined, validating),
    expiredDecisionRefused: askedOnce(late ? expiredDecisionRefusedPatch : undefined, validating),
    decisionFieldsAreText: askedOnce(late ? decisionFieldsAreTextPatch : undefined, validating),
    editedFieldsDeclared: askedOnce(late ? editedFieldsDeclaredPatch : undefined, validating),
    toolActivityTimeoutTold: askedOnce(late ? toolActivityTimeoutToldPatch : undefined, validating),
    failedRunStopsRunningCalls: askedOnce(late ? failedRunStopsRunningCallsPatch : undefined, validating),
    ignoredDecisionRecorded: askedOnce(late ? ignoredDecisionRecordedPatch : undefined, validating),
    approvedEditCheckedByTool: askedOnce(late ? approvedEditCheckedByToolPatch : undefined, validating),
    approvalTimeReadWhileWaiting: askedOnce(late ? approvalTimeReadWhileWaitingPatch : undefined, validating),
    patternsInUnicodeMode: askedOnce(late ? patternsInUnicodeModePatch : undefined, validating),
    handedOffNoticesNotAwaited: askedOnce(late ? handedOffNoticesNotAwaitedPatch : undefined, validating),
    inputDepthBounded: askedOnce(late ? inputDepthBoundedPatch : undefined, validating),
    decisionTimeFixedBeforeTaken: askedOnce(late ? decisionTimeFixedBeforeTakenPatch : undefined, validating),
  };
}

/**
 * A late patch's answer, asked the first time it is needed and kept: asked again once replay has caught up, `patched`
 * would answer true where it answered false before. Without a patch to ask, always false. While an update's validator
 * runs (`validating.now`, live only), an answer not yet asked is what `patched` answers live, and is not kept.
 */
function askedOnce(patch: string | undefined, validating: { now: boolean }): () => boolean {
  let answer: boolean | undefined;
  return () => {
    if (answer === undefined && validating.now) return patch !== undefined;
    return (answer ??= patch !== undefined && patched(patch));
  };
}

/**
 * Asks the patches in the order the recorded histories hold their markers: the newest that stands for all, then the
 * one before it; else the exact rules' and then every other now when the run is under the patches-at-start rule,
 * else where each is used.
 */
function decideStartRules(): StartRules {
  if (patched(suggestionRecordedPatch)) return everyRule;
  if (patched(pendingApprovalsMemoPatch)) return pendingApprovalsMemoRules;
  if (patched(decisionTimePatch)) return decisionTimeRules;
  if (patched(compactStartPatch)) return compactStartRules;
  if (patched(oneMarkerPatch)) return oneMarkerRules;
  const exact = patched(exactRunPatch);
  const catalogAsLocalActivity = () => patched(catalogAsLocalActivityPatch);
  if (!patched(patchesAtStartPatch)) {
    return {
      exact,
      catalogAsLocalActivity,
      closedRunRecord: () => patched(closedRunRecordPatch),
      closedRunOutputInResult: () => patched(closedRunOutputInResultPatch),
      runFailedCodeFromCause: () => patched(runFailedCodeFromCausePatch),
      skipUnchangedSearchAttributes: () => patched(skipUnchangedSearchAttributesPatch),
      // Asked only at the start: these runs replay as they were recorded.
      readsFromHistory: () => false,
      // Decided in the first task only: these runs started before this patch, so they keep sending everything.
      modelContextByReference: () => false,
      ...noMarkerRules,
    };
  }
  const answers = {
    closedRunRecord: patched(closedRunRecordPatch),
    closedRunOutputInResult: patched(closedRunOutputInResultPatch),
    runFailedCodeFromCause: patched(runFailedCodeFromCausePatch),
    skipUnchangedSearchAttributes: patched(skipUnchangedSearchAttributesPatch),
    readsFromHistory: patched(readsFromHistoryPatch),
    modelContextByReference: patched(modelContextByReferencePatch),
  };
  return {
    exact,
    catalogAsLocalActivity,
    closedRunRecord: () => answers.closedRunRecord,
    closedRunOutputInResult: () => answers.closedRunOutputInResult,
    runFailedCodeFromCause: () => answers.runFailedCodeFromCause,
    skipUnchangedSearchAttributes: () => answers.skipUnchangedSearchAttributes,
    readsFromHistory: () => answers.readsFromHistory,
    modelContextByReference: () => answers.modelContextByReference,
    ...noMarkerRules,
  };
}
