import { utf8ByteLength } from './payload-limits.js';
import type { RunEvent, RunSnapshot } from './run-types.js';

/** The memo key under which a run leaves its final snapshot and event log when it closes. */
export const closedRunMemoKey = 'relayClosedRun';

/**
 * The most bytes (as JSON) of events a closed run's record keeps; the oldest go first. Memos count against
 * Temporal's 2 MiB memo limit and travel with every visibility listing of the run.
 */
export const maxClosedRunEventBytes = 256 * 1024;

/** What a closed run leaves in its memo, so that it reads without a worker (decoded with the run's data converter). */
export interface ClosedRunRecord {
  snapshot: RunSnapshot;
  /** The newest events, oldest first, within {@link maxClosedRunEventBytes}; never a marker. */
  events: RunEvent[];
}

/** Builds a closed run's record from its final snapshot and the events it still keeps, cut to the byte budget. */
export function closedRunRecord(
  snapshot: RunSnapshot,
  events: readonly RunEvent[],
  maxEventBytes = maxClosedRunEventBytes,
): ClosedRunRecord {
  const recorded = events.filter((event) => event.type !== 'events_dropped');
  const kept: RunEvent[] = [];
  let bytes = 0;
  for (let index = recorded.length - 1; index >= 0; index -= 1) {
    const event = recorded[index] as RunEvent;
    bytes += utf8ByteLength(JSON.stringify(event));
    // Strict even for the last event: the snapshot carries the output, and the memo must stay under 2 MiB.
    if (bytes > maxEventBytes) break;
    kept.push(event);
  }
  return { snapshot, events: kept.reverse() };
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

/** True for a value shaped like a {@link ClosedRunRecord} (a memo is data from the server, so it is checked). */
export function isClosedRunRecord(value: unknown): value is ClosedRunRecord {
  if (typeof value !== 'object' || value === null) return false;
  const record = value as Partial<ClosedRunRecord>;
  return typeof record.snapshot?.runId === 'string' && Array.isArray(record.events);
}
