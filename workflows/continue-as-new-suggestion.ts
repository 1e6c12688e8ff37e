import { patched, workflowInfo } from '@temporalio/workflow';

/** Recorded where a workflow that keeps its readings first reads Temporal's suggestion to continue as new as true. */
const continueAsNewSuggestedMarker = 'continue-as-new-suggested';

/**
 * Temporal's suggestion to continue as new, as the workflow read it live. A query answered by replaying the workflow
 * on a worker that does not have it cached can apply events no workflow task has processed yet under the previous
 * task's suggestion, and that worker carries what the workflow decided into the task that delivers them: read from
 * that task on replay, the suggestion could differ, and replay failed. So live, the first true reading is recorded by
 * a patch marker (the workflow then continues as new or ends, so once is enough), and replay answers whether the task
 * it replays holds that marker.
 */
export function suggestionAsRecorded(): boolean {
  const { continueAsNewSuggested, unsafe } = workflowInfo();
  return (unsafe.isReplaying || continueAsNewSuggested) && patched(continueAsNewSuggestedMarker);
}

/** The suggestion the current workflow task carries, as workflows recorded before they kept their readings read it. */
export function suggestionOfTheTask(): boolean {
  return workflowInfo().continueAsNewSuggested;
}
