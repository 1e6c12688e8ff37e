import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { relayECliArgs, spawnRelayE } from '../helpers/relay-e-process.js';
import { autoUpgrade, makeCurrentVersion, versioningOf } from '../helpers/worker-deployments.js';

const taskQueue = `cli-versioned-${randomUUID()}`;
const deploymentName = `relay-cli-${randomUUID()}`;
const env = {
  ...process.env,
  TEMPORAL_ADDRESS: inject('temporalAddress'),
  TEMPORAL_NAMESPACE: inject('temporalNamespace'),
  RELAY_E_TASK_QUEUE: taskQueue,
  RELAY_E_WORKER_DEPLOYMENT: deploymentName,
};

/** Runs `relay-e` to completion in the worker's folder, with the deployment in its environment. */
function relayE(args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...relayECliArgs, ...args], { env, cwd: folder }, (error, stdout, stderr) =>
      resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr }),
    );
  });
}

let folder: string;
let worker: ReturnType<typeof spawnRelayE>;
let client: RelayClient;

beforeAll(async () => {
  // The demo worker keeps its bank under the folder it runs in: a fresh one for this file.
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-versioned-worker-'));
  worker = spawnRelayE(['worker', '--json', '--build-id', 'b1'], { cwd: folder, env });
  client = await RelayClient.connect({
    address: inject('temporalAddress'),
    namespace: inject('temporalNamespace'),
    taskQueue,
  });
});

afterAll(async () => {
  await worker.stop();
  await client.close();
  await rm(folder, { recursive: true, force: true });
});

describe('relay-e worker under Worker Versioning', () => {
  it('polls as the named build, and runs its runs as AUTO_UPGRADE once the build is current', async () => {
    expect(JSON.parse(await worker.nextLine())).toMatchObject({
      status: 'ready',
      taskQueue,
      deployment: { deploymentName, buildId: 'b1' },
    });
    await makeCurrentVersion(client.temporal, inject('temporalNamespace'), deploymentName, 'b1');
    const { runId } = await client.startRun({ tenantId: 'demo', model: 'scripted:demo', prompt: 'balance of ACC-1' });
    expect(await client.result(runId)).toMatchObject({ status: 'completed' });
    expect(await versioningOf(client.temporal, runId)).toEqual({ buildId: 'b1', behavior: autoUpgrade });
    const inspect = await relayE(['inspect', runId, '--json']);
    expect(inspect.code).toBe(0);
    expect(JSON.parse(inspect.stdout)).toMatchObject({
      snapshot: { versioning: { deploymentName, buildId: 'b1', behavior: 'AUTO_UPGRADE' } },
    });
    expect((await relayE(['inspect', runId])).stdout).toContain(
      `Version  build b1 of Worker Deployment ${deploymentName} (AUTO_UPGRADE)`,
    );
  });

  it('says in its readable ready lines how to make its build current', async () => {
    const otherDeployment = `relay-cli-${randomUUID()}`;
    const readable = spawnRelayE(['worker', '--build-id', 'b9', '--task-queue', `${taskQueue}-readable`], {
      cwd: folder,
      env: { ...env, RELAY_E_WORKER_DEPLOYMENT: otherDeployment },
    });
    try {
      const lines: string[] = [];
      while (!lines.at(-1)?.includes('set-current-version')) lines.push(await readable.nextLine());
      expect(lines).toContain(`  Worker Versioning: deployment ${otherDeployment}, build b9 (AUTO_UPGRADE)`);
      expect(lines.at(-1)).toBe(
        `  runs come to this build once it is current: temporal worker deployment set-current-version --deployment-name ${otherDeployment} --build-id b9`,
      );
    } finally {
      await readable.stop();
    }
  });

  it('refuses a deployment without a build id as a usage error, before it connects', async () => {
    const { code, stderr } = await relayE(['worker', '--json']);
    expect(code).toBe(2);
    expect(stderr).toMatch(/--build-id \(or RELAY_E_WORKER_BUILD_ID\) is missing or empty/);
  });
});
