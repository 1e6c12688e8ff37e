import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { latch } from '../helpers/latch.js';
import { eventTypes, useRelayTestKit } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/**
 * A tool that answers once the test releases it and says whether it saw `ctx.signal` abort by then: released right
 * after the cancellation is recorded, it ends before a heartbeat can carry the cancellation to it.
 */
function holdingTool() {
  const held = latch();
  const sawAbort: boolean[] = [];
  const tool = defineTool({
    name: 'held',
    description: 'Answers when the test lets it.',
    inputSchema: z.object({}),
    execute: async (_input, ctx) => {
      held.reached();
      await held.released;
      sawAbort.push(ctx.signal.aborted);
      return { released: true };
    },
  });
  return { tool, held, sawAbort };
}

/** Cancels a run of `maxSteps` whose first step's only tool finishes as the cancellation arrives. */
async function cancelAsToolFinishes(maxSteps: number, fixture: string) {
  const { tool, held, sawAbort } = holdingTool();
  const turns = [{ toolCalls: [{ name: 'held', input: {} }] }, { text: 'never asked' }];
  const running = await kit.startWorker({ tools: [tool], models: { scripted: scriptedModel(turns) } });
  try {
    const { client } = running;
    const { runId } = await client.startRun({ ...base, prompt: 'hold', maxSteps });
    await held.started;
    await client.cancel(runId);
    held.release();
    const outcome = await client.result(runId).then(
      (result) => `completed: ${result.stopReason}`,
      (error: unknown) => `threw: ${String(error)}`,
    );
    await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile(fixture));
    // The premise: the tool ended without learning of the cancellation.
    expect(sawAbort).toEqual([false]);
    return { outcome, snapshot: await client.getRun(runId), events: await client.events(runId) };
  } finally {
    await running.stop();
  }
}

describe('a cancellation that arrives as the step’s only tool finishes', () => {
  it('cancels a run at its last step instead of completing it with max_steps', async () => {
    const { outcome, snapshot, events } = await cancelAsToolFinishes(1, 'cancelled-as-last-tool-finished');
    expect(outcome).toMatch(/^threw: .*cancel/i);
    expect(snapshot).toMatchObject({ status: 'cancelled', stopReason: 'cancelled', step: 1 });
    expect(eventTypes(events)).toEqual([
      'run_started',
      'model_responded',
      'tool_call_validated',
      'tool_succeeded',
      'run_cancelled',
    ]);
  });

  it('cancels a run before a next step whose model is never called', async () => {
    const { outcome, snapshot, events } = await cancelAsToolFinishes(2, 'cancelled-as-tool-finished');
    expect(outcome).toMatch(/^threw: .*cancel/i);
    expect(snapshot).toMatchObject({ status: 'cancelled', stopReason: 'cancelled', step: 1 });
    expect(eventTypes(events)).toEqual([
      'run_started',
      'model_responded',
      'tool_call_validated',
      'tool_succeeded',
      'run_cancelled',
    ]);
  });
});
