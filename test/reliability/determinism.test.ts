import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import { bundleWorkflowCode, DefaultLogger } from '@temporalio/worker';
import { DeterminismViolationError } from '@temporalio/workflow';
import { z } from 'zod';
import { afterAll, describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { HistoryReplayError, loadHistories, replayHistories } from '../../src/testing/replay-histories.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { relayWorkflowsPath } from '../../src/worker/relay-workflows.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { agentRunHistories, currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { writeResults } from './reliability-kit.js';

const changedWorkflows = path.join(import.meta.dirname, '../fixtures/nondeterministic');
const figures: Record<string, unknown> = {};
const kit = useRelayTestKit();

afterAll(async () => {
  await writeResults('determinism', figures);
});

/** Replays the corpus against `workflowBundle` and returns each failing file with its error's class name. */
async function replayFailures(bundle: Parameters<typeof replayHistories>[1]): Promise<Map<string, Error>> {
  const outcome = await replayHistories(agentRunHistories, bundle).then(
    () => undefined,
    (error: unknown) => error,
  );
  expect(outcome).toBeInstanceOf(HistoryReplayError);
  return new Map((outcome as HistoryReplayError).failures.map(({ file, error }) => [file, error]));
}

describe('a deliberately nondeterministic change', () => {
  it('fails replay of every recorded history with DeterminismViolationError when a timer is added before the run', async () => {
    const corpus = await loadHistories(agentRunHistories);
    const failures = await replayFailures({ workflowsPath: path.join(changedWorkflows, 'agent-run-extra-timer.ts') });
    expect([...failures.keys()]).toEqual(corpus.map(({ file }) => file));
    for (const error of failures.values()) expect(error).toBeInstanceOf(DeterminismViolationError);
    figures['historiesInCorpus'] = corpus.length;
    figures['eventsInCorpus'] = corpus.reduce((sum, { history }) => sum + (history.events?.length ?? 0), 0);
    figures['extraTimerReplayFailures'] = failures.size;
  });

  it('fails replay of every recorded history when an interceptor schedules one activity more', async () => {
    const corpus = await loadHistories(agentRunHistories);
    const workflowBundle = await bundleWorkflowCode({
      workflowsPath: relayWorkflowsPath(),
      workflowInterceptorModules: [path.join(changedWorkflows, 'extra-activity-interceptor.ts')],
      logger: new DefaultLogger('WARN'),
    });
    const failures = await replayFailures({ workflowBundle });
    expect([...failures.keys()]).toEqual(corpus.map(({ file }) => file));
    for (const error of failures.values()) expect(error).toBeInstanceOf(DeterminismViolationError);
    figures['extraActivityReplayFailures'] = failures.size;
  });
});

describe('paths the recorded corpus also needs', () => {
  const flaky = defineTool({
    name: 'flaky_lookup',
    description: 'A lookup whose backend is down.',
    inputSchema: z.object({ id: z.string() }),
    retry: { maximumAttempts: 2, initialInterval: '100ms' },
    execute: () => {
      throw new Error('backend unavailable');
    },
  });

  async function startWorker(script: readonly ScriptedTurn[]) {
    return kit.startWorker({
      tools: [...createTestTools(createLedger()), flaky],
      models: { scripted: scriptedModel(script) },
    });
  }

  async function record(runId: string, name: string): Promise<void> {
    await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile(name));
  }

  it('fails the run with run_failed when the model fails for good', async () => {
    const { client, stop } = await startWorker([]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:none', prompt: 'hi' });
      await expect(client.result(runId)).rejects.toBeInstanceOf(WorkflowFailedError);
      const events = await client.events(runId);
      // The catalog and `run_started` come with the first model call's answer, which never came.
      expect(eventTypes(events)).toEqual(['run_failed']);
      const failed = events[0];
      expect(failed?.type === 'run_failed' ? failed.error : '').toContain('Scripted model has 0 turn(s)');
      await record(runId, 'model-failed');
    } finally {
      await stop();
    }
  });

  it('tells the model a tool failed after its retries ran out', async () => {
    const { client, stop } = await startWorker([
      { toolCalls: [{ id: 'look', name: 'flaky_lookup', input: { id: 'x' } }] },
      { text: 'the lookup failed' },
    ]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:flaky', prompt: 'look x up' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'the lookup failed' });
      const failed = (await client.events(runId)).find((event) => event.type === 'tool_failed');
      expect(failed).toMatchObject({ toolCallId: 'call_1_0', errorType: 'execution' });
      await record(runId, 'tool-failed');
    } finally {
      await stop();
    }
  });

  it('returns arguments that are not JSON to the model as a validation failure', async () => {
    const { client, stop } = await startWorker([
      { toolCalls: [{ id: 'sum', name: 'add', input: '{"a": 1, "b":' }] },
      { text: 'sorry' },
    ]);
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:json', prompt: 'add' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed' });
      const failed = (await client.events(runId)).find((event) => event.type === 'tool_validation_failed');
      expect(failed).toMatchObject({ issues: [expect.objectContaining({ code: 'invalid_json' })] });
      await record(runId, 'non-json-arguments');
    } finally {
      await stop();
    }
  });

  it('cancels a run that waits for approval without executing the call', async () => {
    const ledger = createLedger();
    const { client, stop } = await kit.startWorker({
      tools: createTestTools(ledger),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
        ]),
      },
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:pay', prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.cancel(runId);
      await expect(client.result(runId)).rejects.toBeInstanceOf(WorkflowFailedError);
      expect((await client.getRun(runId)).status).toBe('cancelled');
      expect(ledger.transfers).toEqual([]);
      await record(runId, 'cancelled-awaiting-approval');
    } finally {
      await stop();
    }
  });
});
