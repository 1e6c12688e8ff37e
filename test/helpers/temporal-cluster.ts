import { execFile, execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const clusterScript = path.join(import.meta.dirname, '..', '..', 'scripts', 'cluster.sh');

/** Options of {@link startTemporalCluster}. */
export interface TemporalClusterOptions {
  /**
   * Temporal Server processes, each running frontend, history, matching and worker.
   * @default 2
   */
  nodes?: number;
  /**
   * History shards, spread over the nodes.
   * @default 4
   */
  shards?: number;
  /**
   * How long `up` may take: it builds the Temporal Server once per machine (about 4 minutes) when it is missing.
   * @default 600_000
   */
  startTimeoutMs?: number;
}

/** A service the servers record as alive in the cluster's membership table. */
export interface ClusterMember {
  role: 'frontend' | 'history' | 'matching' | 'worker';
  address: string;
}

/** A cluster started by `scripts/cluster.sh` in a folder of its own, and the faults the script can inject. */
export interface TemporalCluster {
  readonly directory: string;
  /** Frontend gRPC address of each node, node 1 first. */
  readonly addresses: readonly string[];
  /** SIGKILLs node `node` (1-based); its services leave the ring once the others notice. */
  killNode(node: number): Promise<void>;
  /** Starts node `node` again on the same ports and resolves once its frontend serves. */
  startNode(node: number): Promise<void>;
  /** Stops PostgreSQL: `immediate` is an abrupt stop (a crash, recovered from the WAL at the next start). */
  stopDatabase(mode: 'immediate' | 'fast'): Promise<void>;
  startDatabase(): Promise<void>;
  members(): Promise<ClusterMember[]>;
  /** What `scripts/cluster.sh status` says. */
  status(): Promise<string>;
  /** Stops every process and deletes the folder. */
  stop(): Promise<void>;
}

/** Error thrown when `scripts/cluster.sh` fails; the message carries what it printed. */
export class TemporalClusterError extends Error {
  override readonly name = 'TemporalClusterError';
}

const startAttemptsOnPortClash = 3;

/**
 * Starts PostgreSQL and a cluster of Temporal Servers (deploy/temporal/relay-e.yaml) with `scripts/cluster.sh up`
 * in a fresh temporary folder on free-looking ports, retrying on other ports when one is taken.
 */
export async function startTemporalCluster(options: TemporalClusterOptions = {}): Promise<TemporalCluster> {
  for (let attempt = 1; ; attempt++) {
    // A mode-0700 temporary folder would shut out the `postgres` user that PostgreSQL runs as under root.
    const directory = mkdtempSync(path.join(tmpdir(), 'relay-cluster-'));
    execFileSync('chmod', ['755', directory]);
    // Membership ports (300 below) must stay under 32768: the membership table stores them as smallint.
    const port = 20_000 + 50 * Math.floor(Math.random() * 240);
    const env = {
      RELAY_E_CLUSTER_DIR: directory,
      RELAY_E_CLUSTER_PORT: String(port),
      RELAY_E_CLUSTER_DB_PORT: String(port + 40),
      RELAY_E_CLUSTER_NODES: String(options.nodes ?? 2),
      RELAY_E_CLUSTER_SHARDS: String(options.shards ?? 4),
    };
    const script = (args: string[], timeout = 120_000) => runClusterScript(args, env, timeout);
    const stop = () => destroyCluster(env);
    process.once('exit', stop);
    try {
      await script(['up'], options.startTimeoutMs ?? 600_000);
    } catch (error) {
      stop();
      process.off('exit', stop);
      if (attempt < startAttemptsOnPortClash && /is taken/.test(String(error))) continue;
      throw error;
    }
    const addresses = (await script(['addresses'])).trim().split('\n');
    return {
      directory,
      addresses,
      killNode: async (node) => void (await script(['kill-node', String(node)])),
      startNode: async (node) => void (await script(['start-node', String(node)])),
      stopDatabase: async (mode) => void (await script(['stop-database', mode])),
      startDatabase: async () => void (await script(['start-database'])),
      members: async () => parseMembers(await script(['members'])),
      status: () => script(['status']).catch((error: unknown) => String(error)),
      stop: async () => {
        process.off('exit', stop);
        stop();
      },
    };
  }
}

async function runClusterScript(args: string[], env: Record<string, string>, timeout: number): Promise<string> {
  try {
    const { stdout } = await run('bash', [clusterScript, ...args], {
      env: { ...process.env, ...env },
      timeout,
      maxBuffer: 16 * 1024 * 1024,
    });
    return stdout;
  } catch (error) {
    const output = error as { stdout?: string; stderr?: string; message: string };
    throw new TemporalClusterError(
      `scripts/cluster.sh ${args.join(' ')} failed (${env['RELAY_E_CLUSTER_DIR']}): ` +
        `${output.stderr || output.message}${output.stdout ?? ''}`,
      { cause: error },
    );
  }
}

/** Stops everything and deletes the folder; synchronous, so it also runs from a process `exit` handler. */
function destroyCluster(env: Record<string, string>): void {
  try {
    execFileSync('bash', [clusterScript, 'down'], { env: { ...process.env, ...env }, stdio: 'ignore' });
  } finally {
    rmSync(env['RELAY_E_CLUSTER_DIR'] ?? '', { recursive: true, force: true });
  }
}

function parseMembers(output: string): ClusterMember[] {
  return output
    .trim()
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => {
      const [role, address] = line.split(' ');
      return { role: role as ClusterMember['role'], address: address ?? '' };
    });
}
