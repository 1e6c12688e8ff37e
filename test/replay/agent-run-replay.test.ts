import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { replayHistories } from '../../src/testing/replay-histories.js';

const histories = path.join(import.meta.dirname, '../fixtures/histories/agent-run');

/** Paths recorded before the exact identity and limit rules (`exact-identities-and-limits`): the patch's old side. */
const beforeExactIds = [
  'approval-timeout',
  'approved-by-signal',
  'approved-with-edit',
  'approved',
  'cancelled-awaiting-approval',
  'cancelled',
  'continue-as-new-first-execution',
  'continue-as-new-last-execution',
  'invalid-input-retry',
  'max-steps',
  'model-failed',
  'non-json-arguments',
  'parallel-approvals',
  'parallel-calls',
  'rejected',
  'tool-failed',
  'unknown-tool',
  'valid-call',
  'valid-call-local-catalog',
].map((name) => `before-exact-ids/${name}.json`);

/** Paths recorded under the exact rules: the patch's new side. */
const exact = [
  'approval-timeout',
  'approved-by-signal',
  'approved-with-edit',
  'approved',
  'cancelled-while-waiting-and-running',
  'cancelled',
  'continue-as-new-first-execution',
  'continue-as-new-last-execution',
  'decided-by-update-and-signal',
  'invalid-input-retry',
  'lean-history',
  'lean-history-compacted',
  'long-output-in-result',
  'max-steps',
  'model-context-by-reference',
  'model-context-resent',
  'model-response-over-limit',
  'parallel-approvals',
  'parallel-calls',
  'payload-too-large',
  'refined-input-refused-before-approval',
  'rejected-with-reason',
  'rejected',
  'reused-provider-ids',
  'split-first-task-failed',
  'unknown-tool',
  'valid-call',
].map((name) => `exact/${name}.json`);

describe('replaying recorded agent runs', () => {
  it('reproduces every recorded path with the workflow code bundled as workers bundle it, so a nondeterministic change fails the build', async () => {
    const replayed = await replayHistories(histories);
    expect(replayed).toEqual(expect.arrayContaining([...beforeExactIds, ...exact]));
  });
});
