import { describe, expect, it } from 'vitest';
import type { AgentRunInput } from '../../../src/shared/run-types.js';
import { compactTranscript } from '../../../src/shared/transcript-budget.js';
import type { TranscriptMessage } from '../../../src/shared/transcript.js';
import { assignCallIds } from '../../../src/shared/call-ids.js';
import { boundCarriedState, maxContinueAsNewBytes } from '../../../workflows/carried-state.js';
import { maxCarriedEventBytes, maxEventPageBytes, RunState } from '../../../workflows/run-state.js';
import type { EventPage } from '../../../workflows/run-state.js';

const input: AgentRunInput = { tenantId: 'acme', model: 'scripted:test', prompt: 'hi' };

function runWithEvents(count: number, textLength: number): RunState {
  const run = new RunState('run_1', input);
  for (let index = 0; index < count; index++) {
    run.emit(
      { type: 'model_responded', text: 'x'.repeat(textLength), toolCallCount: 0 },
      { at: '2026-01-01T00:00:00.000Z' },
    );
  }
  return run;
}

/** The JSON size of a page's only event, or 0 when it has more than one. */
function eventJsonBytes(page: EventPage): number {
  return page.events.length === 1 ? JSON.stringify(page.events[0]).length : 0;
}

describe('RunState event pages', () => {
  it('cuts a page at the byte limit but always returns at least one event, with where to resume', () => {
    const run = runWithEvents(10, 1_000);
    const page = run.eventPage({ after: 0, maxBytes: 2_500 });
    expect(page.events.map((event) => event.seq)).toEqual([1, 2]);
    expect(page).toMatchObject({ nextAfter: 2, hasMore: true });
    const tiny = run.eventPage({ after: 2, maxBytes: 1 });
    expect(tiny.events.map((event) => event.seq)).toEqual([3]);
    expect(run.eventPage({ after: 8, limit: 5 })).toMatchObject({ nextAfter: 10, hasMore: false });
  });

  it('counts the envelope into a page, never answers more than maxEventPageBytes, and sends a larger event alone', () => {
    const run = runWithEvents(3, 600_000);
    const pages = [0, 1, 2].map((after) => run.eventPage({ after, maxBytes: 10_000_000 }));
    expect(pages.map((page) => page.events.map((event) => event.seq))).toEqual([[1], [2], [3]]);
    const small = runWithEvents(4, 1_000);
    const eventBytes = JSON.stringify(small.eventPage({ after: 0, limit: 1 }).events[0]).length;
    // Two events and their envelope need more than twice one event's bytes: only one fits in exactly that.
    expect(small.eventPage({ after: 0, maxBytes: eventBytes * 2 }).events).toHaveLength(1);
    for (const page of [small.eventPage(), ...pages]) {
      expect(JSON.stringify(page).length).toBeLessThanOrEqual(Math.max(maxEventPageBytes, eventJsonBytes(page) + 64));
    }
  });

  it('never lets an event time go backwards along the sequence', () => {
    const run = new RunState('run_1', input);
    run.emit({ type: 'run_cancelled' }, { at: '2099-01-01T00:00:05.000Z' });
    const second = run.emit({ type: 'run_cancelled' }, { at: '2099-01-01T00:00:01.000Z' });
    expect(second.at).toBe('2099-01-01T00:00:05.000Z');
  });

  it('carries events into the next execution by size, not by count', () => {
    const carried = runWithEvents(500, 2_000).carry();
    const bytes = JSON.stringify(carried.events).length;
    expect(bytes).toBeLessThanOrEqual(maxCarriedEventBytes);
    expect(carried.events.at(-1)?.seq).toBe(500);
    expect(carried.events.length).toBeLessThan(500);
  });
});

describe('boundCarriedState', () => {
  it('fits a large state within the continue-as-new limit by compacting the transcript', () => {
    const run = runWithEvents(10, 100);
    const transcript: TranscriptMessage[] = [{ role: 'user', content: 'go' }];
    for (let step = 0; step < 40; step++) {
      transcript.push({
        role: 'assistant',
        content: 'y'.repeat(30_000),
        toolCalls: [{ id: `c${step}`, name: 't', input: {} }],
      });
      transcript.push({
        role: 'tool',
        toolCallId: `c${step}`,
        toolName: 't',
        result: { success: true, toolName: 't', data: 'z'.repeat(30_000) },
      });
    }
    run.transcript = transcript;
    const bounded = boundCarriedState(input, run.carry(), 1_572_864);
    expect(JSON.stringify([input, bounded]).length).toBeLessThanOrEqual(maxContinueAsNewBytes);
  });

  it('fails with payload_too_large when even the newest turn cannot fit', () => {
    const run = runWithEvents(1, 10);
    run.transcript = [
      { role: 'user', content: 'u'.repeat(1_000_000) },
      { role: 'assistant', content: 'a'.repeat(1_000_000) },
    ];
    expect(() => boundCarriedState(input, run.carry(), 1_572_864)).toThrow(/over what it can carry/);
  });
});

describe('compactTranscript with elideTexts', () => {
  it('elides older assistant texts and failure details once old outputs are not enough, and reports what is still over', () => {
    const transcript: TranscriptMessage[] = [
      { role: 'user', content: 'go' },
      { role: 'assistant', content: 'w'.repeat(5_000), toolCalls: [{ id: 'a', name: 't', input: {} }] },
      {
        role: 'tool',
        toolCallId: 'a',
        toolName: 't',
        result: { success: false, toolName: 't', error: 'e'.repeat(3_000), errorType: 'execution' },
      },
      { role: 'assistant', content: 'now', toolCalls: [{ id: 'b', name: 't', input: {} }] },
      {
        role: 'tool',
        toolCallId: 'b',
        toolName: 't',
        result: { success: true, toolName: 't', data: 'n'.repeat(2_000) },
      },
    ];
    const compaction = compactTranscript(transcript, 3_500, { elideTexts: true });
    expect(compaction).toMatchObject({ elidedResults: 0, elidedTexts: 2 });
    expect(compaction?.bytesAfter).toBeLessThanOrEqual(3_500);
    const overBudget = compactTranscript(transcript, 500, { elideTexts: true });
    expect(overBudget?.bytesAfter).toBeGreaterThan(500);
  });
});

describe('assignCallIds', () => {
  it('names every call call_<step>_<index> and keeps usable provider ids to send back', () => {
    const calls = assignCallIds(
      [
        { id: 'p', name: 'a', input: {} },
        { id: 'p', name: 'a', input: {} },
        { id: '', name: 'a', input: {} },
        { name: 'a', input: {} },
      ],
      7,
    );
    expect(calls.map((call) => [call.id, call.providerCallId])).toEqual([
      ['call_7_0', 'p'],
      ['call_7_1', undefined],
      ['call_7_2', undefined],
      ['call_7_3', undefined],
    ]);
  });
});
