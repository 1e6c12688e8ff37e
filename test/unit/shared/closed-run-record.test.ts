import { describe, expect, it } from 'vitest';
import {
  closedRunRecord,
  eventsAfter,
  isClosedRunRecord,
  maxRecordedOutputBytes,
  recordedEventsAfter,
  withOutput,
} from '../../../src/shared/closed-run-record.js';
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
    expect(closedRunRecord(snapshot, events, { maxEventBytes: 10_000 }).events).toEqual(events);
  });

  it('drops the oldest events past the byte budget and reads back with an events_dropped marker', () => {
    const events = [1, 2, 3, 4].map((seq) => toolSucceeded(seq, 'x'.repeat(100)));
    const eventBytes = JSON.stringify(events[0]).length;
    const record = closedRunRecord(snapshot, events, { maxEventBytes: eventBytes * 2 + 10 });
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

  it('leaves a long output to the run result and reads back the same snapshot and events once it is put back', () => {
    const output = 'o'.repeat(maxRecordedOutputBytes + 1);
    const long = { ...snapshot, output, lastEventSeq: 3 };
    const at = '2026-01-01T00:00:00.000Z';
    const events: RunEvent[] = [
      toolSucceeded(1, 'small'),
      { type: 'model_responded', seq: 2, at, step: 2, text: output, toolCallCount: 0 },
      { type: 'run_completed', seq: 3, at, step: 2, stopReason: 'final_answer', output },
    ];
    const record = closedRunRecord(long, events, { outputInResult: true });
    expect(JSON.stringify(record).length).toBeLessThan(2_000);
    expect(record.outputInResult).toEqual({
      bytes: output.length,
      fields: [
        { seq: 2, field: 'text' },
        { seq: 3, field: 'output' },
      ],
    });
    expect(withOutput(record, output)).toEqual({ snapshot: long, events });
    // Records written before the option keep the output where it was.
    expect(closedRunRecord(long, events).snapshot.output).toBe(output);
  });

  it('reads a record none of whose events fitted as a marker up to the last event, not as an empty log', () => {
    const record = closedRunRecord({ ...snapshot, lastEventSeq: 7, step: 2, updatedAt: 'x' }, [], {});
    expect(recordedEventsAfter(record, 0)).toEqual([
      { type: 'events_dropped', seq: 7, at: 'x', step: 2, dropped: 7, firstKeptSeq: 8 },
    ]);
    expect(recordedEventsAfter(record, 7)).toEqual([]);
  });

  it('tells a record from other memo values', () => {
    expect(isClosedRunRecord(closedRunRecord(snapshot, []))).toBe(true);
    expect(isClosedRunRecord('a prompt summary')).toBe(false);
    expect(isClosedRunRecord({ snapshot: {}, events: [] })).toBe(false);
  });
});
