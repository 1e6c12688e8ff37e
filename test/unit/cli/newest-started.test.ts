import type { WorkflowExecutionInfo } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { newestStarted } from '../../../src/cli/runs-command.js';

/** A listing entry with only the times the ordering reads. */
function execution(workflowId: string, startMinute: number, closeMinute?: number): WorkflowExecutionInfo {
  const at = (minute: number) => new Date(Date.UTC(2026, 0, 1, 0, minute));
  return {
    workflowId,
    startTime: at(startMinute),
    ...(closeMinute === undefined ? {} : { closeTime: at(closeMinute) }),
  } as WorkflowExecutionInfo;
}

/** Yields in visibility's order (open first, then closed by close time, newest first) and counts what was read. */
function listing(executions: WorkflowExecutionInfo[]) {
  const read: string[] = [];
  return {
    read,
    async *[Symbol.asyncIterator]() {
      for (const entry of executions) {
        read.push(entry.workflowId);
        yield entry;
      }
    },
  };
}

describe('relay-e runs order', () => {
  it('puts a closed run started after an open one before it', async () => {
    const runs = listing([execution('old-open', 1), execution('new-closed', 5, 6)]);
    expect((await newestStarted(runs, 10)).map((run) => run.workflowId)).toEqual(['new-closed', 'old-open']);
  });

  it('keeps the newest by start time among long and short runs, and stops reading once no later one can qualify', async () => {
    const runs = listing([
      execution('open', 2),
      execution('long', 1, 30),
      execution('short-late', 20, 21),
      execution('short-mid', 10, 11),
      execution('older', 3, 4),
      execution('oldest', 0, 1),
    ]);
    expect((await newestStarted(runs, 2)).map((run) => run.workflowId)).toEqual(['short-late', 'short-mid']);
    expect(runs.read).toEqual(['open', 'long', 'short-late', 'short-mid', 'older']);
  });
});
