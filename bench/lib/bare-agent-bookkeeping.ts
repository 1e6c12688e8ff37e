/**
 * The floor plus the bookkeeping a Relay-E run asks of the server, and nothing else: one patch marker at the start
 * (with the search-attribute update the SDK adds to it) and, at the end, the status search attribute and a record in
 * the memo; its client starts it with Relay-E's memo, search attributes and summaries. It tells how much of the gap
 * between the floor and Relay-E is the server's work for that bookkeeping, and how much Relay-E's own code.
 */
import { patched, upsertMemo, upsertSearchAttributes } from '@temporalio/workflow';
import { relaySearchAttributes } from '../../src/shared/search-attributes.js';
import { bareAgent } from './bare-agent.js';

/** About the size of the record a Relay-E run of a few steps leaves in its memo when it closes, deflated. */
const closedRecordChars = 600;

export async function bareAgentWithBookkeeping(steps: number): Promise<string> {
  patched('bench-bookkeeping');
  const text = await bareAgent(steps, false);
  upsertSearchAttributes([{ key: relaySearchAttributes.status, value: 'completed' }]);
  upsertMemo({ closed: 'x'.repeat(closedRecordChars) });
  return text;
}
