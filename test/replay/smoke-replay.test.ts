import path from 'node:path';
import { DeterminismViolationError } from '@temporalio/workflow';
import { describe, expect, it } from 'vitest';
import { HistoryReplayError, replayHistories } from '../../src/testing/replay-histories.js';
import { bundleWorkflows } from '../helpers/temporal-test-env.js';

const smokeHistories = path.join(import.meta.dirname, '../fixtures/histories/smoke');
const smokeFixtures = path.join(import.meta.dirname, '../fixtures/smoke');

describe('replaying recorded smoke histories', () => {
  it('replays every recorded history with the workflow code that produced it', async () => {
    const replayed = await replayHistories(smokeHistories, {
      workflowBundle: await bundleWorkflows(path.join(smokeFixtures, 'smoke-workflow.ts')),
    });
    // One recorded by the harness test (handle.fetchHistory), one by `temporal workflow show --output json`.
    expect(replayed).toEqual(['smoke-workflow-cli.json', 'smoke-workflow.json']);
  });

  it('names each history that a changed workflow no longer reproduces, with a DeterminismViolationError', async () => {
    const replay = replayHistories(smokeHistories, {
      workflowBundle: await bundleWorkflows(path.join(smokeFixtures, 'smoke-workflow-changed.ts')),
    });
    const error = await replay.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(error).toBeInstanceOf(HistoryReplayError);
    const { failures, message } = error as HistoryReplayError;
    expect(failures.map(({ file }) => file)).toEqual(['smoke-workflow-cli.json', 'smoke-workflow.json']);
    for (const { error: cause } of failures) expect(cause).toBeInstanceOf(DeterminismViolationError);
    expect(message).toContain('smoke-workflow.json: DeterminismViolationError');
  });
});
