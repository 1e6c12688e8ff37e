import { describe, expect, it } from 'vitest';
import { replayHistories } from '../../src/testing/replay-histories.js';
import { workerCatalogHistories } from '../helpers/replay-histories.js';

describe('replaying a recorded worker catalog', () => {
  it('reproduces the workflow that keeps what the workers serve (two announcements, one lapsed), so a nondeterministic change fails', async () => {
    expect(await replayHistories(workerCatalogHistories)).toEqual(['announced-and-lapsed.json']);
  });
});
