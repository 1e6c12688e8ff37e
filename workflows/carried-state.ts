import { ApplicationFailure } from '@temporalio/workflow';
import { toJsonText, utf8ByteLength } from '../src/shared/payload-limits.js';
import type { AgentRunInput, RunEvent } from '../src/shared/run-types.js';
import { compactTranscript } from '../src/shared/transcript-budget.js';
import type { CarriedRunState } from './run-state.js';

/**
 * The most bytes (as JSON) the continue-as-new input (the run's input and its carried state) may have. Temporal
 * refuses a command whose input is over its blob size limit, 2 MiB by default; what is left covers encoding and
 * encryption overhead.
 */
export const maxContinueAsNewBytes = 1_900_000;

/**
 * Fits the state a run carries into its next execution within {@link maxContinueAsNewBytes}: the transcript is kept
 * within its own budget, then the oldest carried events go, then the transcript is compacted further. A state that
 * still does not fit fails the run with `payload_too_large`, instead of a continue-as-new Temporal would refuse.
 */
export function boundCarriedState(
  input: AgentRunInput,
  carried: CarriedRunState,
  maxTranscriptBytes: number,
): CarriedRunState {
  const transcript = [...carried.transcript];
  compactTranscript(transcript, maxTranscriptBytes, { elideTexts: true });
  let bounded: CarriedRunState = { ...carried, transcript };
  const inputBytes = jsonBytes(input);
  let excess = inputBytes + jsonBytes(bounded) - maxContinueAsNewBytes;
  if (excess > 0) {
    bounded = { ...bounded, events: dropOldest(bounded.events, excess) };
    excess = inputBytes + jsonBytes(bounded) - maxContinueAsNewBytes;
  }
  if (excess > 0) {
    const transcriptBudget = Math.max(0, jsonBytes(transcript) - excess);
    compactTranscript(transcript, transcriptBudget, { elideTexts: true });
    excess = inputBytes + jsonBytes(bounded) - maxContinueAsNewBytes;
  }
  if (excess > 0) {
    throw ApplicationFailure.create({
      type: 'payload_too_large',
      message: `The run's state is ${excess} bytes over what it can carry into its next execution (${maxContinueAsNewBytes} bytes with its input)`,
      nonRetryable: true,
    });
  }
  return bounded;
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
