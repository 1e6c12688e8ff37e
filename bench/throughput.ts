/**
 * Throughput of one worker: completed runs/s and agent steps/s at concurrency 1, 10 and 50, every run three tool
 * steps and a final answer. Each variant runs in its own process (one worker, default options) against one dev
 * server; within a round every concurrency level runs each variant in turn, the order rotating between rounds.
 * A figure is runs (or steps) over the wall time from the first start to the last result; the table gives the
 * median over rounds with min and max, and the run latency p50/p99 across all rounds. Beside it, the CPU a run cost
 * the server and the variant's process (its worker and the client starting the runs), read from /proc around each
 * lane: a machine's speed moves between rounds, the work a run takes much less.
 *
 *   npm run bench:throughput -- [--rounds 3] [--concurrency 1,10,50] [--runs-per-lane 3] [--variants a,b,…]
 *
 * `--variants` picks and orders the variants (default every one); `relay-shared-queue` is Relay-E with every model
 * call on the shared task queue, and `--out NAME` writes bench/results/NAME.json instead of throughput.json.
 */
import { parseArgs } from 'node:util';
import { interleave, numberList, withVariants, writeResult } from './lib/measure-harness.js';
import { startCpuSpan } from './lib/process-cpu.js';
import type { CpuSpan } from './lib/process-cpu.js';
import { floorAndPeerRatios } from './lib/round-ratios.js';
import { summarize } from './lib/stats.js';
import type { Summary } from './lib/stats.js';
import type { RunAnswer } from './lib/variant-protocol.js';
import { allVariants, variantList } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '1,10,50' },
    'runs-per-lane': { type: 'string', default: '3' },
    'min-runs': { type: 'string', default: '10' },
    variants: { type: 'string', default: allVariants.join(',') },
    out: { type: 'string', default: 'throughput' },
  },
});
/** One variant's figures at one concurrency, as the result file holds them. */
interface ThroughputLevel {
  runsPerSecond: Summary;
  runsPerSecondByRound: number[];
  stepsPerSecondP50: number;
  runMs: Summary;
  /** Milliseconds of the server's CPU per completed run, each round's lane. */
  serverCpuMsPerRun: Summary;
  serverCpuMsPerRunByRound: number[];
  /** Milliseconds of the variant process's CPU (worker and client) per completed run, each round's lane. */
  variantCpuMsPerRun: Summary;
  variantCpuMsPerRunByRound: number[];
  /** The same by kind of thread (bench/lib/process-cpu.ts), to tell JavaScript's share from the SDK's core's. */
  variantCpuMsPerRunByThread: Record<string, Summary>;
}

/** One variant's lanes at one concurrency, as they are measured. */
interface LaneFigures {
  runsPerSecond: number[];
  runMs: number[];
  serverCpuMsPerRun: number[];
  variantCpuMsPerRun: number[];
  variantCpuMsPerRunByThread: Record<string, number[]>;
}

const rounds = Number(values.rounds);
const levels = numberList(values.concurrency);
const stepsPerRun = 3;
const runsAt = (concurrency: number) =>
  Math.max(Number(values['min-runs']), concurrency * Number(values['runs-per-lane']));

const result = await withVariants(variantList(values.variants), async ({ variants, failed, serverPid }) => {
  const figures: Record<string, Record<string, LaneFigures>> = {};
  for (const variant of variants.values()) await variant.run({ steps: stepsPerRun, runs: 10, concurrency: 10 });
  for (let round = 0; round < rounds; round++) {
    for (const concurrency of levels) {
      for (const [name, variant] of interleave([...variants], round)) {
        const runs = runsAt(concurrency);
        const endCpuSpan = startCpuSpan(serverPid, variant.pid);
        const answer = await variant.run({ steps: stepsPerRun, runs, concurrency });
        const level = ((figures[name] ??= {})[String(concurrency)] ??= emptyLaneFigures());
        recordLane(level, runs, answer, endCpuSpan());
      }
    }
    console.log(`round ${round + 1}/${rounds} done`);
  }
  const table: Record<string, Record<string, ThroughputLevel>> = {};
  for (const [name, byLevel] of Object.entries(figures)) {
    for (const [concurrency, level] of Object.entries(byLevel)) {
      const summary = summarizeLevel(level);
      (table[name] ??= {})[concurrency] = summary;
      console.log(describeLevel(name, concurrency, summary));
    }
  }
  return {
    throughput: table,
    roundRatios: floorAndPeerRatios(table),
    cpuRoundRatios: {
      server: floorAndPeerRatios(table, 'serverCpuMsPerRunByRound'),
      variant: floorAndPeerRatios(table, 'variantCpuMsPerRunByRound'),
    },
    failed,
  };
});

function emptyLaneFigures(): LaneFigures {
  return {
    runsPerSecond: [],
    runMs: [],
    serverCpuMsPerRun: [],
    variantCpuMsPerRun: [],
    variantCpuMsPerRunByThread: {},
  };
}

/** Adds one lane's runs/s, run times and CPU a run to its variant's figures at that concurrency. */
function recordLane(level: LaneFigures, runs: number, answer: RunAnswer, cpu: CpuSpan): void {
  level.runsPerSecond.push(runs / (answer.wallMs / 1000));
  level.runMs.push(...answer.runMs);
  level.serverCpuMsPerRun.push(cpu.serverMs / runs);
  level.variantCpuMsPerRun.push(cpu.variantMs / runs);
  for (const [thread, ms] of Object.entries(cpu.variantMsByThread)) {
    (level.variantCpuMsPerRunByThread[thread] ??= []).push(ms / runs);
  }
}

function summarizeLevel(level: LaneFigures): ThroughputLevel {
  const runsPerSecond = summarize(level.runsPerSecond);
  return {
    runsPerSecond,
    // Each round's figure in round order, so two variants can be compared round by round as well as by median.
    runsPerSecondByRound: level.runsPerSecond.map(toThousandths),
    stepsPerSecondP50: Math.round(runsPerSecond.p50 * stepsPerRun * 100) / 100,
    runMs: summarize(level.runMs),
    serverCpuMsPerRun: summarize(level.serverCpuMsPerRun),
    serverCpuMsPerRunByRound: level.serverCpuMsPerRun.map(toThousandths),
    variantCpuMsPerRun: summarize(level.variantCpuMsPerRun),
    variantCpuMsPerRunByRound: level.variantCpuMsPerRun.map(toThousandths),
    variantCpuMsPerRunByThread: Object.fromEntries(
      Object.entries(level.variantCpuMsPerRunByThread).map(([thread, values]) => [thread, summarize(values)]),
    ),
  };
}

function describeLevel(name: string, concurrency: string, level: ThroughputLevel): string {
  const { runsPerSecond, runMs, serverCpuMsPerRun, variantCpuMsPerRun } = level;
  return (
    `${name.padEnd(14)} c=${concurrency.padStart(2)}  ${runsPerSecond.p50.toFixed(2)} runs/s (min ${runsPerSecond.min.toFixed(2)}, max ${runsPerSecond.max.toFixed(2)})  ` +
    `${(runsPerSecond.p50 * stepsPerRun).toFixed(1)} steps/s  run p50 ${runMs.p50.toFixed(0)} ms p99 ${runMs.p99.toFixed(0)} ms  ` +
    `CPU/run server ${serverCpuMsPerRun.p50.toFixed(1)} ms variant ${variantCpuMsPerRun.p50.toFixed(1)} ms`
  );
}

function toThousandths(value: number): number {
  return Math.round(value * 1000) / 1000;
}

writeResult(values.out, {
  description: 'completed runs/s and steps/s on one worker, runs of 3 tool steps + final answer',
  rounds,
  stepsPerRun,
  runsPerLevel: Object.fromEntries(levels.map((level) => [level, runsAt(level)])),
  ...result,
});
