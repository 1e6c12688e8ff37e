import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { RelayWorkerOptions } from './relay-variants.js';
import { VariantProcess } from './variant-protocol.js';

/** Every variant, in the order tables list them. */
export const allVariants = ['in-process', 'bare-temporal', 'relay', 'peer'] as const;
/**
 * Variants a benchmark runs only when named (`--variants`): Relay-E with every model call on the shared task queue
 * (`keepModelCallsOnWorker: false`), to measure what sending calls back to the storing worker costs or saves; and
 * the floor with the server-side bookkeeping of a Relay-E run (its memo, search attributes, patch marker), to tell
 * the server's share of Relay-E's gap to the floor from its own code's: all of it, all but the patch marker, or only
 * what the start carries.
 */
export const namedOnlyVariants = [
  'relay-shared-queue',
  'bare-temporal-bookkeeping',
  'bare-temporal-bookkeeping-no-marker',
  'bare-temporal-bookkeeping-start-only',
] as const;
export type VariantName = (typeof allVariants)[number] | (typeof namedOnlyVariants)[number];

/** Reads a `--variants` list, refusing a name no variant has. */
export function variantList(text: string): VariantName[] {
  const known: readonly string[] = [...allVariants, ...namedOnlyVariants];
  return text.split(',').map((name) => {
    if (!known.includes(name)) throw new Error(`Unknown variant '${name}': one of ${known.join(', ')}`);
    return name as VariantName;
  });
}

/** The peer's version, pinned in bench/peer/package.json; printed with its results. */
export const peerPackage = '@temporalio/ai-sdk@1.23.0';

const peerDirectory = fileURLToPath(new URL('../peer/', import.meta.url));

/** A variant that could not start or failed, kept in the results with its error instead of being dropped. */
export interface FailedVariant {
  name: VariantName;
  error: string;
}

/**
 * Starts each variant in its own process against one server and checks it answers a one-run warm-up. A variant
 * that fails is returned in `failed` with the error, so the benchmark reports it rather than dropping it.
 */
export async function startVariants(
  address: string,
  names: readonly VariantName[],
  options: VariantOptions = {},
): Promise<{ running: Map<VariantName, VariantProcess>; failed: FailedVariant[] }> {
  const running = new Map<VariantName, VariantProcess>();
  const failed: FailedVariant[] = [];
  for (const name of names) {
    let variant: VariantProcess | undefined;
    try {
      variant = spawnVariant(name, address, options);
      await variant.run({ steps: 1, runs: 2, concurrency: 1 });
      running.set(name, variant);
    } catch (error) {
      failed.push({ name, error: error instanceof Error ? error.message : String(error) });
      await variant?.stop().catch(() => undefined);
    }
  }
  return { running, failed };
}

/** Stops every variant process. */
export async function stopVariants(running: Map<VariantName, VariantProcess>): Promise<void> {
  await Promise.all([...running.values()].map((variant) => variant.stop()));
}

/** How the variants' processes are started. */
export interface VariantOptions {
  relayWorkerOptions?: RelayWorkerOptions;
  /** Write a V8 CPU profile of each variant process (every thread) into a folder of this one named after it. */
  cpuProfileDir?: string;
  /** Where each variant of this package serves the SDK's Prometheus metrics (`host:port`); none when absent. */
  metricsAddresses?: Partial<Record<VariantName, string>>;
}

function spawnVariant(name: VariantName, address: string, options: VariantOptions): VariantProcess {
  const profile =
    options.cpuProfileDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', join(options.cpuProfileDir, name)];
  if (name === 'peer') {
    ensurePeerInstalled();
    return new VariantProcess(name, {
      args: [...profile, '--import', 'tsx', 'peer-variant.ts', '--address', address],
      cwd: peerDirectory,
    });
  }
  return new VariantProcess(name, {
    args: [
      ...profile,
      '--import',
      'tsx',
      fileURLToPath(new URL('./relay-variants.ts', import.meta.url)),
      '--variant',
      name,
      '--address',
      address,
      '--worker-options',
      JSON.stringify(options.relayWorkerOptions ?? {}),
      ...(options.metricsAddresses?.[name] ? ['--metrics-address', options.metricsAddresses[name]] : []),
    ],
  });
}

/** The peer lives in its own package (bench/peer, own lockfile); install it from its lockfile when absent. */
function ensurePeerInstalled(): void {
  if (existsSync(`${peerDirectory}node_modules/@temporalio/ai-sdk`)) return;
  process.stderr.write(`Installing the peer (${peerPackage}) in bench/peer from its lockfile\n`);
  execFileSync('npm', ['ci', '--no-audit', '--no-fund'], {
    cwd: peerDirectory,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}
