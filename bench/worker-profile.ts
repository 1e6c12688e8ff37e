/**
 * Where a worker's CPU goes: V8 CPU profiles of the Relay-E and the bare-Temporal worker processes (every thread,
 * workflow threads included) while each runs the throughput benchmark's runs (three tool steps and an answer) at
 * one concurrency. Self time is summed by where the code lives: Relay-E's own code, the Temporal SDK, Zod, other
 * packages, Node itself, garbage collection, and idle. A profile is a sample, not a timing: read the shares, and
 * compare Relay-E's with the floor's.
 *
 *   npm run bench:profile -- [--concurrency 10] [--runs 200]
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { withVariants, writeResult } from './lib/measure-harness.js';
import type { VariantName } from './lib/variants.js';

const { values } = parseArgs({
  options: { concurrency: { type: 'string', default: '10' }, runs: { type: 'string', default: '200' } },
});
const concurrency = Number(values.concurrency);
const runs = Number(values.runs);
const stepsPerRun = 3;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

const categories = ['relay-e', 'temporal-sdk', 'zod', 'other packages', 'node', 'gc', 'idle'] as const;
type Category = (typeof categories)[number];

function categoryOf({ functionName, url }: ProfileNode['callFrame']): Category {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  if (/node_modules\/zod\//.test(url)) return 'zod';
  if (/node_modules\/@temporalio\/|@temporalio\//.test(url)) return 'temporal-sdk';
  if (/node_modules\//.test(url)) return 'other packages';
  if (/\/(src|workflows|activities)\/|\.\/(src|workflows|activities)\//.test(url)) return 'relay-e';
  return 'node';
}

/**
 * The SDK's promise hook: it records a stack trace for every promise a workflow makes. Its time with everything it
 * calls (the stack trace, its source-mapped frames) is what a workflow's promises cost beyond their own.
 */
function isPromiseHook({ functionName, url }: ProfileNode['callFrame']): boolean {
  return functionName === 'init' && url.endsWith('@temporalio/worker/lib/workflow/vm-shared.js');
}

/** Whether the sample's stack, from its node up to the root, passes through the promise hook. */
function inPromiseHook(id: number, nodes: Map<number, ProfileNode>, parents: Map<number, number>): boolean {
  for (let current: number | undefined = id; current !== undefined; current = parents.get(current)) {
    const frame = nodes.get(current)?.callFrame;
    if (frame && isPromiseHook(frame)) return true;
  }
  return false;
}

/**
 * Self time per category and per function (top 15 outside idle), and the promise hook's time with what it calls,
 * over every profile a variant wrote.
 */
function summarize(directory: string) {
  const byCategory = Object.fromEntries(categories.map((category) => [category, 0])) as Record<Category, number>;
  const byFunction = new Map<string, number>();
  let promiseHookMicros = 0;
  for (const file of readdirSync(directory).filter((name) => name.endsWith('.cpuprofile'))) {
    const profile = JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as CpuProfile;
    const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
    const parents = new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id])));
    profile.samples.forEach((id, index) => {
      const frame = nodes.get(id)?.callFrame;
      if (!frame) return;
      const micros = profile.timeDeltas[index] ?? 0;
      const category = categoryOf(frame);
      byCategory[category] += micros;
      if (inPromiseHook(id, nodes, parents)) promiseHookMicros += micros;
      if (category === 'idle') return;
      const name = `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '')}:${frame.lineNumber + 1} [${category}]`;
      byFunction.set(name, (byFunction.get(name) ?? 0) + micros);
    });
  }
  const busy = categories.filter((category) => category !== 'idle').reduce((sum, key) => sum + byCategory[key], 0);
  const share = (micros: number) => Math.round((micros / busy) * 1000) / 10;
  return {
    busyCpuMs: Math.round(busy / 1000),
    promiseHookCpuMs: Math.round(promiseHookMicros / 1000),
    busyShareByCategoryPercent: Object.fromEntries(
      categories.filter((category) => category !== 'idle').map((category) => [category, share(byCategory[category])]),
    ),
    topFunctionsBySelfTimePercent: [...byFunction]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 15)
      .map(([name, micros]) => ({ function: name, percent: share(micros) })),
  };
}

const variantsProfiled: VariantName[] = ['bare-temporal', 'relay'];
const profiles: Record<
  string,
  ReturnType<typeof summarize> & { runs: number; cpuMsPerRun: number; promiseHookCpuMsPerRun: number }
> = {};
for (const name of variantsProfiled) {
  const directory = mkdtempSync(path.join(tmpdir(), `relay-e-profile-${name}-`));
  try {
    await withVariants(
      [name],
      async ({ variants }) => {
        await variants.get(name)?.run({ steps: stepsPerRun, runs, concurrency });
      },
      { cpuProfileDir: directory },
    );
    // Profiles are written when the variant's process (and each of its threads) exits.
    const summary = summarize(directory);
    const perRun = (cpuMs: number) => Math.round((cpuMs / runs) * 100) / 100;
    profiles[name] = {
      ...summary,
      runs,
      cpuMsPerRun: perRun(summary.busyCpuMs),
      promiseHookCpuMsPerRun: perRun(summary.promiseHookCpuMs),
    };
    console.log(name, JSON.stringify(profiles[name], null, 2));
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

writeResult('worker-profile', {
  description:
    `CPU self time of each worker process (all threads) over a warm-up and ${runs} runs of ${stepsPerRun} tool ` +
    `steps at concurrency ${concurrency}, one measurement; busy time excludes idle; promiseHookCpuMs is the time ` +
    `inside the SDK's promise hook (init in vm-shared.js) with all it calls`,
  concurrency,
  profiles,
});
