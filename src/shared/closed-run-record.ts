import { strFromU8, strToU8, unzlibSync, zlibSync } from 'fflate';
import { errorMessage } from './error-message.js';
import { RelayError } from './errors.js';
import { newestWithinBytes, utf8ByteLength } from './payload-limits.js';
import type { RunEvent, RunSnapshot } from './run-types.js';

/** The memo key under which a run leaves its final snapshot and event log when it closes. */
export const closedRunMemoKey = 'relayClosedRun';

/**
 * The most bytes (as JSON) of events a closed run's record keeps; the oldest go first. Memos count against
 * Temporal's 2 MiB memo limit and travel with every visibility listing of the run.
 */
const maxClosedRunEventBytes = 256 * 1024;

/**
 * The longest output (its UTF-8 bytes) a closed run's record holds. A longer one stays where it already is, in the
 * run's result in history: a memo travels with every visibility listing of the run, and a page of runs with
 * answers near the model response limit (1 MiB) in their memos would not fit in one gRPC message.
 */
export const maxRecordedOutputBytes = 16 * 1024;

/** An event field that held the run's output, left out of a record whose output is in the run's result. */
export interface OutputField {
  seq: number;
  field: 'text' | 'output';
}

/** What a closed run leaves in its memo, so that it reads without a worker (decoded with the run's data converter). */
export interface ClosedRunRecord {
  snapshot: RunSnapshot;
  /** The newest events, oldest first, within {@link maxClosedRunEventBytes}; never a marker. */
  events: RunEvent[];
  /**
   * Present when the run's output was longer than {@link maxRecordedOutputBytes}: the snapshot's `output` and the
   * event fields listed here (a `model_responded` text, the `run_completed` output) are left out, as they hold that
   * same text, and a reader puts the run's result's output back in them ({@link withOutput}).
   */
  outputInResult?: { bytes: number; fields: OutputField[] };
}

/** Options of {@link closedRunRecord}. */
export interface ClosedRunRecordOptions {
  /** @default maxClosedRunEventBytes */
  maxEventBytes?: number;
  /**
   * Leave an output longer than {@link maxRecordedOutputBytes} to the run's result (see `outputInResult`).
   * @default false (how runs recorded before this option wrote their records, which replay as they were)
   */
  outputInResult?: boolean;
}

/** Builds a closed run's record from its final snapshot and the events it still keeps, cut to the byte budget. */
export function closedRunRecord(
  snapshot: RunSnapshot,
  events: readonly RunEvent[],
  options: ClosedRunRecordOptions = {},
): ClosedRunRecord {
  const maxEventBytes = options.maxEventBytes ?? maxClosedRunEventBytes;
  const output = snapshot.output;
  const outputBytes = output === undefined ? 0 : utf8ByteLength(output);
  const moveOutput = options.outputInResult === true && outputBytes > maxRecordedOutputBytes;
  const recorded = events.filter((event) => event.type !== 'events_dropped');
  // Strict even for the last event: the snapshot carries the output, and the memo must stay under 2 MiB.
  if (!moveOutput) return { snapshot, events: newestWithinBytes(recorded, maxEventBytes) };
  const withoutOutput = recorded.map((event) => {
    const field = outputFieldOf(event, output);
    return { event: field ? withoutField(event, field) : event, field };
  });
  const kept = newestWithinBytes(withoutOutput, maxEventBytes, ({ event }) => event);
  const fields = kept.flatMap(({ event, field }) => (field ? [{ seq: event.seq, field }] : []));
  const { output: _leftOut, ...rest } = snapshot;
  return {
    snapshot: rest,
    events: kept.map(({ event }) => event),
    outputInResult: { bytes: outputBytes, fields },
  };
}

/** The record as it would be with the output put back where {@link closedRunRecord} left it out. */
export function withOutput(record: ClosedRunRecord, output: string): ClosedRunRecord {
  const fields = new Map((record.outputInResult?.fields ?? []).map((entry) => [entry.seq, entry.field]));
  const events = record.events.map((event) => {
    const field = fields.get(event.seq);
    return field ? { ...event, [field]: output } : event;
  });
  return { snapshot: { ...record.snapshot, output }, events };
}

/** Which field of `event` holds the run's output, if one does. */
function outputFieldOf(event: RunEvent, output: string | undefined): OutputField['field'] | undefined {
  if (event.type === 'model_responded' && event.text === output) return 'text';
  if (event.type === 'run_completed' && event.output === output) return 'output';
  return undefined;
}

function withoutField(event: RunEvent, field: OutputField['field']): RunEvent {
  const { [field as keyof RunEvent]: _leftOut, ...rest } = event;
  return rest as RunEvent;
}

/**
 * The events of a closed run's record above `after`, led by an `events_dropped` marker when the record lost some of
 * them; when not even the newest event fitted in the record, the marker covers everything up to the last one.
 */
export function recordedEventsAfter(record: ClosedRunRecord, after = 0): RunEvent[] {
  if (record.events.length > 0) return eventsAfter(record.events, after);
  const { lastEventSeq, updatedAt, step } = record.snapshot;
  if (lastEventSeq <= after) return [];
  return [
    {
      type: 'events_dropped',
      seq: lastEventSeq,
      at: updatedAt,
      step,
      dropped: lastEventSeq - after,
      firstKeptSeq: lastEventSeq + 1,
    },
  ];
}

/**
 * The kept events with a sequence number above `after`, led by an `events_dropped` marker when some of the events
 * asked for are no longer kept; the marker's `seq` is the last dropped one, so resuming after it loses nothing more.
 */
export function eventsAfter(kept: readonly RunEvent[], after = 0): RunEvent[] {
  const newer = kept.filter((event) => event.seq > after);
  const oldest = kept[0];
  if (!oldest || oldest.seq - 1 <= after) return newer;
  const lastDropped = oldest.seq - 1;
  const marker: RunEvent = {
    type: 'events_dropped',
    seq: lastDropped,
    at: oldest.at,
    step: oldest.step,
    dropped: lastDropped - after,
    firstKeptSeq: oldest.seq,
  };
  return [marker, ...newer];
}

/**
 * The longest record (its JSON's UTF-8 bytes) a memo holds as it is, readable in the Temporal UI. A longer one is
 * deflated ({@link closedRunMemo}): the memo is written into the run's history and sent with every visibility
 * listing of the run, and an event log's repetitive JSON deflates to a fraction of its bytes.
 */
export const maxPlainClosedRunRecordBytes = 4 * 1024;

/**
 * What a closed run's memo holds: the record as it is, or its JSON deflated into zlib bytes. Temporal's default
 * payload converter stores bytes as a `binary/plain` payload and gives them back as a `Uint8Array`, which is how a
 * reader tells the forms apart.
 */
export type ClosedRunMemo = ClosedRunRecord | Uint8Array;

// Level 6, zlib's own default: on event logs the levels above it shrink the bytes by next to nothing more, and the
// levels below it leave a long log far larger for little time saved.
const deflateLevel = 6;

/**
 * The memo value for a record: itself up to {@link maxPlainClosedRunRecordBytes}, its JSON deflated above that.
 * Deterministic (it runs in workflow code): the same record gives the same bytes.
 */
export function closedRunMemo(record: ClosedRunRecord): ClosedRunMemo {
  const json = strToU8(JSON.stringify(record));
  return json.byteLength <= maxPlainClosedRunRecordBytes ? record : zlibSync(json, { level: deflateLevel });
}

/**
 * The record a closed run's memo value holds, in either form {@link closedRunMemo} writes (runs recorded before
 * deflating wrote the plain one); undefined for a value that is no record at all. Deflated bytes that do not inflate
 * to a record throw `payload_corrupt`: they were written as one, so reading them as "no record" would hide damage.
 */
export function readClosedRunMemo(value: unknown, runId: string): ClosedRunRecord | undefined {
  if (!(value instanceof Uint8Array)) return isClosedRunRecord(value) ? value : undefined;
  let record: unknown;
  try {
    record = JSON.parse(strFromU8(inflateChecked(value)));
  } catch (error) {
    throw corruptMemo(runId, value, errorMessage(error), error);
  }
  if (!isClosedRunRecord(record)) throw corruptMemo(runId, value, 'the inflated JSON is not a closed run record');
  return record;
}

/** Inflates zlib bytes and checks their Adler-32 trailer, which fflate leaves unchecked. */
function inflateChecked(bytes: Uint8Array): Uint8Array {
  const inflated = unzlibSync(bytes);
  const trailer = new DataView(bytes.buffer, bytes.byteOffset + bytes.byteLength - 4, 4);
  if (adler32(inflated) !== trailer.getUint32(0)) throw new Error('its Adler-32 checksum does not match');
  return inflated;
}

/** RFC 1950's checksum of the uncompressed bytes. */
function adler32(bytes: Uint8Array): number {
  let a = 1;
  let b = 0;
  for (const byte of bytes) {
    a = (a + byte) % 65521;
    b = (b + a) % 65521;
  }
  return b * 65536 + a;
}

function corruptMemo(runId: string, bytes: Uint8Array, reason: string, cause?: unknown): RelayError {
  return new RelayError(
    'payload_corrupt',
    `The closed run record in the memo of run ${runId} (${closedRunMemoKey}) does not inflate to a record: ${reason}`,
    {
      ...(cause === undefined ? {} : { cause }),
      details: { runId, memoKey: closedRunMemoKey, bytes: bytes.byteLength },
    },
  );
}

/** True for a value shaped like a {@link ClosedRunRecord} (a memo is data from the server, so it is checked). */
export function isClosedRunRecord(value: unknown): value is ClosedRunRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<ClosedRunRecord>;
  return typeof record.snapshot?.runId === 'string' && Array.isArray(record.events);
}
