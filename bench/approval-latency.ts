/**
 * Approval latency: from the moment the decision is sent (just before the client call) to the moment the tool
 * activity starts, read from the run's history (ActivityTaskStarted's time; client and server share this
 * machine's clock). Also the decision call's own round trip. Relay-E approves with its update; the floor is a
 * bare workflow whose update unblocks one activity. The peer has no approval primitive (@temporalio/ai-sdk
 * leaves it to the user's workflow), so it is not in this table. Rounds interleave the variants.
 *
 *   npm run bench:approval -- [--rounds 3] [--runs 10]
 */
import { parseArgs } from 'node:util';
import { readHistoryFacts } from './lib/history-facts.js';
import { interleave, withVariants, writeResult } from './lib/measure-harness.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'approval-latency' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '10' },
  },
});
const rounds = Number(values.rounds);
const runs = Number(values.runs);

const result = await withVariants(['bare-temporal', 'relay'], async ({ variants, failed, client }) => {
  const toToolStart = new Map<string, number[]>();
  const roundTrip = new Map<string, number[]>();
  for (const variant of variants.values()) await variant.approve(2);
  for (let round = 0; round < rounds; round++) {
    for (const [name, variant] of interleave([...variants], round)) {
      const { samples } = await variant.approve(runs);
      for (const sample of samples) {
        const facts = await readHistoryFacts(client, sample.id);
        const started = facts.toolStartedAtMs[0];
        if (started !== undefined) toToolStart.set(name, [...(toToolStart.get(name) ?? []), started - sample.sentAtMs]);
        roundTrip.set(name, [...(roundTrip.get(name) ?? []), sample.returnedAtMs - sample.sentAtMs]);
      }
    }
    console.log(`round ${round + 1}/${rounds} done`);
  }
  const table: Record<string, unknown> = {};
  for (const name of variants.keys()) {
    const latency = summarize(toToolStart.get(name) ?? []);
    const update = summarize(roundTrip.get(name) ?? []);
    table[name] = { decisionToToolStartedMs: latency, decisionRoundTripMs: update };
    console.log(
      `${name.padEnd(14)} decision -> tool started p50 ${latency.p50} ms p99 ${latency.p99} ms; decision call p50 ${update.p50} ms`,
    );
  }
  return { approval: table, failed };
});

writeResult(values.out, {
  description: 'decision sent -> tool activity started (ms); the peer has no approval primitive',
  rounds,
  runsPerRound: runs,
  ...result,
});
