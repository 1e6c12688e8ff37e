import { describe, expect, it } from 'vitest';
import { replayHistories } from '../../src/testing/replay-histories.js';
import { approvalNoticeHistories } from '../helpers/replay-histories.js';

describe('replaying recorded notice deliveries', () => {
  it('reproduces the workflow that delivers the notices a run handed off, so a nondeterministic change fails', async () => {
    expect(await replayHistories(approvalNoticeHistories)).toEqual(['delivered-after-its-run.json']);
  });
});
