import { mkdirSync, writeFileSync } from 'node:fs';
import { Client, Connection } from '@temporalio/client';
import { benchServerOptions, benchSqlitePragmas, describeMachine, startBenchServer } from './bench-stack.js';
import { dynamicConfigArgs } from '../../src/dev/temporal-dev-server.js';
import type { VariantProcess } from './variant-protocol.js';
import { peerPackage, startVariants, stopVariants } from './variants.js';
import type { FailedVariant, VariantName, VariantOptions } from './variants.js';

/** What a measure gets: the running variants, a client to read histories, and what failed to start. */
export interface MeasureContext {
  variants: Map<VariantName, VariantProcess>;
  failed: FailedVariant[];
  client: Client;
  /** The dev server's process id, for reading the CPU it uses. */
  serverPid: number;
}

/**
 * Starts one dev server on a SQLite file and the given variants against it, prints the machine, runs the measure,
 * and stops everything even when the measure throws.
 */
export async function withVariants<T>(
  names: readonly VariantName[],
  measure: (context: MeasureContext) => Promise<T>,
  options: VariantOptions = {},
): Promise<T> {
  console.log('machine', JSON.stringify(describeMachine()));
  const server = await startBenchServer();
  const connection = await Connection.connect({ address: server.address });
  const { running, failed } = await startVariants(server.address, names, options);
  for (const failure of failed) console.log(`variant ${failure.name} could not run: ${failure.error}`);
  try {
    return await measure({ variants: running, failed, client: new Client({ connection }), serverPid: server.pid });
  } finally {
    await stopVariants(running);
    await connection.close();
    await server.stop();
  }
}

/** The variants in a different order each round, so no variant always runs first on a cold or a tired machine. */
export function interleave<T>(items: readonly T[], round: number): T[] {
  const shift = round % Math.max(1, items.length);
  return [...items.slice(shift), ...items.slice(0, shift)];
}

/** Writes bench/results/<measure>.json with the machine and the server settings beside the figures. */
export function writeResult(measure: string, result: Record<string, unknown>): void {
  mkdirSync('bench/results', { recursive: true });
  // A measure taken with other server settings is kept beside the default, not over it.
  const settings = benchServerOptions();
  const suffixes = [
    ...(Object.keys(settings.dynamicConfig ?? {}).length > 0 ? ['eager-activities'] : []),
    ...(settings.liftDispatchCap === false ? ['dispatch-cap'] : []),
  ];
  const file = [measure, ...suffixes].join('-');
  const document = {
    measure: file,
    machine: describeMachine(),
    server: {
      kind: 'temporal server start-dev (SQLite file)',
      args: [...benchSqlitePragmas, ...dynamicConfigArgs(settings)].join(' '),
    },
    peer: peerPackage,
    ...result,
  };
  writeFileSync(`bench/results/${file}.json`, `${JSON.stringify(document, null, 2)}\n`);
  console.log(`wrote bench/results/${file}.json`);
}

/** Reads a comma-separated list of numbers from a command-line option. */
export function numberList(value: string | undefined): number[] {
  return (value ?? '')
    .split(',')
    .filter((part) => part.trim() !== '')
    .map(Number);
}
