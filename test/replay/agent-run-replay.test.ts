import { describe, expect, it } from 'vitest';
import { replayHistories } from '../../src/testing/replay-histories.js';
import { agentRunHistories } from '../helpers/replay-histories.js';

/** Paths recorded before the exact identity and limit rules (`exact-identities-and-limits`): the patch's old side. */
const beforeExactIds = [
  'approval-timeout',
  'approved-by-signal',
  'approved-with-edit',
  'approved',
  'cancelled-awaiting-approval',
  'cancelled',
  'continue-as-new-first-execution',
  'continue-as-new-last-execution',
  'invalid-input-retry',
  'max-steps',
  'model-failed',
  'non-json-arguments',
  'parallel-approvals',
  'parallel-calls',
  'rejected',
  'tool-failed',
  'unknown-tool',
  'valid-call',
  'valid-call-local-catalog',
].map((name) => `before-exact-ids/${name}.json`);

/** The paths recorded under the exact rules, each patch with its own marker, and again under the one marker. */
const pathsOfBoth = [
  'approval-timeout',
  'approved-by-signal',
  'approved-with-edit',
  'approved',
  'cancelled-while-waiting-and-running',
  'cancelled',
  'continue-as-new-first-execution',
  'continue-as-new-last-execution',
  'decided-by-update-and-signal',
  'invalid-input-retry',
  'long-output-in-result',
  'max-steps',
  'model-context-resent',
  'model-response-over-limit',
  'parallel-approvals',
  'parallel-calls',
  'payload-too-large',
  'refined-input-refused-before-approval',
  'rejected-with-reason',
  'rejected',
  'reused-provider-ids',
  'split-first-task-failed',
  'unknown-tool',
  'valid-call',
];

/** The exact rules' new side, each patch asked with its own marker. */
const exact = [...pathsOfBoth, 'model-context-by-reference'].map((name) => `exact/${name}.json`);

/**
 * Recorded under `one-marker-for-every-rule`, the one marker that stands for all the patches before it: that
 * patch's new side, whose old side is every history above.
 */
const oneMarker = [...pathsOfBoth, 'lean-history', 'lean-history-compacted'].map((name) => `one-marker/${name}.json`);

/** The paths recorded under each marker since `catalog-in-first-model-call`. */
const pathsSinceCatalogInFirstCall = [
  ...pathsOfBoth,
  'lean-history',
  'lean-history-compacted',
  'refused-unknown-tool',
  'model-failed',
  'tool-failed',
  'non-json-arguments',
  'cancelled-awaiting-approval',
];

/**
 * Recorded under `catalog-in-first-model-call`, which stands for the one marker's rules and brings its own (the first
 * model call reads the catalog, a long closed-run record is deflated): its new side, whose old side is every history
 * above. `split-first-task-failed` takes the path that still snapshots first (its input is over budget).
 */
const catalogInFirstCall = pathsSinceCatalogInFirstCall.map((name) => `catalog-in-first-call/${name}.json`);

/**
 * Recorded under `decision-time-from-decider`, which stands for all the rules before and stamps a decision with the
 * time its client sent: its new side, whose old side is every history above.
 */
const decisionTimeFromDecider = pathsSinceCatalogInFirstCall.map((name) => `decision-time-from-decider/${name}.json`);

/**
 * Recorded under `pending-approvals-in-memo`, which stands for all the rules before and keeps a run's waiting calls in
 * its memo: its new side, whose old side is every history above. Three paths need no patch, since what they record
 * decides them: `approvers-notified` (the catalog of a worker with an approval webhook), `approval-by-rule` (a
 * rule's recorded answers) and `tool-approval-timeout` (a tool's own wait, recorded in the catalog).
 * `approvers-notified` is also the old side of `approvers-told-every-ending`, a patch asked at a run's first notice;
 * the two paths after it are its new side (notices in order, a cancelled run's waiting call withdrawn).
 * `approval-reminded` splits the wait at the reminder's lead time, which the catalog records;
 * `approval-notice-handed-off` starts a child workflow for a notice still in flight after the grace period;
 * `named-approver` refuses a signal from an approver its tool does not name (the catalog records the names).
 * `decided-by-update-and-signal` is the old side of `decision-recorded-when-accepted`, a patch asked at a run's first
 * decision that says when its client sent it; the three paths after `named-approver` are its new side (the decision
 * recorded by its handler: beside a cancellation, beside a tool result in one task, on a worker without a cache).
 * `four-eyes` is a call whose tool needs two approvers (the catalog records the count): one approval recorded while
 * the call waits, the same approver and an edit refused, the second approval running it; `four-eyes-notified` the
 * same with an approval webhook (an `approval.added` notice between the request and the decision).
 * `named-approver`, `four-eyes` and `four-eyes-notified` are the old side of `awaiting-event-names-approvers`, a patch
 * asked at a run's first wait for a call whose tool names approvers or asks several approvals: the three paths named
 * `…-in-event` are its new side (the awaiting event says who may decide and how many must).
 * `failed-while-waiting` is a run failing while a call waits for a human, under `failed-run-cancels-waiting-calls`
 * (asked at that failure): the call's wait ends with `tool_cancelled` before `run_failed`.
 * `decision-refused-while-cancelling` is a run cancelled while a call waits, under `cancelled-run-ends-waits-first`
 * (asked at that cancellation): the wait ends before the clock is read, so a decision sent meanwhile is refused.
 * `cancelled-while-waiting-and-running` is the old side of `cancelled-run-waits-for-running-calls`, asked when a run
 * is cancelled while calls of a step of several still run; `cancelled-while-calls-run` its new side (the run waits
 * for the running tool's activity to end before it reads its clock and closes).
 * `decision-from-a-clock-ahead` is a decision whose `decidedAt` is later than the task that took it, dated at that
 * task under `decision-time-bounded-by-task` (asked at such a decision); every other history is that rule's old side.
 * `cancelled-while-checking-input` is a run cancelled while a call's approval rule is still answering, the call given
 * `tool_cancelled` (stage `checking_input`) under `cancelled-run-ends-input-checks` (asked at such a cancellation).
 * `answer-cut-off-completed` is the old side of `unfinished-answer-fails-run`, asked at a final answer whose finish
 * reason says the model did not finish it (recorded before the rule: the run completed with the cut text);
 * `answer-cut-off-fails` its new side (the run fails with `model_answer_unfinished`).
 * `failed-in-task-of-decision` and `failed-as-wait-timed-out` are runs failing while a call waits, its decision
 * accepted in the failing task or its timer firing as the run closes: under `wait-ended-by-run-stays-ended` (asked
 * when such a wait resumes) the call's only ending is the run's `tool_cancelled`; the `-before-patch` files are the
 * old side (a `tool_approval_timed_out` dated at `expiresAt` beside it).
 * `cancelled-as-tool-finished` and `cancelled-as-last-tool-finished` are runs cancelled while a tool that ignores its
 * signal finishes, closed cancelled at that step under `cancellation-ends-step` (asked then); their `-before-patch`
 * files are the old side (a step counted for a model call never made; a run completed with `max_steps`).
 * `approved-beside-cancel` is an approval delivered with the run's cancellation, the call ended as still awaiting
 * approval under `approval-beside-cancellation-never-executes` (asked at such an approval); `-before-patch` is the
 * old side (the call marked executing though its tool never ran).
 * `failed-as-reminder-due` is a run failing while a call waits, its reminder's timer firing as the run closes: under
 * `no-reminder-after-run-ended-wait` (asked when that reminder is due) the withdrawn call gets no `approval.expiring`;
 * `-before-patch` is the old side (the reminder sent after the `withdrawn` notice).
 * `timed-out-last-retry` is a tool that retries its timeouts timing out on its last attempt: the activity returns the
 * timeout as its result, and the run records `tool_failed` (`timeout`) from it. No patch: the activity's outcome is
 * recorded, so `-before-patch` (the activity failed, recorded as an `execution` failure) replays as it was.
 * `input-slimmed-first-execution` and `input-slimmed-last-execution` are the two executions of a run with a system
 * message, messages and a prompt that continues as new: under `continued-input-without-messages` (asked there) the
 * next execution's input leaves them to the carried transcript; `-before-patch` is the old side (the input carried).
 * `compacted-while-carried` is the first execution of a run whose transcript is compacted as it continues as new:
 * under `carried-compaction-logged` (asked at that compaction) a `transcript_compacted` event is carried with the
 * events; `-before-patch` is the old side (no event).
 * `model-calls-on-storing-worker` sends each model call after the first to the task queue of the worker that stored
 * the context (the model activity's recorded result names it); `model-context-resent-after-worker-left` is that
 * call not started in time, sent again whole to the shared queue; `model-context-resent-after-its-own-wait` the same
 * after the wait the worker named in its result (`modelCallStartTimeout`).
 * `decision-signalled-after-expiry` is an approval signalled after its call's wait expired while no worker ran, taken
 * in the task of the fired timer: under `expired-decision-refused` (asked at such a signal) it is ignored and the call
 * times out; `-before-patch` is the old side (the approval applied, the tool run).
 * `approver-not-text` is an approval signalled with `approver: ["finance-lead"]` for a tool only `finance-lead`
 * decides: under `decision-fields-are-text` (asked at such a signal) it is ignored and the call waits for a named
 * approver; `-before-patch` is the old side (the list passed by string coercion, the call approved naming nobody).
 * `edit-with-undeclared-field` is an approval signalled with an edit holding `dry_run: true`, a field the tool's
 * schema does not name: under `edited-fields-declared` (asked at such a signal) it is ignored and the call waits;
 * `-before-patch` is the old side (the edit approved and recorded with the field, the tool run without it).
 * `tool-activity-timed-out` is a tool activity whose worker stopped heartbeating mid-call, timed out on its only
 * attempt: under `tool-activity-timeout-told` (asked at such a failure) it is recorded as a `timeout` that may still
 * have had an effect; `-before-patch` is the old side (a plain `execution` failure).
 * `failed-while-tool-runs` and `failed-while-input-checked` are runs failed by one call's input check while another
 * call of the step runs its tool or has its input checked: under `failed-run-stops-running-calls` (asked at such a
 * failure) the run cancels that call's activity, waits for it and records `tool_cancelled`; `-before-patch` is the old
 * side (the run closed at once, the other call's log ending at `tool_call_validated`).
 * `decisions-ignored` holds three decisions signalled that the run ignores (a call that does not wait, a signal of
 * `null`, a decision that is neither approve nor reject), each a `decision_ignored` event under
 * `ignored-decision-recorded` (asked at such a signal); the histories above with an ignored signal and no marker
 * (`named-approver`, `approver-not-text`, `edit-with-undeclared-field`, `decision-signalled-after-expiry`) are its old side.
 * `edit-refused-by-tool` is an approval whose edit the tool's refinement refuses, refused by update under
 * `approved-edit-checked-by-tool` (asked at an approval with an edit) after the `checkToolCallInput` activity, then a
 * good edit approved; `approved-with-edit`, recorded before, is its old side.
 * `approved-as-cancelled` is an approval signalled without its time (as the Temporal UI sends it), the run cancelled
 * while a worker's clock reads that time: under `approval-time-read-while-waiting` (asked at such an approval) the
 * approval is recorded while the call waits, which ends as still awaiting approval; `-before-patch` is the old side
 * (the call left its wait first and was marked executing, though its tool never started).
 * `pattern-in-unicode-mode` is a call to a tool whose JSON Schema pattern is `^\p{L}+$`, with a name of letters: under
 * `patterns-in-unicode-mode` (asked at a call the two readings check otherwise) the run reads it in Unicode mode and
 * the tool runs; `-before-patch` is the old side (read without flags, the call refused as `validation`).
 * `failed-after-hand-off` (gzipped: about 4 MB of messages and catalog) is a run that hands its decision's notice off
 * as it would continue as new, then fails because its state is too large to carry: under
 * `handed-off-notices-not-awaited` (asked where it would wait for handed-off notices again) it fails with
 * `payload_too_large`; `-before-patch` is the old side (it waited again and handed them to a second workflow of the
 * same id, which Temporal refused, so the run failed as "Workflow execution already started").
 * `input-too-deep` is a call whose input nests lists 3,500 deep, against a schema whose `allOf` Zod merges at every
 * level: under `input-depth-bounded` (asked at a call nested more than 128 levels deep) it goes back to the model as
 * `input_too_deep` unchecked; `-before-patch` is the old side (a call 200 lists deep checked and run; one as deep as
 * the new side's outlasted the workflow task's time limit on every attempt, so it left no history to replay).
 * `pattern-too-long` is a call whose 16,000-character address a tool's `^\S+@\S+\.\S+$` takes minutes to refuse: its
 * catalog, recorded with that pattern's length limit (256), sends it back to the model as `too_big` untried. No rule:
 * catalogs recorded before limits hold none, and their runs try every pattern as they did.
 * `pattern-tried-by-worker` is a call whose ARN an exponential pattern cannot decide: its catalog names the pattern in
 * `patternsTriedByWorker`, so the run checks the call without it and the worker's check refuses it as
 * `pattern_timed_out` (the tool fails with `validation`).
 * `decision-signalled-while-query-waits` and `undated-decision-signalled-while-query-waits` are approvals signalled
 * while a query of the run waited for a worker, with and without `decidedAt`, under `decision-time-fixed-before-taken`
 * (asked at a signalled decision): the first dated when its client sent it, the second taken once a clock activity
 * dated it; `undated-approval-as-cancelled` is one of the second kind whose run was cancelled while the clock read,
 * recorded as `decision_ignored` before the run's end. The histories above with a signalled decision and no marker
 * (`decided-then-cancelled-in-one-task`, `decision-beside-tool-result`, `approved-as-cancelled`) are its old side.
 */
const pendingApprovalsInMemo = [
  ...pathsSinceCatalogInFirstCall,
  'approvers-notified',
  'approval-by-rule',
  'tool-approval-timeout',
  'approvers-told-in-order',
  'approvers-told-of-cancel',
  'approval-reminded',
  'approval-notice-handed-off',
  'named-approver',
  'decided-then-cancelled-in-one-task',
  'decision-beside-tool-result',
  'decisions-recorded-when-accepted',
  'four-eyes',
  'four-eyes-notified',
  'model-calls-on-storing-worker',
  'model-context-resent-after-worker-left',
  'model-context-resent-after-its-own-wait',
  'named-approver-in-event',
  'four-eyes-approvers-in-event',
  'four-eyes-notified-approvers-in-event',
  'failed-while-waiting',
  'decision-refused-while-cancelling',
  'cancelled-while-calls-run',
  'decision-from-a-clock-ahead',
  'cancelled-while-checking-input',
  'answer-cut-off-completed',
  'answer-cut-off-fails',
  ...[
    'failed-in-task-of-decision',
    'failed-as-wait-timed-out',
    'cancelled-as-tool-finished',
    'cancelled-as-last-tool-finished',
    'approved-beside-cancel',
    'timed-out-last-retry',
    'input-slimmed-first-execution',
    'input-slimmed-last-execution',
    'compacted-while-carried',
    'failed-as-reminder-due',
    'decision-signalled-after-expiry',
    'approver-not-text',
    'edit-with-undeclared-field',
    'tool-activity-timed-out',
    'failed-while-tool-runs',
    'failed-while-input-checked',
    'approved-as-cancelled',
    'pattern-in-unicode-mode',
    'input-too-deep',
  ].flatMap((name) => [name, `${name}-before-patch`]),
  'decisions-ignored',
  'edit-refused-by-tool',
  'pattern-too-long',
  'pattern-tried-by-worker',
  'decision-signalled-while-query-waits',
  'undated-decision-signalled-while-query-waits',
  'undated-approval-as-cancelled',
  'continued-as-suggested-before-patch',
]
  .map((name) => `pending-approvals-in-memo/${name}.json`)
  .concat(
    ['failed-after-hand-off', 'failed-after-hand-off-before-patch'].map(
      (name) => `pending-approvals-in-memo/${name}.json.gz`,
    ),
  );

/**
 * Recorded under `continue-as-new-suggestion-recorded`, which stands for all the rules before and records the first
 * reading of Temporal's suggestion to continue as new that suggests it: `continued-as-suggested` continues as new at its first step,
 * where the suggestion came, under the marker `continue-as-new-suggested`; `suggestion-read-while-query-waits` had its
 * first model answer applied to answer a query under the previous task's suggestion (none), so it went on to a second
 * step, whose final answer ends it with no marker. `continued-as-suggested-before-patch` (above) is the old side: it reads the suggestion
 * the task carries. `valid-call` and the two `continue-as-new-` executions show the marker at a run's start.
 */
const suggestionRecorded = [
  'continued-as-suggested',
  'suggestion-read-while-query-waits',
  'valid-call',
  'continue-as-new-first-execution',
  'continue-as-new-last-execution',
].map((name) => `continue-as-new-suggestion-recorded/${name}.json`);

describe('replaying recorded agent runs', () => {
  it('reproduces every recorded path with the workflow code bundled as workers bundle it, so a nondeterministic change fails the build', async () => {
    const replayed = await replayHistories(agentRunHistories);
    expect(replayed).toEqual(
      expect.arrayContaining([
        ...beforeExactIds,
        ...exact,
        ...oneMarker,
        ...catalogInFirstCall,
        ...decisionTimeFromDecider,
        ...pendingApprovalsInMemo,
        ...suggestionRecorded,
      ]),
    );
  });
});
