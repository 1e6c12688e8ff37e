import { NativeConnection } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/http/start-api-server.js';
import { RelayError } from '../../src/shared/errors.js';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import { workerCatalogWorkflowId } from '../../src/shared/worker-catalog.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { z } from 'zod';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { autoUpgrade, makeCurrentVersion, versioningOf } from '../helpers/worker-deployments.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

const script: ScriptedTurn[] = [
  { toolCalls: [{ id: 'c1', name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } }] },
  { text: 'Moved.' },
];

/** A tool only the second version serves, so the catalog shows which versions' announcements it applied. */
const addedInV2 = defineTool({
  name: 'added_in_v2',
  description: 'A tool the second build adds.',
  inputSchema: z.object({}),
  execute: () => ({ ok: true }),
});

/** `GET /v1/runs/{id}` of an API over `client`, with a key of the runs' tenant. */
async function snapshotOverHttp(client: RunningWorker['client'], runId: string): Promise<RunSnapshot> {
  const api = await startApiServer({
    client,
    apiKeys: new Map([['key-versioning-0123456789', { tenantId: base.tenantId }]]),
  });
  try {
    const response = await fetch(`${api.url}/v1/runs/${runId}`, {
      headers: { authorization: 'Bearer key-versioning-0123456789' },
    });
    expect(response.status).toBe(200);
    return (await response.json()) as RunSnapshot;
  } finally {
    await api.close();
  }
}

/** A worker of one build in a Worker Deployment, with versioning on and the behavior Relay-E's workflows need. */
async function startVersionedWorker(
  taskQueue: string,
  deploymentName: string,
  buildId: string,
  extra: { connection?: NativeConnection; addsTool?: boolean } = {},
) {
  const model = scriptedModel(script);
  const running = await kit.startWorker({
    taskQueue,
    tools: [...createTestTools(createLedger()), ...(extra.addsTool ? [addedInV2] : [])],
    models: { scripted: model },
    ...(extra.connection ? { connection: extra.connection } : {}),
    workerOptions: {
      workerDeploymentOptions: {
        version: { deploymentName, buildId },
        useWorkerVersioning: true,
        defaultVersioningBehavior: 'AUTO_UPGRADE',
      },
    },
  });
  return { ...running, model };
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`Still waiting for ${what}: ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

describe('Worker Versioning', () => {
  it('refuses a worker whose default behavior would pin Relay-E’s workflows to its version', async () => {
    const refused = await kit
      .startWorker({
        tools: createTestTools(createLedger()),
        models: { scripted: scriptedModel(script) },
        workerOptions: {
          workerDeploymentOptions: {
            version: { deploymentName: uniqueTaskQueue('relay-deployment'), buildId: 'v1' },
            useWorkerVersioning: true,
            defaultVersioningBehavior: 'PINNED',
          },
        },
      })
      .catch((error: unknown) => error);
    expect(RelayError.isInstance(refused) && refused.code).toBe('invalid_input');
    expect(String(refused)).toMatch(
      /run as AUTO_UPGRADE, not PINNED: set workerDeploymentOptions\.defaultVersioningBehavior/,
    );
  });

  it('moves a waiting run and the worker catalog to the new version, and keeps model calls on their worker', async () => {
    const taskQueue = uniqueTaskQueue('versioned');
    const deploymentName = uniqueTaskQueue('relay-deployment');
    const v1 = await startVersionedWorker(taskQueue, deploymentName, 'v1');
    let v2: (RunningWorker & { model: ReturnType<typeof scriptedModel> }) | undefined;
    const connection = await NativeConnection.connect({ address: kit.address });
    try {
      await makeCurrentVersion(kit.temporal, kit.namespace, deploymentName, 'v1');

      // A run that ends on v1: its second model call goes to v1's own model-call queue, which polls unversioned.
      const quick = await v1.client.startRun({ ...base, prompt: 'Move 5 now.' });
      await waitForRun(v1.client, quick.runId, (snapshot) => snapshot.status === 'awaiting_approval');
      await v1.client.approve(quick.runId, 'call_1_0');
      expect(await v1.client.result(quick.runId)).toMatchObject({ status: 'completed', output: 'Moved.' });
      expect(eventTypes(await v1.client.events(quick.runId))).not.toContain('model_context_resent');
      expect(v1.model.requestsOf(quick.runId).map(({ step }) => step)).toEqual([1, 2]);
      expect(await versioningOf(kit.temporal, quick.runId)).toEqual({ buildId: 'v1', behavior: autoUpgrade });

      // A run waiting for a human while v2 becomes current and v1 goes away.
      const waiting = await v1.client.startRun({ ...base, prompt: 'Move 5 later.' });
      await waitForRun(v1.client, waiting.runId, (snapshot) => snapshot.status === 'awaiting_approval');
      // Its readers see the build it is on: the snapshot carries what the server says of the run.
      expect((await v1.client.getRun(waiting.runId)).versioning).toEqual({
        deploymentName,
        buildId: 'v1',
        behavior: 'AUTO_UPGRADE',
      });
      v2 = await startVersionedWorker(taskQueue, deploymentName, 'v2', { connection, addsTool: true });
      await makeCurrentVersion(kit.temporal, kit.namespace, deploymentName, 'v2');
      await v1.stop();

      await v2.client.approve(waiting.runId, 'call_1_0');
      expect(await v2.client.result(waiting.runId)).toMatchObject({ status: 'completed', output: 'Moved.' });
      expect(await versioningOf(kit.temporal, waiting.runId)).toEqual({ buildId: 'v2', behavior: autoUpgrade });
      expect((await snapshotOverHttp(v2.client, waiting.runId)).versioning).toEqual({
        deploymentName,
        buildId: 'v2',
        behavior: 'AUTO_UPGRADE',
      });
      // Its next model call was for v1's own queue, gone with v1: it went to the shared queue whole, and v2 answered.
      expect(eventTypes(await v2.client.events(waiting.runId))).toContain('model_context_resent');
      expect(v2.model.requestsOf(waiting.runId).map(({ step }) => step)).toEqual([2]);

      // The catalog workflow moved too: v1's withdrawal was applied by v2, and v2's tool counts.
      const catalog = await waitFor(
        () => v2!.client.getWorkerCatalog(),
        (read) => read?.workers === 1,
        'the catalog to drop v1',
      );
      expect(catalog?.tools.map(({ name }) => name)).toContain('added_in_v2');
      expect(await versioningOf(kit.temporal, workerCatalogWorkflowId(taskQueue))).toEqual({
        buildId: 'v2',
        behavior: autoUpgrade,
      });
    } finally {
      await Promise.all([v1.stop(), v2?.stop()]);
      await connection.close();
    }
  });
});
