import { describe, expect, it } from 'vitest';
import type { AgentRunInput } from '../../src/shared/run-types.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { boundCarriedState, maxContinueAsNewBytes } from '../../workflows/carried-state.js';
import type { CompactionLog } from '../../workflows/carried-state.js';
import { RunState } from '../../workflows/run-state.js';

/** A run input whose config takes half a megabyte: with a full transcript, the carried state is over the limit. */
const input: AgentRunInput = {
  tenantId: 'acme',
  model: 'scripted:test',
  prompt: 'hi',
  config: { blob: 'c'.repeat(500_000) },
};

/** A run of 40 steps, each with a 30,000-character answer and output, and a few events. */
function longRun(): RunState {
  const run = new RunState('run_1', input);
  const transcript: TranscriptMessage[] = [{ role: 'user', content: 'go' }];
  for (let step = 0; step < 40; step++) {
    const toolCalls = [{ id: `c${step}`, name: 't', input: {} }];
    transcript.push({ role: 'assistant', content: 'y'.repeat(30_000), toolCalls });
    const result = { success: true as const, toolName: 't', data: 'z'.repeat(30_000) };
    transcript.push({ role: 'tool', toolCallId: `c${step}`, toolName: 't', result });
  }
  run.transcript = transcript;
  for (let index = 0; index < 5; index++) {
    run.emit({ type: 'model_responded', text: 'x', toolCallCount: 0 }, { at: '2026-01-01T00:00:00.000Z' });
  }
  return run;
}

/** A log of `run`'s compactions, as a run under `carried-compaction-logged` keeps it. */
function logOf(run: RunState): CompactionLog {
  return {
    logs: () => true,
    emit: (compaction) => run.emit({ type: 'transcript_compacted', ...compaction }, { at: run.latestAt }),
  };
}

describe('boundCarriedState with a compaction log', () => {
  it('carries an event for each compaction, after the events dropped for room, within the limit', () => {
    const run = longRun();
    const bounded = boundCarriedState(input, run.carry(), 1_572_864, logOf(run));
    // One to the transcript's own budget, one more to fit beside the large input; the older events made room.
    expect(bounded.events.map((event) => event.type)).toEqual(['transcript_compacted', 'transcript_compacted']);
    expect(bounded.lastEventSeq).toBe(bounded.events.at(-1)?.seq);
    expect(bounded.lastEventSeq).toBe(7);
    expect(JSON.stringify([input, bounded]).length).toBeLessThanOrEqual(maxContinueAsNewBytes);
  });

  it('carries the state as before where the run does not log them', () => {
    const run = longRun();
    const carried = run.carry();
    const bounded = boundCarriedState(input, carried, 1_572_864, { ...logOf(run), logs: () => false });
    expect(bounded).toEqual(boundCarriedState(input, carried, 1_572_864));
    expect(bounded.events.some((event) => event.type === 'transcript_compacted')).toBe(false);
    expect(bounded.lastEventSeq).toBe(carried.lastEventSeq);
  });
});
