import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';

/** How big a reliability suite runs: `small` in CI, `large` by hand (`npm run reliability`). */
export type ReliabilitySize = 'small' | 'large';

/** The size chosen by RELAY_E_RELIABILITY_SIZE; anything but `large` runs small. */
export const reliabilitySize: ReliabilitySize = process.env['RELAY_E_RELIABILITY_SIZE'] === 'large' ? 'large' : 'small';

/** Picks the value for the current size. */
export function bySize<T>(values: Record<ReliabilitySize, T>): T {
  return values[reliabilitySize];
}

/** Writes a suite's figures to `test/reliability/results/<suite>-<size>.json` and returns the file. */
export async function writeResults(suite: string, figures: Record<string, unknown>): Promise<string> {
  const file = path.join(import.meta.dirname, 'results', `${suite}-${reliabilitySize}.json`);
  await mkdir(path.dirname(file), { recursive: true });
  const record = {
    suite,
    size: reliabilitySize,
    recordedAt: new Date().toISOString(),
    node: process.version,
    ...figures,
  };
  await writeFile(file, `${JSON.stringify(record, null, 2)}\n`);
  return file;
}

/** The value below which `fraction` of `values` fall (nearest rank); 0 for no values. */
export function percentile(values: readonly number[], fraction: number): number {
  if (values.length === 0) return 0;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)] ?? 0;
}

/** A seeded pseudo-random source (mulberry32), so a failing fault schedule can be replayed from its seed. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

/** The seed of this run: RELAY_E_RELIABILITY_SEED when set, so a failure can be reproduced, else a fresh one. */
export function reliabilitySeed(): number {
  const fixed = Number(process.env['RELAY_E_RELIABILITY_SEED']);
  return Number.isInteger(fixed) ? fixed : Math.floor(Math.random() * 2 ** 31);
}

/** A TypeScript module running in its own Node process, started with tsx. */
export interface ChildModule {
  readonly process: ChildProcess;
  /** Sends SIGKILL and resolves once the process is gone. */
  kill(): Promise<void>;
  /** Resolves with the exit code once the process ends by itself. */
  readonly exited: Promise<number | null>;
}

/** Starts `file` under tsx with `env` added, and resolves once it prints `ready` on stdout. */
export function startChildModule(
  file: string,
  env: Record<string, string>,
  onLine?: (line: string) => void,
): Promise<ChildModule> {
  const child = spawn(process.execPath, ['--no-warnings', '--import', 'tsx', file], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const kill = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  };
  return new Promise((resolve, reject) => {
    let buffer = '';
    let ready = false;
    void exited.then((code) => {
      if (!ready) reject(new Error(`${path.basename(file)} exited with ${code} before it was ready`));
    });
    child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
      buffer += chunk;
      let end = buffer.indexOf('\n');
      while (end >= 0) {
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + 1);
        if (!ready && line === 'ready') {
          ready = true;
          resolve({ process: child, kill, exited });
        } else {
          onLine?.(line);
        }
        end = buffer.indexOf('\n');
      }
    });
  });
}
