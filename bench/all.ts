/**
 * Every benchmark whose figures docs/benchmarks.md shows for today's code, one after the other, each in a fresh
 * process so none inherits another's heap or JIT state: `npm run bench`. The options are those of the figures in
 * the docs, about 75 minutes on two cores (the cluster's first build adds its own); each script takes its own
 * options when run alone. The "before" rows of the docs were measured on earlier code and are kept as files.
 */
import { execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const scripts: Array<{ file: string; nodeOptions?: string[]; args?: string[]; env?: Record<string, string> }> = [
  { file: 'validation-cost.ts' },
  { file: 'step-overhead.ts', args: ['--rounds', '3', '--runs', '10'] },
  // The one server setting that moves the step most: measured beside the default rather than instead of it.
  { file: 'step-overhead.ts', args: ['--rounds', '3', '--runs', '10'], env: { BENCH_EAGER_ACTIVITIES: '1' } },
  { file: 'throughput.ts', args: ['--rounds', '5', '--runs-per-lane', '3', '--min-runs', '30'] },
  // Model calls sent back to the storing worker (the default here) against every call on the shared task queue.
  {
    file: 'throughput.ts',
    args: [
      ...['--rounds', '5', '--min-runs', '30', '--variants', 'bare-temporal,relay,relay-shared-queue'],
      ...['--out', 'throughput-affinity-against-shared-queue'],
    ],
  },
  // How much of Relay-E's gap to the floor is the server's work for a run's memo and search attributes: 15 rounds,
  // with the CPU a run costs the server and the worker (throughput-bookkeeping.json is this run before CPU was read).
  {
    file: 'throughput.ts',
    args: [
      ...['--rounds', '15', '--runs-per-lane', '3', '--min-runs', '30'],
      ...['--variants', 'bare-temporal,relay,peer,bare-temporal-bookkeeping', '--out', 'throughput-cpu'],
    ],
  },
  // Which of the worker process's threads Relay-E's extra CPU goes to.
  {
    file: 'throughput.ts',
    args: [
      ...['--rounds', '7', '--runs-per-lane', '3', '--min-runs', '30', '--concurrency', '10,50'],
      ...['--variants', 'bare-temporal,bare-temporal-bookkeeping,relay', '--out', 'throughput-cpu-by-thread'],
    ],
  },
  // Whether Relay-E's own model-call worker is what its worker's extra CPU goes to.
  {
    file: 'throughput.ts',
    args: [
      ...['--rounds', '7', '--runs-per-lane', '3', '--min-runs', '30', '--concurrency', '10,50'],
      ...['--variants', 'bare-temporal,relay,relay-shared-queue', '--out', 'throughput-cpu-shared-queue'],
    ],
  },
  // The same bookkeeping in parts: all of it, without the patch marker, only what the start carries.
  {
    file: 'throughput.ts',
    args: [
      ...['--rounds', '15', '--runs-per-lane', '3', '--min-runs', '30', '--concurrency', '10,50', '--variants'],
      'bare-temporal,bare-temporal-bookkeeping,bare-temporal-bookkeeping-no-marker,bare-temporal-bookkeeping-start-only,relay',
      ...['--out', 'throughput-bookkeeping-parts'],
    ],
  },
  { file: 'worker-profile.ts', args: ['--rounds', '5', '--concurrency', '1,10,50', '--runs', '100'] },
  { file: 'run-latency.ts', args: ['--rounds', '5', '--runs', '30'] },
  { file: 'history-size.ts' },
  { file: 'context-resends.ts' },
  { file: 'approval-latency.ts' },
  { file: 'catalog-step.ts' },
  { file: 'memory-per-run.ts', nodeOptions: ['--expose-gc'], args: ['--runs', '600', '--batch', '150'] },
  { file: 'watchers.ts', args: ['--followers', '100', '--label', 'after'] },
  { file: 'watchers.ts', args: ['--followers', '10', '--label', 'after-one-per-run'] },
  { file: 'watchers.ts', args: ['--followers', '0', '--listers', '10', '--label', 'approvals-list'] },
  { file: 'streaming-history.ts' },
  // The commit before the CLI's lazy imports: the docs' "before" column.
  { file: 'cli-startup.ts', args: ['--before', 'ab268ab'] },
  { file: 'cluster-throughput.ts' },
];

for (const script of scripts) {
  console.log(`\n== ${script.file} ${(script.args ?? []).join(' ')} ${JSON.stringify(script.env ?? {})}`);
  const started = Date.now();
  execFileSync(
    process.execPath,
    [
      ...(script.nodeOptions ?? []),
      '--import',
      'tsx',
      fileURLToPath(new URL(`./${script.file}`, import.meta.url)),
      ...(script.args ?? []),
    ],
    { stdio: 'inherit', env: { ...process.env, ...script.env } },
  );
  console.log(`== ${script.file} took ${Math.round((Date.now() - started) / 1000)} s`);
}
