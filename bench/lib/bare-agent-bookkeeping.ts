/**
 * The floor plus the bookkeeping a Relay-E run asks of the server, and nothing else: its client starts it with
 * Relay-E's memo, search attributes and summaries; it records one patch marker at the start (with the
 * search-attribute update the SDK adds to it) and, at the end, updates the status search attribute and writes a
 * record in the memo. It tells how much of the gap between the floor and Relay-E is the server's work for that
 * bookkeeping, and how much Relay-E's own code; `parts` leaves the marker or the closing updates out, to tell which
 * part costs what.
 */
import { patched, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { relaySearchAttributes } from '../../src/shared/search-attributes.js';
import { bareAgent } from './bare-agent.js';

/** About the size of the record a Relay-E run of a few steps leaves in its memo when it closes, deflated. */
const closedRecordChars = 600;

/** Which of a Relay-E run's bookkeeping, besides what its start carries, the run does. */
export interface BookkeepingParts {
  marker: boolean;
  closing: boolean;
}

export async function bareAgentWithBookkeeping(
  steps: number,
  parts: BookkeepingParts = { marker: true, closing: true },
): Promise<string> {
  if (parts.marker) patched('bench-bookkeeping');
  const text = await bareAgent(steps, false);
  if (parts.closing) {
    upsertSearchAttributes([{ key: relaySearchAttributes.status, value: 'completed' }]);
    upsertMemo({ closed: 'x'.repeat(closedRecordChars) });
  }
  return text;
}
