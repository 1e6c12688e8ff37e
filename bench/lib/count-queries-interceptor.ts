/**
 * A workflow interceptor for bench/watchers.ts: every query that reaches a run's workflow code on the worker
 * (Relay-E's snapshot and events queries alike) is reported to the worker through a sink, so the benchmark counts
 * the queries the worker answered, not the requests clients sent.
 */
import { proxySinks } from '@temporalio/workflow';
import type { Sinks, WorkflowInterceptorsFactory } from '@temporalio/workflow';

export interface QueryCountSinks extends Sinks {
  queryCounter: { answered(queryName: string): void };
}

const { queryCounter } = proxySinks<QueryCountSinks>();

export const interceptors: WorkflowInterceptorsFactory = () => ({
  inbound: [
    {
      handleQuery(input, next) {
        queryCounter.answered(input.queryName);
        return next(input);
      },
    },
  ],
});
