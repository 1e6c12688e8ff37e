import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { relayWorkflowsPath } from '../../src/worker/relay-workflows.js';
import { replayHistoryFixtures } from '../helpers/replay-histories.js';

const histories = path.join(import.meta.dirname, '../fixtures/histories/agent-run');

describe('replaying recorded agent runs', () => {
  it('reproduces every recorded path with the current workflow code, so a nondeterministic change fails the build', async () => {
    const replayed = await replayHistoryFixtures(histories, { workflowsPath: relayWorkflowsPath() });
    expect(replayed).toEqual(
      expect.arrayContaining([
        'approval-timeout.json',
        'approved-by-signal.json',
        'approved-with-edit.json',
        'approved.json',
        'cancelled-awaiting-approval.json',
        'cancelled.json',
        'continue-as-new-first-execution.json',
        'continue-as-new-last-execution.json',
        'invalid-input-retry.json',
        'max-steps.json',
        'model-failed.json',
        'non-json-arguments.json',
        'parallel-approvals.json',
        'parallel-calls.json',
        'rejected.json',
        'tool-failed.json',
        'unknown-tool.json',
        'valid-call.json',
      ]),
    );
  });
});
