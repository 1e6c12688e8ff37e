/**
 * Where a worker's CPU goes: V8 CPU profiles of the Relay-E and the bare-Temporal worker processes (every thread,
 * workflow threads included, each process with its client) while each runs the throughput benchmark's runs (three
 * tool steps and an answer). Both run against one dev server, in interleaved rounds, the order rotating; only the
 * samples taken while a round's runs were in flight count (each command's window on the monotonic clock V8 stamps
 * samples with), so process start-up and the warm-up do not. Busy CPU a run is the median over rounds, with min and
 * max; self time is summed by where the code lives (Relay-E, the workflow bundle, the Temporal SDK, Zod, other
 * packages, Node, garbage collection) and by function, and the functions of Relay-E and of the workflow bundle are
 * also ranked by total time (with all they call).
 *
 *   npm run bench:profile -- [--rounds 5] [--concurrency 1,10,50] [--runs 100] [--keep-profiles <folder>] [--out NAME]
 *
 * `--keep-profiles` keeps the .cpuprofile files (one folder a variant) to open in Chrome's DevTools; `--out NAME`
 * writes bench/results/NAME.json instead of worker-profile.json, so a quick look leaves the committed file alone.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { parseArgs } from 'node:util';
import { interleave, numberList, withVariants, writeResult } from './lib/measure-harness.js';
import { summarize as summarizeSample } from './lib/stats.js';
import type { CommandWindow } from './lib/variant-protocol.js';
import type { VariantName } from './lib/variants.js';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '5' },
    concurrency: { type: 'string', default: '1,10,50' },
    runs: { type: 'string', default: '100' },
    'keep-profiles': { type: 'string' },
    out: { type: 'string', default: 'worker-profile' },
  },
});
const rounds = Number(values.rounds);
const levels = numberList(values.concurrency);
const runs = Number(values.runs);
const stepsPerRun = 3;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  samples: number[];
  timeDeltas: number[];
}

const categories = [
  'relay-e',
  'workflow bundle',
  'temporal-sdk',
  'zod',
  'other packages',
  'node',
  'gc',
  'idle',
] as const;
type Category = (typeof categories)[number];

function categoryOf({ functionName, url }: ProfileNode['callFrame']): Category {
  if (functionName === '(idle)') return 'idle';
  if (functionName === '(garbage collector)') return 'gc';
  // Workflow code runs from the bundle: the workflow's own code with the SDK's workflow runtime and what it imports.
  if (/\/workflow-bundle-[0-9a-f]+\.js$/.test(url)) return 'workflow bundle';
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

/** One variant's profiles (one a thread), each sample with its time on the monotonic clock. */
interface LoadedProfile {
  nodes: Map<number, ProfileNode>;
  parents: Map<number, number>;
  samples: Array<{ node: number; atMicros: number; micros: number }>;
}

function loadProfiles(directory: string): LoadedProfile[] {
  return readdirSync(directory)
    .filter((name) => name.endsWith('.cpuprofile'))
    .map((file) => {
      const profile = JSON.parse(readFileSync(path.join(directory, file), 'utf8')) as CpuProfile;
      let atMicros = profile.startTime;
      const samples = profile.samples.map((node, index) => {
        const micros = profile.timeDeltas[index] ?? 0;
        atMicros += micros;
        return { node, atMicros, micros };
      });
      return {
        nodes: new Map(profile.nodes.map((node) => [node.id, node])),
        parents: new Map(profile.nodes.flatMap((node) => (node.children ?? []).map((child) => [child, node.id]))),
        samples,
      };
    });
}

/** The frames of a sample's stack, from its node up to the root. */
function* stackOf(id: number, profile: LoadedProfile): Generator<ProfileNode['callFrame']> {
  for (let current: number | undefined = id; current !== undefined; current = profile.parents.get(current)) {
    const frame = profile.nodes.get(current)?.callFrame;
    if (frame) yield frame;
  }
}

const frameName = (frame: ProfileNode['callFrame'], category: Category) =>
  `${frame.functionName || '(anonymous)'} ${frame.url.replace(/^.*node_modules\//, '').replace(`file://${process.cwd()}/`, '')}:${frame.lineNumber + 1} [${category}]`;

const windowOf = (atMicros: number, windows: readonly CommandWindow[]) =>
  windows.findIndex((window) => atMicros >= window.startMicros && atMicros <= window.endMicros);

/**
 * Busy time inside the windows, in one pass over the samples: busy and promise-hook time per window (the hook's
 * time with what it calls), and over all windows by category and by function (self time), with the functions of
 * Relay-E and of the workflow bundle by total time.
 */
function tally(profiles: readonly LoadedProfile[], windows: readonly CommandWindow[]) {
  const byCategory = Object.fromEntries(categories.map((category) => [category, 0])) as Record<Category, number>;
  const bySelf = new Map<string, number>();
  const ownByTotal = new Map<string, number>();
  const busyMicrosByWindow = windows.map(() => 0);
  const promiseHookMicrosByWindow = windows.map(() => 0);
  for (const profile of profiles) {
    for (const sample of profile.samples) {
      const window = windowOf(sample.atMicros, windows);
      if (window < 0) continue;
      const frame = profile.nodes.get(sample.node)?.callFrame;
      if (!frame) continue;
      const category = categoryOf(frame);
      byCategory[category] += sample.micros;
      if (category === 'idle') continue;
      busyMicrosByWindow[window] = (busyMicrosByWindow[window] ?? 0) + sample.micros;
      const name = frameName(frame, category);
      bySelf.set(name, (bySelf.get(name) ?? 0) + sample.micros);
      const ownFrames = new Set<string>();
      let inHook = false;
      for (const caller of stackOf(sample.node, profile)) {
        if (isPromiseHook(caller)) inHook = true;
        const callerCategory = categoryOf(caller);
        if (callerCategory === 'relay-e' || callerCategory === 'workflow bundle') {
          ownFrames.add(frameName(caller, callerCategory));
        }
      }
      if (inHook) promiseHookMicrosByWindow[window] = (promiseHookMicrosByWindow[window] ?? 0) + sample.micros;
      for (const ownFrame of ownFrames) ownByTotal.set(ownFrame, (ownByTotal.get(ownFrame) ?? 0) + sample.micros);
    }
  }
  const busyMicros = busyMicrosByWindow.reduce((sum, micros) => sum + micros, 0);
  return { busyMicros, busyMicrosByWindow, promiseHookMicrosByWindow, byCategory, bySelf, ownByTotal };
}

/** Shares of the busy time, rounded to a tenth of a percent, and each top function's milliseconds a run. */
function shares(tallied: ReturnType<typeof tally>, runsTallied: number) {
  const share = (micros: number) => Math.round((micros / tallied.busyMicros) * 1000) / 10;
  const top = (byName: Map<string, number>) =>
    [...byName]
      .sort((a, b) => b[1] - a[1])
      .slice(0, 20)
      .map(([name, micros]) => ({
        function: name,
        percent: share(micros),
        msPerRun: Math.round((micros / 1000 / runsTallied) * 100) / 100,
      }));
  return {
    busyShareByCategoryPercent: Object.fromEntries(
      categories
        .filter((category) => category !== 'idle')
        .map((category) => [category, share(tallied.byCategory[category])]),
    ),
    topFunctionsBySelfTimePercent: top(tallied.bySelf),
    ownFunctionsByTotalTimePercent: top(tallied.ownByTotal),
  };
}

const variantsProfiled: VariantName[] = ['bare-temporal', 'relay'];
/** Each variant's command windows at each concurrency, one a round, keyed `variant@concurrency`. */
type Windows = Map<string, CommandWindow[]>;
const windowsOf = (windows: Windows, name: string, level: number) => windows.get(`${name}@${level}`) ?? [];

/** Runs the rounds with every variant's process profiled into `directory`; the profiles exist once it returns. */
async function profileRounds(directory: string): Promise<Windows> {
  const windows: Windows = new Map();
  await withVariants(
    variantsProfiled,
    async ({ variants, failed }) => {
      if (failed.length > 0) throw new Error(`A profiled variant could not run: ${JSON.stringify(failed)}`);
      for (const variant of variants.values()) await variant.run({ steps: stepsPerRun, runs: 10, concurrency: 10 });
      for (let round = 0; round < rounds; round++) {
        for (const level of levels) {
          for (const [name, variant] of interleave([...variants], round)) {
            const { window } = await variant.run({ steps: stepsPerRun, runs, concurrency: level });
            if (!window) throw new Error(`Variant ${name} answered without its command window`);
            windows.set(`${name}@${level}`, [...windowsOf(windows, name, level), window]);
          }
        }
        console.log(`round ${round + 1}/${rounds} done`);
      }
    },
    // Profiles are written when each variant's process (and each of its threads) exits, at the end of withVariants.
    { cpuProfileDir: directory },
  );
  return windows;
}

/** One variant at one concurrency: CPU a run per round (summarized over rounds), and shares over all its rounds. */
function summarizeLevel(profiles: readonly LoadedProfile[], windows: readonly CommandWindow[]) {
  const perRun = (micros: number) => micros / 1000 / runs;
  const tallied = tally(profiles, windows);
  return {
    cpuMsPerRun: summarizeSample(tallied.busyMicrosByWindow.map(perRun)),
    promiseHookCpuMsPerRun: summarizeSample(tallied.promiseHookMicrosByWindow.map(perRun)),
    ...shares(tallied, runs * windows.length),
  };
}

const kept = values['keep-profiles'];
const directory = kept ?? mkdtempSync(path.join(tmpdir(), 'relay-e-profile-'));
try {
  const windows = await profileRounds(directory);
  const profiles: Record<string, Record<string, ReturnType<typeof summarizeLevel>>> = {};
  for (const name of variantsProfiled) {
    const loaded = loadProfiles(path.join(directory, name));
    for (const level of levels) {
      const { cpuMsPerRun } = ((profiles[name] ??= {})[level] = summarizeLevel(
        loaded,
        windowsOf(windows, name, level),
      ));
      console.log(
        `${name.padEnd(14)} c=${String(level).padStart(2)}  ${cpuMsPerRun.p50.toFixed(1)} ms a run (min ${cpuMsPerRun.min.toFixed(1)}, max ${cpuMsPerRun.max.toFixed(1)})`,
      );
    }
  }
  const median = (name: string, level: number) => profiles[name]?.[level]?.cpuMsPerRun.p50 ?? NaN;
  const relayOverFloor = Object.fromEntries(
    levels.map((level) => [level, Math.round((median('relay', level) / median('bare-temporal', level)) * 100) / 100]),
  );
  console.log('relay ÷ floor (medians)', JSON.stringify(relayOverFloor));
  writeResult(values.out, {
    description:
      `busy CPU time of each worker process (all threads, its client included) while ${runs} runs of ${stepsPerRun} ` +
      `tool steps were in flight, per concurrency, ${rounds} interleaved rounds; cpuMsPerRun is per round (p50 the ` +
      `median over rounds); promiseHookCpuMsPerRun is the time inside the SDK's promise hook (init in vm-shared.js) ` +
      `with all it calls; shares and top functions are over all rounds of a concurrency`,
    rounds,
    runsPerRound: runs,
    relayOverFloorOfMedians: relayOverFloor,
    profiles,
  });
} finally {
  if (kept === undefined) rmSync(directory, { recursive: true, force: true });
}
