/**
 * History per step: events and bytes of a run's history at 5, 20 and 50 tool steps, fetched from the server
 * after the run ends. Sizes are deterministic for a given script, so one run per size and variant suffices.
 * Events per step and bytes per step are the slope between sizes; the model-call input bytes at each step show
 * how the transcript resent on every call makes total bytes grow with the square of the steps.
 *
 *   npm run bench:history -- [--steps 5,20,50]
 */
import { parseArgs } from 'node:util';
import { slope } from './lib/bench-stack.js';
import { readHistoryFacts } from './lib/history-facts.js';
import type { HistoryFacts } from './lib/history-facts.js';
import { numberList, withVariants, writeResult } from './lib/measure-harness.js';

const { values } = parseArgs({ options: { steps: { type: 'string', default: '5,20,50' } } });
const sizes = numberList(values.steps);

const result = await withVariants(['bare-temporal', 'relay', 'peer'], async ({ variants, failed, client }) => {
  const table: Record<string, unknown> = {};
  for (const [name, variant] of variants) {
    const bySize: Array<{ steps: number; facts: HistoryFacts }> = [];
    for (const steps of sizes) {
      const answer = await variant.run({ steps, runs: 1, concurrency: 1 });
      bySize.push({ steps, facts: await readHistoryFacts(client, answer.ids[0] ?? '') });
    }
    const eventsPerStep = slope(bySize.map(({ steps, facts }) => ({ x: steps, y: facts.events })));
    const first = bySize[0];
    const last = bySize.at(-1);
    const typesPerStep: Record<string, number> = {};
    if (first && last && last.steps > first.steps) {
      for (const [type, count] of Object.entries(last.facts.eventTypes)) {
        const perStep = (count - (first.facts.eventTypes[type] ?? 0)) / (last.steps - first.steps);
        if (perStep !== 0) typesPerStep[type] = Math.round(perStep * 100) / 100;
      }
    }
    table[name] = {
      eventsPerStep: Math.round(eventsPerStep * 100) / 100,
      eventTypesPerStep: typesPerStep,
      sizes: bySize.map(({ steps, facts }) => ({
        steps,
        events: facts.events,
        bytes: facts.bytes,
        bytesPerStep: Math.round(facts.bytes / steps),
        modelInputBytesFirstStep: facts.modelInputBytes[0] ?? 0,
        modelInputBytesLastStep: facts.modelInputBytes.at(-1) ?? 0,
      })),
    };
    for (const { steps, facts } of bySize) {
      console.log(
        `${name.padEnd(14)} ${String(steps).padStart(2)} steps: ${facts.events} events, ${(facts.bytes / 1024).toFixed(1)} KiB ` +
          `(${(facts.bytes / steps / 1024).toFixed(2)} KiB/step), last model input ${facts.modelInputBytes.at(-1) ?? 0} B`,
      );
    }
    console.log(`${name.padEnd(14)} ${eventsPerStep.toFixed(2)} events/step ${JSON.stringify(typesPerStep)}`);
  }
  return { history: table, failed };
});

writeResult('history-size', { description: 'history events and bytes per run, by number of tool steps', ...result });
