/**
 * Throughput of two Relay-E workers on the production topology beside the dev server: completed runs/s and
 * agent steps/s at concurrency 10, 50 and 200, every run three tool steps and a final answer. Two backends:
 * `temporal server start-dev` on a SQLite file (as every other benchmark), and two Temporal Server 1.29.1 nodes on
 * PostgreSQL 15 with 4 history shards (scripts/cluster.sh). Each backend gets two `relay` worker processes (on the
 * cluster, one on each node's frontend); a level sends half its runs to each process at once, and a figure is
 * runs over the wall time from the first start to the last result of both. Backends alternate within a round, the
 * order rotating between rounds; the statistic is the median over an odd number of rounds, min and max beside it.
 * The load average is recorded with the figures, since the machine may be shared.
 *
 *   npm run bench:cluster -- [--rounds 3] [--concurrency 10,50,200] [--runs-per-lane 2]
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { loadavg } from 'node:os';
import { parseArgs } from 'node:util';
import { startTemporalCluster } from '../test/helpers/temporal-cluster.js';
import { describeMachine, startBenchServer } from './lib/bench-stack.js';
import { interleave, numberList } from './lib/measure-harness.js';
import { summarize } from './lib/stats.js';
import type { RunAnswer, VariantProcess } from './lib/variant-protocol.js';
import { startVariants } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'cluster-throughput' },
    rounds: { type: 'string', default: '3' },
    concurrency: { type: 'string', default: '10,50,200' },
    'runs-per-lane': { type: 'string', default: '2' },
    'min-runs': { type: 'string', default: '20' },
  },
});
const rounds = Number(values.rounds);
if (!Number.isInteger(rounds) || rounds < 1 || rounds % 2 === 0) {
  throw new Error(`--rounds must be an odd number, so the median is one measured round (got ${values.rounds})`);
}
const levels = numberList(values.concurrency);
const stepsPerRun = 3;
const runsAt = (concurrency: number) =>
  Math.max(Number(values['min-runs']), concurrency * Number(values['runs-per-lane']));

/** A Temporal backend with two Relay-E worker processes on it. */
interface Backend {
  workers: VariantProcess[];
  describe: Record<string, unknown>;
  stop(): Promise<void>;
}

/** Starts one `relay` variant process (a worker and a client) per address. */
async function startWorkers(addresses: readonly string[]): Promise<VariantProcess[]> {
  const workers: VariantProcess[] = [];
  for (const address of addresses) {
    const { running, failed } = await startVariants(address, ['relay']);
    const worker = running.get('relay');
    if (worker === undefined) throw new Error(`A Relay-E worker on ${address} did not start: ${failed[0]?.error}`);
    workers.push(worker);
  }
  return workers;
}

async function startDevServerBackend(): Promise<Backend> {
  const server = await startBenchServer();
  const workers = await startWorkers([server.address, server.address]);
  return {
    workers,
    describe: { kind: 'temporal server start-dev (CLI 1.5.1), SQLite file, WAL, synchronous=NORMAL, 1 shard' },
    async stop() {
      await Promise.all(workers.map((worker) => worker.stop()));
      await server.stop();
    },
  };
}

async function startClusterBackend(): Promise<Backend> {
  const cluster = await startTemporalCluster();
  const workers = await startWorkers(cluster.addresses);
  return {
    workers,
    describe: {
      kind: 'Temporal Server 1.29.1, 2 nodes (frontend, history, matching, worker each), PostgreSQL 15, 4 shards',
      config: 'deploy/temporal/relay-e.yaml, deploy/temporal/dynamic-config.yaml (scripts/cluster.sh)',
    },
    async stop() {
      await Promise.all(workers.map((worker) => worker.stop()));
      await cluster.stop();
    },
  };
}

/** Runs `runs` runs at `concurrency`, half through each worker process at once; runs/s over the joint wall time. */
async function measure(backend: Backend, runs: number, concurrency: number) {
  const share = (index: number) => Math.floor(runs / 2) + (index === 0 ? runs % 2 : 0);
  const started = performance.now();
  const answers: RunAnswer[] = await Promise.all(
    backend.workers.map((worker, index) =>
      worker.run({ steps: stepsPerRun, runs: share(index), concurrency: Math.ceil(concurrency / 2) }),
    ),
  );
  const wallMs = performance.now() - started;
  return { runsPerSecond: runs / (wallMs / 1000), runMs: answers.flatMap((answer) => answer.runMs) };
}

console.log('machine', JSON.stringify(describeMachine()));
const loadAverageAtStart = loadavg();
const backends: Record<string, Backend> = {};
try {
  backends['dev-server'] = await startDevServerBackend();
  backends['cluster'] = await startClusterBackend();
  for (const backend of Object.values(backends)) await measure(backend, 20, 10);

  const figures: Record<
    string,
    Record<string, { runsPerSecond: number[]; runMs: number[]; loadAverage: number[] }>
  > = {};
  for (let round = 0; round < rounds; round++) {
    for (const concurrency of levels) {
      for (const [name, backend] of interleave(Object.entries(backends), round)) {
        const level = ((figures[name] ??= {})[String(concurrency)] ??= {
          runsPerSecond: [],
          runMs: [],
          loadAverage: [],
        });
        level.loadAverage.push(loadavg()[0] ?? 0);
        const { runsPerSecond, runMs } = await measure(backend, runsAt(concurrency), concurrency);
        level.runsPerSecond.push(runsPerSecond);
        level.runMs.push(...runMs);
        console.log(`round ${round + 1} ${name} c=${concurrency}: ${runsPerSecond.toFixed(2)} runs/s`);
      }
    }
  }

  const table: Record<string, Record<string, unknown>> = {};
  for (const [name, byLevel] of Object.entries(figures)) {
    for (const [concurrency, level] of Object.entries(byLevel)) {
      const runsPerSecond = summarize(level.runsPerSecond);
      (table[name] ??= {})[concurrency] = {
        runsPerSecond,
        stepsPerSecondMedian: Math.round(runsPerSecond.p50 * stepsPerRun * 100) / 100,
        runMs: summarize(level.runMs),
        loadAverage1m: summarize(level.loadAverage),
      };
    }
  }
  const document = {
    measure: values.out,
    description:
      'completed runs/s and steps/s with two Relay-E worker processes, runs of 3 tool steps + final answer, ' +
      'on the dev server and on a two-node Temporal Server cluster on PostgreSQL',
    statistic: `median of ${rounds} rounds (runsPerSecond.p50); min and max beside it; runMs over all rounds`,
    machine: describeMachine(),
    loadAverage: { atStart: loadAverageAtStart, atEnd: loadavg() },
    note: 'the 1-minute load average before each measurement counts this benchmark too: compare it before comparing figures',
    backends: Object.fromEntries(Object.entries(backends).map(([name, backend]) => [name, backend.describe])),
    rounds,
    stepsPerRun,
    runsPerLevel: Object.fromEntries(levels.map((level) => [level, runsAt(level)])),
    throughput: table,
  };
  mkdirSync('bench/results', { recursive: true });
  writeFileSync(`bench/results/${values.out}.json`, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote bench/results/${values.out}.json`);
  for (const [name, byLevel] of Object.entries(table)) console.log(name, JSON.stringify(byLevel));
} finally {
  for (const backend of Object.values(backends)) await backend.stop();
}
