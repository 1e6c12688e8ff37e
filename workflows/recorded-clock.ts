import { CancellationScope, proxyActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../activities/index.js';
import type { RunContext } from './run-context.js';

// Retried until it answers: an event waiting for its time must not be dropped by a worker's passing trouble.
const { readClock } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { initialInterval: '1 second', maximumInterval: '10 seconds' },
});

/**
 * The worker's time, recorded in history by an activity, for an event that follows from no activity's result (a
 * decision, a failure, a cancellation): the clock of the activation that emits it can read differently later (see
 * RunState.emit). A regular activity, not a local one: a query answered by replay can run a local activity that
 * history has not recorded yet, and show a time the recorded run will not have. Not cancellable, so a cancelled run
 * records its end. Only for runs under the reads-from-history patch (see {@link usesRecordedTime}): it adds a command.
 */
export async function readRecordedTime(): Promise<string> {
  const { at } = await CancellationScope.nonCancellable(() => readClock());
  return at;
}

/**
 * Whether the run stamps such events with {@link readRecordedTime}. Runs from before stamp them with the clock, and
 * must not even await here: an await where they had none could reorder their commands on replay.
 */
export function usesRecordedTime(context: RunContext): boolean {
  return context.patches.readsFromHistory();
}
