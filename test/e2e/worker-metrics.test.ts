import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { freePort, holdPort } from '../helpers/free-port.js';
import { spawnRelayE } from '../helpers/relay-e-process.js';

// `relay-e worker` with RELAY_E_METRICS_ADDRESS: a real worker process on the harness's Temporal dev server, scraped
// over HTTP as Prometheus would after it ran a run.

const taskQueue = `metrics-${randomUUID()}`;
const env = {
  ...process.env,
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_NAMESPACE: inject('temporalNamespace'),
  RELAY_E_TASK_QUEUE: taskQueue,
};

let folder: string;
let client: RelayClient;
const workers: Array<ReturnType<typeof spawnRelayE>> = [];

/** `relay-e worker` with these flags and settings, killed after the test if it is still running. */
function startWorker(args: string[], settings: NodeJS.ProcessEnv) {
  const worker = spawnRelayE(['worker', ...args], { cwd: folder, env: { ...env, ...settings } });
  workers.push(worker);
  return worker;
}

beforeAll(async () => {
  // The demo worker keeps its bank and payloads under the folder it runs in: a fresh one for this file.
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-metrics-'));
  client = await RelayClient.connect({
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
    taskQueue,
  });
});

afterEach(() => {
  // A worker that should have refused to start would otherwise outlive the test, polling.
  for (const worker of workers.splice(0)) if (worker.child.exitCode === null) worker.child.kill('SIGKILL');
});

afterAll(async () => {
  await client?.close();
  await rm(folder, { recursive: true, force: true });
});

async function scrape(address: string): Promise<string> {
  const response = await fetch(`http://${address}/metrics`);
  expect(response.status).toBe(200);
  return response.text();
}

describe('relay-e worker’s metrics', () => {
  it('serves the SDK’s metrics for Prometheus on RELAY_E_METRICS_ADDRESS, counting the runs it ran', async () => {
    const address = `127.0.0.1:${await freePort()}`;
    const worker = startWorker(['--json'], { RELAY_E_METRICS_ADDRESS: address });
    try {
      expect(JSON.parse(await worker.nextLine())).toMatchObject({ status: 'ready', taskQueue });
      const { runId } = await client.startRun({ tenantId: 'demo', model: 'scripted:demo', prompt: 'balance of ACC-1' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed' });

      const onQueue = `task_queue="${taskQueue}"`;
      await expect
        .poll(async () => (await scrape(address)).split('\n').filter((line) => line.includes(onQueue)), {
          timeout: 10_000,
        })
        .toEqual(
          expect.arrayContaining([
            expect.stringMatching(/^temporal_workflow_completed\{.*\} [1-9]/),
            expect.stringMatching(/^temporal_activity_execution_latency_count\{.*\} [1-9]/),
            expect.stringMatching(/^temporal_workflow_task_schedule_to_start_latency_count\{.*\} [1-9]/),
          ]),
        );
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });

  it('refuses to start with exit 2 when the metrics port is taken, and says so', async () => {
    const held = await holdPort();
    try {
      const address = `127.0.0.1:${held.port}`;
      const worker = startWorker([], { RELAY_E_METRICS_ADDRESS: address });

      expect(await worker.exited).toBe(2);
      expect(worker.stderr()).toContain(`relay-e worker: cannot serve metrics on RELAY_E_METRICS_ADDRESS=${address}`);
    } finally {
      held.close();
    }
  });

  it('refuses an address that is not an IP address and a port, with exit 2', async () => {
    const worker = startWorker([], { RELAY_E_METRICS_ADDRESS: 'localhost:9464' });

    expect(await worker.exited).toBe(2);
    expect(worker.stderr()).toBe(
      "relay-e worker: RELAY_E_METRICS_ADDRESS 'localhost:9464' must be an IP address and a port, as 0.0.0.0:9464 or [::]:9464\n",
    );
  });
});
