import { defaultPayloadConverter } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../../src/security/aes-gcm-payload-codec.js';
import {
  closedRunMemo,
  closedRunMemoKey,
  closedRunRecord,
  eventsAfter,
  isClosedRunRecord,
  maxPlainClosedRunRecordBytes,
  maxRecordedOutputBytes,
  readClosedRunMemo,
  recordedEventsAfter,
  withOutput,
} from '../../../src/shared/closed-run-record.js';
import type { ClosedRunRecord } from '../../../src/shared/closed-run-record.js';
import { RelayError } from '../../../src/shared/errors.js';
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

/** A record of `count` tool results, each like the ones a tool-calling run logs. */
function recordOf(count: number): ClosedRunRecord {
  const events = Array.from({ length: count }, (_, index) => toolSucceeded(index + 1, `{"sum":${index * 7}}`));
  return closedRunRecord({ ...snapshot, lastEventSeq: count }, events);
}

/** The memo value of a record long enough to be deflated. */
function deflatedMemoOf(record: ClosedRunRecord): Uint8Array {
  const memo = closedRunMemo(record);
  if (!(memo instanceof Uint8Array)) throw new Error('The record was expected to be long enough to be deflated');
  return memo;
}

const jsonBytes = (value: unknown) => Buffer.byteLength(JSON.stringify(value));

function thrownBy(read: () => unknown): unknown {
  try {
    read();
  } catch (error) {
    return error;
  }
  return undefined;
}

describe('a closed run memo', () => {
  const long = recordOf(100);
  const deflated = deflatedMemoOf(long);

  it('holds a record of up to 4 KiB of JSON as it is, readable in the Temporal UI', () => {
    const small = recordOf(2);
    expect(jsonBytes(small)).toBeLessThanOrEqual(maxPlainClosedRunRecordBytes);
    expect(closedRunMemo(small)).toBe(small);
  });

  it('deflates a longer record to a fraction of its bytes and reads it back equal', () => {
    expect(jsonBytes(long)).toBeGreaterThan(maxPlainClosedRunRecordBytes);
    expect(deflated.byteLength).toBeLessThan(jsonBytes(long) / 4);
    expect(readClosedRunMemo(deflated, 'run_1')).toEqual(long);
  });

  it('deflates the same record to the same bytes every time, as workflow code must', () => {
    expect(closedRunMemo(recordOf(100))).toEqual(deflated);
  });

  it('still reads the plain record every run wrote before deflating, and nothing from other values', () => {
    expect(readClosedRunMemo(JSON.parse(JSON.stringify(long)), 'run_1')).toEqual(long);
    expect(readClosedRunMemo(undefined, 'run_1')).toBeUndefined();
    expect(readClosedRunMemo({ snapshot: {}, events: [] }, 'run_1')).toBeUndefined();
  });

  it('comes back as the same bytes through the default payload converter, and through an encrypting codec', async () => {
    const payload = defaultPayloadConverter.toPayload(deflated);
    expect(Buffer.from(payload.metadata?.['encoding'] ?? []).toString()).toBe('binary/plain');
    const codec = new AesGcmPayloadCodec({ keys: { k1: Buffer.alloc(32, 7).toString('base64') } });
    const [encrypted] = await codec.encode([payload]);
    const [decrypted] = await codec.decode([encrypted!]);
    expect(readClosedRunMemo(defaultPayloadConverter.fromPayload(decrypted!), 'run_1')).toEqual(long);
  });

  it('reports deflated bytes that do not inflate to a record as payload_corrupt, not as no record', () => {
    const flipped = deflated.slice();
    const middle = Math.floor(flipped.length / 2);
    flipped[middle] = (flipped[middle] ?? 0) ^ 0xff;
    const notARecord = deflatedMemoOf({ ...long, snapshot: {} } as ClosedRunRecord);
    const cases: Array<[Uint8Array, string]> = [
      [deflated.subarray(0, deflated.length / 2), 'unexpected EOF'],
      // A flipped bit inside the deflated data often still inflates; the checksum catches it.
      [flipped, 'Adler-32 checksum does not match'],
      [notARecord, 'the inflated JSON is not a closed run record'],
    ];
    for (const [corrupt, reason] of cases) {
      const error = thrownBy(() => readClosedRunMemo(corrupt, 'run_1'));
      expect(RelayError.isInstance(error) && error.code).toBe('payload_corrupt');
      const { message, details } = error as RelayError;
      expect(message).toContain(`memo of run run_1 (${closedRunMemoKey}) does not inflate to a record: `);
      expect(message).toContain(reason);
      expect(details).toEqual({ runId: 'run_1', memoKey: closedRunMemoKey, bytes: corrupt.byteLength });
    }
  });
});
