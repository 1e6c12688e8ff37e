/**
 * Orchestration overhead per agent step (one model call and one tool call, both zero-latency) at concurrency 1.
 * Each variant runs in its own process against one dev server; rounds interleave the variants. A durable step is
 * read from the run's history: model activity scheduled to the next model activity scheduled, on the server's
 * clock. The in-process loop times the same step with `performance.now()`. Overhead is a variant's median step
 * minus the in-process median; `bare-temporal` (two bare activities a step) is the floor Temporal itself sets.
 *
 *   npm run bench:step -- [--rounds 3] [--runs 10] [--steps 5]
 */
import { parseArgs } from 'node:util';
import { readHistoryFacts } from './lib/history-facts.js';
import { interleave, withVariants, writeResult } from './lib/measure-harness.js';
import { summarize } from './lib/stats.js';
import type { Summary } from './lib/stats.js';
import { allVariants } from './lib/variants.js';
import type { VariantName } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'step-overhead' },
    rounds: { type: 'string', default: '3' },
    runs: { type: 'string', default: '10' },
    steps: { type: 'string', default: '5' },
  },
});
const rounds = Number(values.rounds);
const runs = Number(values.runs);
const steps = Number(values.steps);

const result = await withVariants(allVariants, async ({ variants, failed, client }) => {
  const samples = new Map<VariantName, number[]>();
  for (const variant of variants.values()) await variant.run({ steps, runs: 2, concurrency: 1 });
  for (let round = 0; round < rounds; round++) {
    for (const [name, variant] of interleave([...variants], round)) {
      const answer = await variant.run({ steps, runs, concurrency: 1 });
      const stepMs = answer.stepMs ?? [];
      for (const id of answer.ids) stepMs.push(...(await readHistoryFacts(client, id)).stepMs);
      samples.set(name, [...(samples.get(name) ?? []), ...stepMs]);
    }
    console.log(`round ${round + 1}/${rounds} done`);
  }
  const summaries: Partial<Record<VariantName, Summary & { overheadP50Ms: number }>> = {};
  const inProcess = summarize(samples.get('in-process') ?? []).p50;
  for (const [name, values] of samples) {
    const summary = summarize(values);
    summaries[name] = { ...summary, overheadP50Ms: Math.round((summary.p50 - inProcess) * 1000) / 1000 };
    console.log(
      `${name.padEnd(14)} step p50 ${summary.p50} ms  p99 ${summary.p99} ms  (min ${summary.min}, max ${summary.max}, n ${summary.n})`,
    );
  }
  return { stepMs: summaries, failed };
});

writeResult(values.out, {
  description: 'one agent step (model call + tool call), concurrency 1, milliseconds',
  rounds,
  runsPerRound: runs,
  stepsPerRun: steps,
  ...result,
});
