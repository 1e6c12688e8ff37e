import { patched } from '@temporalio/workflow';

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
 * History holds each step's facts once: the context the worker stores for a model call ends with the model's answer
 * (a delta after the context before it), so the next call sends only the tool results (model-context.ts); a tool
 * call's input leaves out an empty config and the default `retryTimeouts: false`.
 */
const leanHistoryPatch = 'lean-history';

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

/** The answers to the patches a run asks about after it has started. */
export interface RunPatches {
  closedRunRecord(): boolean;
  closedRunOutputInResult(): boolean;
  runFailedCodeFromCause(): boolean;
  skipUnchangedSearchAttributes(): boolean;
  readsFromHistory(): boolean;
  modelContextByReference(): boolean;
  leanHistory(): boolean;
}

/** Asks every patch now when the run is under the patches-at-start rule, else where each is used. */
export function decideRunPatches(): RunPatches {
  if (!patched(patchesAtStartPatch)) {
    return {
      closedRunRecord: () => patched(closedRunRecordPatch),
      closedRunOutputInResult: () => patched(closedRunOutputInResultPatch),
      runFailedCodeFromCause: () => patched(runFailedCodeFromCausePatch),
      skipUnchangedSearchAttributes: () => patched(skipUnchangedSearchAttributesPatch),
      // Asked only at the start: these runs replay as they were recorded.
      readsFromHistory: () => false,
      // Decided in the first task only: these runs started before this patch, so they keep sending everything.
      modelContextByReference: () => false,
      leanHistory: () => false,
    };
  }
  const answers = {
    closedRunRecord: patched(closedRunRecordPatch),
    closedRunOutputInResult: patched(closedRunOutputInResultPatch),
    runFailedCodeFromCause: patched(runFailedCodeFromCausePatch),
    skipUnchangedSearchAttributes: patched(skipUnchangedSearchAttributesPatch),
    readsFromHistory: patched(readsFromHistoryPatch),
    modelContextByReference: patched(modelContextByReferencePatch),
    leanHistory: patched(leanHistoryPatch),
  };
  return {
    closedRunRecord: () => answers.closedRunRecord,
    closedRunOutputInResult: () => answers.closedRunOutputInResult,
    runFailedCodeFromCause: () => answers.runFailedCodeFromCause,
    skipUnchangedSearchAttributes: () => answers.skipUnchangedSearchAttributes,
    readsFromHistory: () => answers.readsFromHistory,
    modelContextByReference: () => answers.modelContextByReference,
    leanHistory: () => answers.leanHistory,
  };
}
