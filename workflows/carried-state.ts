import { ApplicationFailure } from '@temporalio/workflow';
import { toJsonText, utf8ByteLength } from '../src/shared/payload-limits.js';
import type { AgentRunInput, RunEvent } from '../src/shared/run-types.js';
import { compactTranscript } from '../src/shared/transcript-budget.js';
import type { TranscriptCompaction } from '../src/shared/transcript-budget.js';
import type { TranscriptMessage } from '../src/shared/transcript.js';
import type { CarriedRunState } from './run-state.js';

/**
 * The most bytes (as JSON) the continue-as-new input (the run's input and its carried state) may have. Temporal
 * refuses a command whose input is over its blob size limit, 2 MiB by default; what is left covers encoding and
 * encryption overhead.
 */
export const maxContinueAsNewBytes = 1_900_000;

/** Logs the compactions made while carrying the state, where the run's rules say so (carried-compaction-logged). */
export interface CompactionLog {
  /** Whether this run logs them: asked only where a compaction is made. */
  logs(): boolean;
  /** Emits the event that logs `compaction` in the run, and returns it to carry. */
  emit(compaction: TranscriptCompaction): RunEvent;
}

/** The most bytes of JSON a `transcript_compacted` event takes: room kept for it when compacting to fit. */
const maxCompactionEventBytes = 256;

/**
 * Fits the state a run carries into its next execution within {@link maxContinueAsNewBytes}: the transcript is kept
 * within its own budget, then the oldest carried events go, then the transcript is compacted further. Where `log`
 * logs compactions, each one's event is carried as the newest, after the events dropped to make room. A state that
 * still does not fit fails the run with `payload_too_large`, instead of a continue-as-new Temporal would refuse.
 */
export function boundCarriedState(
  input: AgentRunInput,
  carried: CarriedRunState,
  maxTranscriptBytes: number,
  log?: CompactionLog,
): CarriedRunState {
  const transcript = [...carried.transcript];
  const logged: RunEvent[] = [];
  const note = (compaction: TranscriptCompaction | undefined) => {
    if (compaction && log?.logs()) logged.push(log.emit(compaction));
  };
  note(compactTranscript(transcript, maxTranscriptBytes, { elideTexts: true }));
  let events = carried.events;
  const bounded = () => withEvents(carried, transcript, events, logged);
  const inputBytes = jsonBytes(input);
  let excess = inputBytes + jsonBytes(bounded()) - maxContinueAsNewBytes;
  if (excess > 0) {
    events = dropOldest(events, excess);
    excess = inputBytes + jsonBytes(bounded()) - maxContinueAsNewBytes;
  }
  if (excess > 0) {
    // Asked before compacting: the event that will log the compaction needs room too.
    const eventRoom = log?.logs() ? maxCompactionEventBytes : 0;
    const transcriptBudget = Math.max(0, jsonBytes(transcript) - excess - eventRoom);
    note(compactTranscript(transcript, transcriptBudget, { elideTexts: true }));
    excess = inputBytes + jsonBytes(bounded()) - maxContinueAsNewBytes;
  }
  if (excess > 0) {
    throw ApplicationFailure.create({
      type: 'payload_too_large',
      message: `The run's state is ${excess} bytes over what it can carry into its next execution (${maxContinueAsNewBytes} bytes with its input)`,
      nonRetryable: true,
    });
  }
  return bounded();
}

/** The carried state with `transcript`, and `events` followed by the events that logged its compactions. */
function withEvents(
  carried: CarriedRunState,
  transcript: TranscriptMessage[],
  events: RunEvent[],
  logged: readonly RunEvent[],
): CarriedRunState {
  if (logged.length === 0) return { ...carried, transcript, events };
  return { ...carried, transcript, events: [...events, ...logged], lastEventSeq: logged.at(-1)?.seq ?? 0 };
}

/** Drops the oldest events until at least `bytes` of JSON are gone. */
function dropOldest(events: readonly RunEvent[], bytes: number): RunEvent[] {
  let dropped = 0;
  let first = 0;
  while (first < events.length && dropped < bytes) {
    dropped += jsonBytes(events[first]) + 1;
    first += 1;
  }
  return events.slice(first);
}

function jsonBytes(value: unknown): number {
  return utf8ByteLength(toJsonText(value) ?? '');
}
