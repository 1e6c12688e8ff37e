/**
 * Where a run's time goes when runs go one after another (concurrency 1), Relay-E against the bare floor: the SDK's
 * own metrics of each worker process (workflow task and activity execution, and how long each waited to be picked
 * up), read before and after every lane, and the rest of the run's time (the server handling each completion, the
 * client's start and result calls, the network). Each round runs every variant in turn, the order rotating between
 * rounds; a round's figure is the mean per run of its lane, and the result is the median over rounds with min–max.
 *
 *   npm run bench:latency -- [--rounds 5] [--runs 30]
 */
import { parseArgs } from 'node:util';
import { findFreePort } from '../src/dev/temporal-dev-server.js';
import { interleave, withVariants, writeResult } from './lib/measure-harness.js';
import { summarize } from './lib/stats.js';
import type { VariantName } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'run-latency' },
    rounds: { type: 'string', default: '5' },
    runs: { type: 'string', default: '30' },
  },
});
const rounds = Number(values.rounds);
const runsPerLane = Number(values.runs);
const stepsPerRun = 3;
const variantNames = ['bare-temporal', 'relay'] as const satisfies readonly VariantName[];
/** The run's workflow types: a Relay-E worker also serves its tool catalog's workflow, which is left out. */
const runWorkflowTypes = new Set(['agentRun', 'bareAgent']);

/** The SDK metrics read, by what the results call them (sums in seconds, as the runtime is told to report). */
const metrics = {
  workflowTaskExecution: 'temporal_workflow_task_execution_latency',
  workflowTaskScheduleToStart: 'temporal_workflow_task_schedule_to_start_latency',
  activityExecution: 'temporal_activity_execution_latency',
  activityScheduleToStart: 'temporal_activity_schedule_to_start_latency',
} as const;
type Part = keyof typeof metrics;
type Totals = Record<Part, { seconds: number; count: number }>;

const addresses = Object.fromEntries(
  await Promise.all(variantNames.map(async (name) => [name, `127.0.0.1:${await findFreePort('127.0.0.1')}`] as const)),
) as Record<(typeof variantNames)[number], string>;

const result = await withVariants(
  variantNames,
  async ({ variants, failed }) => {
    const perRound: Record<string, Record<string, number[]>> = {};
    for (let round = 0; round < rounds; round++) {
      for (const [name, variant] of interleave([...variants], round)) {
        const address = addresses[name as (typeof variantNames)[number]];
        const before = await readTotals(address);
        const answer = await variant.run({ steps: stepsPerRun, runs: runsPerLane, concurrency: 1 });
        const after = await readTotals(address);
        const figures = (perRound[name] ??= {});
        const runMs = answer.runMs.reduce((sum, ms) => sum + ms, 0) / answer.runMs.length;
        let workerMs = 0;
        for (const part of Object.keys(metrics) as Part[]) {
          const ms = ((after[part].seconds - before[part].seconds) * 1000) / runsPerLane;
          workerMs += ms;
          (figures[`${part}Ms`] ??= []).push(ms);
          (figures[`${part}Count`] ??= []).push((after[part].count - before[part].count) / runsPerLane);
        }
        (figures['runMs'] ??= []).push(runMs);
        (figures['restMs'] ??= []).push(runMs - workerMs);
      }
      console.log(`round ${round + 1}/${rounds} done`);
    }
    const table = Object.fromEntries(
      Object.entries(perRound).map(([name, figures]) => [
        name,
        Object.fromEntries(Object.entries(figures).map(([key, sample]) => [key, summarize(sample)])),
      ]),
    );
    return { table, failed };
  },
  { metricsAddresses: addresses },
);

const relay = result.table['relay'];
const floor = result.table['bare-temporal'];
const relayMinusFloorOfMediansMs =
  relay && floor
    ? Object.fromEntries(
        Object.keys(relay)
          .filter((key) => key.endsWith('Ms'))
          .map((key) => [key, Math.round(((relay[key]?.p50 ?? 0) - (floor[key]?.p50 ?? 0)) * 1000) / 1000]),
      )
    : {};
writeResult(values.out, {
  description:
    'where a run of 3 tool steps + final answer spends its time at concurrency 1: per round the mean per run of ' +
    "each part (the SDK's workflow task and activity metrics of each worker process; rest = run time minus them), " +
    'then the median over rounds with min–max',
  rounds,
  runsPerLane,
  stepsPerRun,
  relayMinusFloorOfMediansMs,
  parts: result.table,
  failed: result.failed,
});

/** Sums and counts of the SDK's latency histograms for the run's workflow types, as the worker serves them now. */
async function readTotals(address: string): Promise<Totals> {
  const text = await (await fetch(`http://${address}/metrics`)).text();
  const totals = Object.fromEntries(Object.keys(metrics).map((part) => [part, { seconds: 0, count: 0 }])) as Totals;
  for (const line of text.split('\n')) {
    const match = /^(\w+)_(sum|count)\{([^}]*)\} (\S+)$/.exec(line);
    if (!match) continue;
    const [, name, kind, labels, value] = match as unknown as [string, string, string, string, string];
    const part = (Object.keys(metrics) as Part[]).find((key) => metrics[key] === name);
    const workflowType = /workflow_type="([^"]*)"/.exec(labels)?.[1];
    if (!part || (workflowType !== undefined && !runWorkflowTypes.has(workflowType))) continue;
    if (kind === 'sum') totals[part].seconds += Number(value);
    else totals[part].count += Number(value);
  }
  return totals;
}
