import { describe, expect, it } from 'vitest';
import { closedRunRecord, eventsAfter, isClosedRunRecord } from '../../../src/shared/closed-run-record.js';
import type { RunEvent, RunSnapshot } from '../../../src/shared/run-types.js';

const snapshot = { runId: 'run_1', tenantId: 'acme', status: 'completed' } as RunSnapshot;

function toolSucceeded(seq: number, text: string): RunEvent {
  return {
    type: 'tool_succeeded',
    seq,
    at: '2026-01-01T00:00:00.000Z',
    step: 1,
    toolCallId: 'c',
    toolName: 't',
    output: text,
  };
}

describe('a closed run record', () => {
  it('keeps every event when they fit the byte budget', () => {
    const events = [1, 2, 3].map((seq) => toolSucceeded(seq, 'small'));
    expect(closedRunRecord(snapshot, events, 10_000).events).toEqual(events);
  });

  it('drops the oldest events past the byte budget and reads back with an events_dropped marker', () => {
    const events = [1, 2, 3, 4].map((seq) => toolSucceeded(seq, 'x'.repeat(100)));
    const eventBytes = JSON.stringify(events[0]).length;
    const record = closedRunRecord(snapshot, events, eventBytes * 2 + 10);
    expect(record.events.map((event) => event.seq)).toEqual([3, 4]);
    expect(eventsAfter(record.events, 0)[0]).toMatchObject({
      type: 'events_dropped',
      seq: 2,
      dropped: 2,
      firstKeptSeq: 3,
    });
    expect(eventsAfter(record.events, 2).map((event) => event.seq)).toEqual([3, 4]);
  });

  it('leaves out a marker it was given, since reading the record makes a fresh one', () => {
    const marker: RunEvent = { type: 'events_dropped', seq: 4, at: 'x', step: 1, dropped: 4, firstKeptSeq: 5 };
    expect(closedRunRecord(snapshot, [marker, toolSucceeded(5, 'a')]).events.map((event) => event.seq)).toEqual([5]);
  });

  it('tells a record from other memo values', () => {
    expect(isClosedRunRecord(closedRunRecord(snapshot, []))).toBe(true);
    expect(isClosedRunRecord('a prompt summary')).toBe(false);
    expect(isClosedRunRecord({ snapshot: {}, events: [] })).toBe(false);
  });
});
