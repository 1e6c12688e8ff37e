import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RelayError } from '../../src/shared/errors.js';
import { maxPromptChars } from '../../src/shared/run-input-schema.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { defaultMaxEventsKept, RunState } from '../../workflows/run-state.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';

const kit = useRelayTestKit();

const input = { tenantId: 'acme', model: 'scripted:test', prompt: 'hi' } as const;

function emitMany(run: RunState, count: number): void {
  for (let index = 0; index < count; index++) run.emit({ type: 'run_cancelled' });
}

describe('limits', () => {
  it('refuses a prompt over the limit before the run starts, naming the field and the limit', async () => {
    const error = await kit.client
      .startRun({ ...input, prompt: 'x'.repeat(maxPromptChars + 1) })
      .catch((caught: unknown) => caught);
    expect(RelayError.isInstance(error) && error.code).toBe('invalid_input');
    expect((error as Error).message).toContain(`Too long: at most ${maxPromptChars} characters are accepted`);
    expect((error as RelayError).details?.['issues']).toEqual([expect.objectContaining({ path: 'prompt' })]);
  });

  it('keeps the newest events in memory and leads the events query with how many were dropped', () => {
    const run = new RunState('run_1', input, undefined, { maxEventsKept: 3 });
    emitMany(run, 5);
    expect(run.eventsAfter(0)).toEqual([
      expect.objectContaining({ type: 'events_dropped', seq: 2, dropped: 2, firstKeptSeq: 3 }),
      expect.objectContaining({ seq: 3 }),
      expect.objectContaining({ seq: 4 }),
      expect.objectContaining({ seq: 5 }),
    ]);
    expect(run.eventsAfter(1)[0]).toMatchObject({ type: 'events_dropped', dropped: 1 });
    expect(run.eventsAfter(2).map((event) => event.seq)).toEqual([3, 4, 5]);
    expect(run.snapshot().lastEventSeq).toBe(5);
  });

  it(`bounds the event log at ${defaultMaxEventsKept} events by default`, () => {
    const run = new RunState('run_1', input);
    emitMany(run, defaultMaxEventsKept + 5);
    const events = run.eventsAfter(0);
    expect(events).toHaveLength(defaultMaxEventsKept + 1);
    expect(events[0]).toMatchObject({ type: 'events_dropped', dropped: 5, firstKeptSeq: 6 });
    expect(run.carry().events).toHaveLength(1_000);
  });

  it('cuts an oversized tool result before it reaches history', async () => {
    const big = defineTool({
      name: 'big',
      description: 'Return a lot.',
      inputSchema: z.object({}),
      execute: async () => ({ blob: 'y'.repeat(200_000) }),
    });
    const { client, stop } = await kit.startWorker({
      tools: [big],
      models: { scripted: scriptedModel([{ toolCalls: [{ id: 'c1', name: 'big', input: {} }] }, { text: 'ok' }]) },
    });
    try {
      const { runId } = await client.startRun(input);
      await client.result(runId);
      const succeeded = (await client.events(runId)).find((event) => event.type === 'tool_succeeded');
      expect(succeeded).toMatchObject({ truncated: true });
      expect(JSON.stringify(succeeded).length).toBeLessThan(40_000);
    } finally {
      await stop();
    }
  });
});
