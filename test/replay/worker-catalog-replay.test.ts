import { describe, expect, it } from 'vitest';
import { replayHistories } from '../../src/testing/replay-histories.js';
import { workerCatalogHistories } from '../helpers/replay-histories.js';

describe('replaying a recorded worker catalog', () => {
  /**
   * `announced-and-lapsed` was recorded before `lapse-by-timer` (lapses judged by the clock of the tasks that woke the
   * workflow: that rule's old side); `lapsed-by-timer` lapses the same announcement by a timer of its own;
   * `continued-as-suggested` and `suggestion-read-while-query-waits` continue as new where Temporal first suggested it,
   * and one task later, the announcement that brought the suggestion applied to answer a query under the task before's;
   * `announced-again-by-timer` replaces a worker's lapse with a new announcement's, the first left to fire for nothing.
   */
  it('reproduces the workflow that keeps what the workers serve (two announcements, one lapsed), so a nondeterministic change fails', async () => {
    expect(await replayHistories(workerCatalogHistories)).toEqual([
      'announced-again-by-timer.json',
      'announced-and-lapsed.json',
      'continued-as-suggested.json',
      'lapsed-by-timer.json',
      'suggestion-read-while-query-waits.json',
    ]);
  });
});
