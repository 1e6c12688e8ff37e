/**
 * History per step: events and bytes of a run's history at 5, 20 and 50 tool steps, fetched from the server
 * after the run ends. Sizes are deterministic for a given script, so one run per size and variant suffices.
 * Events per step and bytes per step are the slope between sizes; the model-call input bytes at each step show
 * whether a call carries the whole transcript (growing with the steps) or only what is new, and `bytesByPart` where
 * the largest run's bytes are.
 * Then one long Relay-E run alone (500 steps): every execution of it, when it continues as new, against Temporal's
 * default limits.
 *
 *   npm run bench:history -- [--steps 5,20,50] [--long-steps 500]
 */
import { parseArgs } from 'node:util';
import type { Client } from '@temporalio/client';
import { slope } from './lib/bench-stack.js';
import { readExecutionChainFacts, readHistoryFacts } from './lib/history-facts.js';
import type { HistoryFacts } from './lib/history-facts.js';
import { numberList, withVariants, writeResult } from './lib/measure-harness.js';
import type { VariantProcess } from './lib/variant-protocol.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'history-size' },
    steps: { type: 'string', default: '5,20,50' },
    'long-steps': { type: 'string', default: '500' },
  },
});
const sizes = numberList(values.steps);
const longSteps = Number(values['long-steps']);

/**
 * Temporal's default limits on one execution (dynamic config `limit.historySize.error`, `limit.historyCount.error`,
 * `limit.blobSize.error`): past the first two the server terminates the execution; a payload past the third fails
 * the command that carries it.
 */
const temporalLimits = { historyBytes: 50 * 1024 * 1024, historyEvents: 51_200, payloadBytes: 2 * 1024 * 1024 };

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
      // Where the largest run's bytes are: by event type and activity type, and the payloads inside them.
      ...(last ? { bytesByPart: { steps: last.steps, ...sortedByBytes(last.facts.bytesByPart) } } : {}),
    };
    for (const { steps, facts } of bySize) {
      console.log(
        `${name.padEnd(14)} ${String(steps).padStart(2)} steps: ${facts.events} events, ${(facts.bytes / 1024).toFixed(1)} KiB ` +
          `(${(facts.bytes / steps / 1024).toFixed(2)} KiB/step), last model input ${facts.modelInputBytes.at(-1) ?? 0} B`,
      );
    }
    console.log(`${name.padEnd(14)} ${eventsPerStep.toFixed(2)} events/step ${JSON.stringify(typesPerStep)}`);
  }
  const relay = variants.get('relay');
  const long = relay ? await measureLongRun(relay, client) : undefined;
  return { history: table, ...(long ? { long } : {}), failed };
});

function sortedByBytes(parts: Record<string, number>): Record<string, number> {
  return Object.fromEntries(Object.entries(parts).sort(([, a], [, b]) => b - a));
}

/** One Relay-E run of `longSteps` steps, execution by execution, with the limits it is measured against. */
async function measureLongRun(relay: VariantProcess, client: Client) {
  const answer = await relay.run({ steps: longSteps, runs: 1, concurrency: 1 });
  const chain = await readExecutionChainFacts(client, answer.ids[0] ?? '');
  const bytes = chain.reduce((sum, facts) => sum + facts.bytes, 0);
  const largest = {
    executionBytes: Math.max(...chain.map((facts) => facts.bytes)),
    executionEvents: Math.max(...chain.map((facts) => facts.events)),
    eventBytes: Math.max(...chain.map((facts) => facts.largestEventBytes)),
  };
  const modelInputBytes = chain.flatMap((facts) => facts.modelInputBytes);
  console.log(
    `relay long     ${longSteps} steps: ${chain.length} execution(s), ${(bytes / 1024).toFixed(1)} KiB in all ` +
      `(${(bytes / longSteps / 1024).toFixed(2)} KiB/step), largest execution ${(largest.executionBytes / 1024).toFixed(1)} KiB ` +
      `/ ${largest.executionEvents} events, largest event ${largest.eventBytes} B`,
  );
  return {
    steps: longSteps,
    executions: chain.map((facts) => ({
      events: facts.events,
      bytes: facts.bytes,
      largestEventBytes: facts.largestEventBytes,
    })),
    bytes,
    bytesPerStep: Math.round(bytes / longSteps),
    largest,
    modelInputBytesMax: Math.max(...modelInputBytes),
    temporalLimits,
    withinLimits:
      largest.executionBytes < temporalLimits.historyBytes &&
      largest.executionEvents < temporalLimits.historyEvents &&
      largest.eventBytes < temporalLimits.payloadBytes,
  };
}

writeResult(values.out, { description: 'history events and bytes per run, by number of tool steps', ...result });
