import type { TestProject } from 'vitest/node';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import { startTemporalCluster } from './temporal-cluster.js';

declare module 'vitest' {
  /** What the `temporal` project's global setup hands to every test file through `inject`. */
  export interface ProvidedContext {
    /** gRPC address (`host:port`) of the Temporal server the tests run against. */
    temporalAddress: string;
    /** Namespace the tests use; it already exists, with Relay-E's search attributes registered. */
    temporalNamespace: string;
  }
}

/**
 * Starts one in-memory, headless `temporal server start-dev` for the whole `temporal` project and stops it
 * after the last test file. Set RELAY_E_TEMPORAL_ADDRESS to run against a server that is already running, or
 * RELAY_E_TEMPORAL=cluster to run against a two-node Temporal Server cluster on PostgreSQL (scripts/cluster.sh)
 * started here, through node 1's frontend.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const reuseAddress = process.env['RELAY_E_TEMPORAL_ADDRESS'];
  const kind = process.env['RELAY_E_TEMPORAL'] ?? 'dev';
  if (kind !== 'dev' && kind !== 'cluster') throw new Error(`RELAY_E_TEMPORAL is '${kind}': use 'dev' or 'cluster'`);
  const server =
    kind === 'cluster' && reuseAddress === undefined
      ? await startTemporalCluster().then((cluster) => ({
          address: cluster.addresses[0] ?? '',
          namespace: 'default',
          stop: () => cluster.stop(),
        }))
      : await startTemporalDevServer(reuseAddress ? { reuseAddress } : {});
  project.provide('temporalAddress', server.address);
  project.provide('temporalNamespace', server.namespace);
  return () => server.stop();
}
