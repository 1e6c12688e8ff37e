import { upsertMemo, workflowInfo } from '@temporalio/workflow';
import type { WorkflowInterceptorsFactory } from '@temporalio/workflow';

/**
 * Makes a run record one command more than Relay-E's workflows give: a memo update as it takes each signal. A worker
 * bundled with these writes a history the shipped workflows cannot replay, as a query that splits a workflow task
 * can (the README roadmap's first item), so a test can recover a run stuck that way. Only runs: the worker catalog
 * on the same task queue stays as the shipped code records it.
 */
export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      handleSignal(input, next) {
        if (workflowInfo().workflowType === 'agentRun') upsertMemo({ divergedFromShippedCode: true });
        return next(input);
      },
    },
  ],
});
