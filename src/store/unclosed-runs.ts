import { RelayError } from '../shared/errors.js';
import type { UnclosedRun, UnclosedRunsQuery } from './payload-store.js';

/**
 * The page of `runs` a query asks for, for stores that list their unclosed runs in memory: oldest first by first
 * store, then by tenant and run id, so that every run has one place in the order and paging never skips one.
 */
export function pageOfUnclosedRuns(runs: Iterable<UnclosedRun>, query: UnclosedRunsQuery): UnclosedRun[] {
  const limit = checkedUnclosedRunsLimit(query);
  const after = query.after;
  return [...runs]
    .filter((run) => after === undefined || compareUnclosedRuns(run, after) > 0)
    .sort(compareUnclosedRuns)
    .slice(0, limit)
    .map((run) => ({ tenantId: run.tenantId, runId: run.runId, firstStoredAt: new Date(run.firstStoredAt) }));
}

/** The query's limit, refused with `invalid_input` unless it is a positive integer. */
export function checkedUnclosedRunsLimit(query: UnclosedRunsQuery): number {
  if (!Number.isSafeInteger(query.limit) || query.limit <= 0) {
    throw new RelayError('invalid_input', `listUnclosedRuns needs a positive integer limit, not ${query.limit}`);
  }
  return query.limit;
}

function compareUnclosedRuns(left: UnclosedRun, right: UnclosedRun): number {
  return (
    left.firstStoredAt.getTime() - right.firstStoredAt.getTime() ||
    compareText(left.tenantId, right.tenantId) ||
    compareText(left.runId, right.runId)
  );
}

function compareText(left: string, right: string): number {
  return left < right ? -1 : left > right ? 1 : 0;
}
