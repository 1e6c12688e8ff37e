/**
 * CLI start-up: wall time from spawning `relay-e --help` to its exit, the way each kind of user starts it.
 *   source  node with the tsx loader on src/cli/main.ts, what scripts/relay-e (npm run relay-e --) runs in a clone,
 *           without npm's and bash's own start-up
 *   built   node on dist/src/cli/main.js, what `npx relay-e` runs in a project that installed the package
 * The working tree is measured against an earlier commit (`--before`, exported with git archive into a temporary
 * folder), each built with tsc first. One warm-up per case (it fills tsx's transform cache), then `--runs` rounds
 * with all four cases interleaved, the order rotating each round, so both trees see the same machine load.
 * Writes the samples, their median and min–max to bench/results/cli-startup.json.
 *
 *   npm run bench:cli-startup -- --before <commit> [--runs 11]
 */
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { describeMachine } from './lib/bench-stack.js';
import { interleave } from './lib/measure-harness.js';
import { summarize } from './lib/stats.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'cli-startup' },
    before: { type: 'string' },
    runs: { type: 'string', default: '11' },
  },
});
const runs = Number(values.runs);
if (values.before === undefined) throw new Error('--before COMMIT is required: the tree to compare with');
if (!Number.isInteger(runs) || runs < 1 || runs % 2 === 0) throw new Error('--runs must be an odd positive integer');

const root = path.join(import.meta.dirname, '..');
const tsxLoader = path.join(root, 'node_modules/tsx/dist/loader.mjs');

/** One tree to measure: its folder and the commit it holds. */
interface Tree {
  folder: string;
  commit: string;
}

const git = (...args: string[]) => execFileSync('git', args, { cwd: root, encoding: 'utf8' }).trim();
const beforeFolder = mkdtempSync(path.join(tmpdir(), 'relay-e-cli-startup-'));
try {
  execFileSync('bash', ['-c', `git archive "$1" | tar -x -C "$2"`, 'archive', values.before, beforeFolder], {
    cwd: root,
  });
  symlinkSync(path.join(root, 'node_modules'), path.join(beforeFolder, 'node_modules'));
  const trees: Record<'before' | 'after', Tree> = {
    before: { folder: beforeFolder, commit: git('rev-parse', '--short', values.before) },
    after: {
      folder: root,
      commit: `${git('rev-parse', '--short', 'HEAD')}${git('status', '--porcelain') ? '+changes' : ''}`,
    },
  };
  for (const tree of Object.values(trees)) {
    console.log(`building ${tree.commit} (tsc -p tsconfig.build.json)`);
    execFileSync(path.join(root, 'node_modules/.bin/tsc'), ['-p', 'tsconfig.build.json'], {
      cwd: tree.folder,
      stdio: 'inherit',
    });
  }

  const cases = Object.entries(trees).flatMap(([label, tree]) => [
    {
      name: `${label} source`,
      args: [`--import`, tsxLoader, path.join(tree.folder, 'src/cli/main.ts'), '--help'],
      tree,
    },
    { name: `${label} built`, args: [path.join(tree.folder, 'dist/src/cli/main.js'), '--help'], tree },
  ]);
  const samples = new Map<string, number[]>(cases.map((entry) => [entry.name, []]));
  const loadBefore = loadavg()[0];
  for (const entry of cases) timeOnce(entry.args, entry.tree.folder);
  for (let round = 0; round < runs; round++) {
    for (const entry of interleave(cases, round))
      samples.get(entry.name)?.push(timeOnce(entry.args, entry.tree.folder));
  }

  const results = Object.fromEntries(
    [...samples].map(([name, values]) => {
      const summary = summarize(values);
      console.log(
        `${name.padEnd(14)} median ${summary.p50.toFixed(0)} ms (min ${summary.min.toFixed(0)}, max ${summary.max.toFixed(0)})`,
      );
      return [name, { medianMs: summary.p50, minMs: summary.min, maxMs: summary.max, samplesMs: values.map(round1) }];
    }),
  );
  const resultFile = path.join(root, `bench/results/${values.out}.json`);
  mkdirSync(path.dirname(resultFile), { recursive: true });
  writeFileSync(
    resultFile,
    `${JSON.stringify(
      {
        measure: values.out,
        description:
          'wall ms from spawning `relay-e --help` to its exit; median of an odd number of runs, with min-max; ' +
          'source = node with the tsx loader on src/cli/main.ts, built = node on dist/src/cli/main.js',
        measuredAt: new Date().toISOString(),
        machine: describeMachine(),
        loadAverage1m: { atStart: round1(loadBefore ?? 0), atEnd: round1(loadavg()[0] ?? 0) },
        runs,
        commits: { before: trees.before.commit, after: trees.after.commit },
        results,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${path.relative(root, resultFile)}`);
} finally {
  rmSync(beforeFolder, { recursive: true, force: true });
}

/** Milliseconds from spawn to exit of one `relay-e --help`; a failing start is an error, not a sample. */
function timeOnce(args: readonly string[], cwd: string): number {
  const started = performance.now();
  const result = spawnSync(process.execPath, args, { cwd, encoding: 'utf8' });
  const elapsed = performance.now() - started;
  if (result.status !== 0) throw new Error(`relay-e --help exited ${result.status}: ${result.stderr}`);
  return elapsed;
}

function round1(value: number): number {
  return Math.round(value * 10) / 10;
}
