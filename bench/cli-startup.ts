/**
 * CLI start-up: wall time from spawning `relay-e --help` to its exit, the way each kind of user starts it.
 *   source  node with the tsx loader on src/cli/main.ts, what scripts/relay-e (npm run relay-e --) runs in a clone,
 *           without npm's and bash's own start-up
 *   built   node on dist/src/cli/main.js, what `npx relay-e` runs in a project that installed the package
 * The build (npm run build) runs first. One warm-up each (it fills tsx's transform cache), then `--runs` rounds
 * with the two interleaved. Writes the samples, their median and min–max under `--label` in
 * bench/results/cli-startup.json, next to the other labels already there (e.g. before and after a change).
 *
 *   npm run bench:cli-startup -- --label after [--runs 11]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { describeMachine } from './lib/bench-stack.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: { label: { type: 'string' }, runs: { type: 'string', default: '11' } },
});
const runs = Number(values.runs);
if (values.label === undefined) throw new Error('--label NAME is required (e.g. before, after)');
if (!Number.isInteger(runs) || runs < 1 || runs % 2 === 0) throw new Error('--runs must be an odd positive integer');

const root = path.join(import.meta.dirname, '..');
const resultFile = path.join(root, 'bench/results/cli-startup.json');
const ways = {
  source: [
    '--import',
    path.join(root, 'node_modules/tsx/dist/loader.mjs'),
    path.join(root, 'src/cli/main.ts'),
    '--help',
  ],
  built: [path.join(root, 'dist/src/cli/main.js'), '--help'],
} as const;

console.log('building dist/ (npm run build)');
execFileSync('npx', ['tsc', '-p', 'tsconfig.build.json'], { cwd: root, stdio: 'inherit' });

/** Milliseconds from spawn to exit of one `relay-e --help`; a failing start is an error, not a sample. */
function timeOnce(args: readonly string[]): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd: root, encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`relay-e --help exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

const samples: Record<keyof typeof ways, number[]> = { source: [], built: [] };
for (const args of Object.values(ways)) timeOnce(args);
for (let round = 0; round < runs; round++) {
  const order = round % 2 === 0 ? (['source', 'built'] as const) : (['built', 'source'] as const);
  for (const way of order) samples[way].push(timeOnce(ways[way]));
}

const measured = Object.fromEntries(
  Object.entries(samples).map(([way, values]) => {
    const summary = summarize(values);
    console.log(
      `${way.padEnd(6)} median ${summary.p50.toFixed(0)} ms (min ${summary.min.toFixed(0)}, max ${summary.max.toFixed(0)})`,
    );
    return [way, { medianMs: summary.p50, minMs: summary.min, maxMs: summary.max, samplesMs: values.map(round) }];
  }),
);

const previous = existsSync(resultFile)
  ? (JSON.parse(readFileSync(resultFile, 'utf8')) as { labels?: Record<string, unknown> })
  : {};
const commit = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { cwd: root, encoding: 'utf8' }).trim();
mkdirSync(path.dirname(resultFile), { recursive: true });
writeFileSync(
  resultFile,
  `${JSON.stringify(
    {
      measure: 'cli-startup',
      description: 'wall ms from spawning `relay-e --help` to its exit; median of an odd number of runs, with min-max',
      labels: {
        ...previous.labels,
        [values.label]: { commit, measuredAt: new Date().toISOString(), machine: describeMachine(), runs, ...measured },
      },
    },
    null,
    2,
  )}\n`,
);
console.log(`wrote ${path.relative(root, resultFile)} (label ${values.label})`);

function round(value: number): number {
  return Math.round(value * 10) / 10;
}
