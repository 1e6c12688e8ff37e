import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Connection } from '@temporalio/client';
import type { Payload, PayloadCodec } from '@temporalio/common';
import { SimplePlugin } from '@temporalio/plugin';
import protos from '@temporalio/proto';
import { DefaultLogger, NativeConnection, Worker } from '@temporalio/worker';
import type { NativeConnectionPlugin, WorkerPlugin } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { readHistory } from '../../src/client/read-history.js';
import { DevServerPortClashError, startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import { RelayClient } from '../../src/client/relay-client.js';
import { encryptionKeyIdMetadataKey } from '../../src/security/aes-gcm-payload-codec.js';
import { withDefaultPorts } from '../helpers/default-ports-lock.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { RelayPlugin, bundleRelayWorkflows, createWorker } from '../../src/worker/index.js';
import type { RelayPluginOptions } from '../../src/worker/index.js';
import { waitForRun, waitForWorkerCatalog } from '../helpers/relay-test-kit.js';
import { countingCloses } from '../helpers/test-tools.js';
import { connectTemporalTestEnv, uniqueTaskQueue, uniqueWorkflowId, withWorker } from '../helpers/temporal-test-env.js';
import type { TemporalTestEnv } from '../helpers/temporal-test-env.js';

let env: TemporalTestEnv;

beforeAll(async () => {
  env = await connectTemporalTestEnv();
});

afterAll(async () => {
  await env.close();
});

const shipped: string[] = [];
const shipParcel = defineTool({
  name: 'ship_parcel',
  description: 'Ship a parcel to an address.',
  inputSchema: z.object({ parcel: z.string(), address: z.string() }),
  requiresApproval: true,
  execute: async ({ parcel, address }) => {
    shipped.push(parcel);
    return { tracking: `TRACK-${parcel}`, address };
  },
});

const { Payload: PayloadMessage } = protos.temporal.api.common.v1;
const wrappedEncoding = 'binary/wrapped-by-test';

/** A codec of another team's plugin: it wraps each payload whole, and leaves alone what it did not wrap. */
const wrappingCodec: PayloadCodec = {
  encode: async (payloads) =>
    payloads.map((payload) => ({
      metadata: { encoding: new TextEncoder().encode(wrappedEncoding) },
      data: PayloadMessage.encode(payload).finish(),
    })),
  decode: async (payloads) =>
    payloads.map((payload): Payload => {
      const encoding = payload.metadata?.['encoding'];
      if (!encoding || new TextDecoder().decode(encoding) !== wrappedEncoding) return payload;
      return PayloadMessage.decode(payload.data ?? new Uint8Array());
    }),
};

/** A plugin that adds {@link wrappingCodec} after the codecs a worker or client already has. */
const wrappingPlugin = new SimplePlugin({
  name: 'wrapping-codec',
  dataConverter: (existing) => ({
    ...existing,
    payloadCodecs: [...(existing?.payloadCodecs ?? []), wrappingCodec],
  }),
});

const ownWorkflows = path.join(import.meta.dirname, '../fixtures/own-workflows/workflows.ts');

/** Runs the own workflows' `relayModulesShared` on `taskQueue`. */
function askWhetherShared(taskQueue: string): Promise<boolean> {
  return env.client.workflow.execute('relayModulesShared', { taskQueue, workflowId: uniqueWorkflowId('shared') });
}

/** A plain `Worker.create` with the plugin, the way a team adds Relay-E to its own worker; it runs until `stop`. */
async function startPlainWorker(
  taskQueue: string,
  options: Omit<RelayPluginOptions, 'tools' | 'workflowBundle'>,
  pluginsAfter: WorkerPlugin[] = [],
) {
  const plugin = await RelayPlugin.create({
    ...options,
    tools: [shipParcel],
    workflowBundle: await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') }),
  });
  const worker = await Worker.create({
    connection: env.nativeConnection,
    namespace: env.namespace,
    taskQueue,
    plugins: [plugin, ...pluginsAfter],
  });
  const running = worker.run();
  return {
    plugin,
    worker,
    stop: async () => {
      worker.shutdown();
      await running;
    },
  };
}

/** Where a worker given no connection connects: the SDK's default address. */
const sdkDefaultAddress = 'localhost:7233';

/** A dev server at the SDK's default address, or the Temporal server already there (a developer's own). */
async function serverAtSdkDefaultAddress() {
  try {
    return await startTemporalDevServer({ port: 7233 });
  } catch (error) {
    if (!(error instanceof DevServerPortClashError)) throw error;
    return startTemporalDevServer({ reuseAddress: sdkDefaultAddress });
  }
}

/** Records each `NativeConnection` opened from now on (the SDK's own for a worker included) and whether it closed. */
function recordConnections(): { closed: boolean }[] {
  const opened: { closed: boolean }[] = [];
  const connect = Object.getOwnPropertyDescriptor(NativeConnection, 'connect')
    ?.value as typeof NativeConnection.connect;
  vi.spyOn(NativeConnection, 'connect').mockImplementation(async function (this: typeof NativeConnection, options) {
    const connection = await connect.call(this, options);
    const entry = { closed: false };
    opened.push(entry);
    const close = connection.close.bind(connection);
    vi.spyOn(connection, 'close').mockImplementation(async () => {
      await close();
      entry.closed = true;
    });
    return connection;
  });
  return opened;
}

describe('RelayPlugin', () => {
  it('adds agent runs, their activities and encryption to a plain Worker.create and Client', async () => {
    const taskQueue = uniqueTaskQueue('plugin');
    const { plugin, stop } = await startPlainWorker(taskQueue, {
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ id: 'ship', name: 'ship_parcel', input: { parcel: 'P-7', address: '1 Main St' } }] },
          { text: 'Shipped.' },
        ]),
      },
      encryption: { keys: { 'k-plugin': randomBytes(32).toString('base64') } },
    });
    const client = await RelayClient.connect({
      connection: env.connection,
      namespace: env.namespace,
      taskQueue,
      plugins: [plugin],
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'ship P-7' });
      await waitForRun(client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
      expect(shipped).toEqual([]);
      await client.approve(runId, 'call_1_0', { approver: 'ops' });
      const result = await client.result(runId);

      expect(result.output).toBe('Shipped.');
      expect(shipped).toEqual(['P-7']);
      const history = JSON.stringify(await env.client.workflow.getHandle(runId).fetchHistory());
      expect(history).not.toContain('1 Main St');
      expect(history).toContain(encryptionKeyIdMetadataKey);
    } finally {
      await stop();
      await client.close();
    }
  });

  it('calls the model on the worker’s own queue with the codecs of plugins configured after it', async () => {
    const taskQueue = uniqueTaskQueue('plugin-codec');
    const { stop } = await startPlainWorker(
      taskQueue,
      {
        models: {
          scripted: scriptedModel([
            { toolCalls: [{ id: 'ship', name: 'ship_parcel', input: { parcel: 'P-8', address: '2 Main St' } }] },
            { text: 'Shipped.' },
          ]),
        },
      },
      [wrappingPlugin],
    );
    const client = await RelayClient.connect({
      connection: env.connection,
      namespace: env.namespace,
      taskQueue,
      plugins: [wrappingPlugin],
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'ship P-8' });
      await waitForRun(client, runId, (snapshot) => snapshot.status === 'awaiting_approval');
      await client.approve(runId, 'call_1_0', { approver: 'ops' });
      expect(await client.result(runId)).toMatchObject({ output: 'Shipped.', steps: 2 });
      expect((await client.events(runId)).map(({ type }) => type)).not.toContain('model_context_resent');
      // The second model call went to the worker's own queue, its input wrapped by the other plugin's codec.
      const modelCalls = ((await readHistory(env.client, runId)).events ?? []).flatMap((event) => {
        const scheduled = event.activityTaskScheduledEventAttributes;
        return scheduled?.activityType?.name === 'callModel' ? [scheduled] : [];
      });
      expect(
        modelCalls.map((scheduled) => ({
          own: scheduled.taskQueue?.name !== taskQueue,
          encoding: new TextDecoder().decode(scheduled.input?.payloads?.[0]?.metadata?.['encoding'] ?? undefined),
        })),
      ).toEqual([
        { own: false, encoding: wrappedEncoding },
        { own: true, encoding: wrappedEncoding },
      ]);
    } finally {
      await stop();
      await client.close();
    }
  });

  it('shares Relay-E’s workflow modules between runs of a worker whose own workflows re-export them', async () => {
    const taskQueue = uniqueTaskQueue('plugin-own-workflows');
    const plugin = await RelayPlugin.create({
      tools: [shipParcel],
      models: { scripted: scriptedModel([{ text: 'Done.' }]) },
    });
    const worker = await Worker.create({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue,
      workflowsPath: ownWorkflows,
      plugins: [plugin],
    });
    const client = await RelayClient.connect({ connection: env.connection, namespace: env.namespace, taskQueue });
    try {
      await worker.runUntil(async () => {
        const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'hello' });
        expect((await client.result(runId)).output).toBe('Done.');
        expect(await askWhetherShared(taskQueue)).toBe(true);
      });
    } finally {
      await client.close();
    }
    // The same workflows bundled without the plugin's settings load Relay-E's modules again for each run.
    const unshared = await withWorker(env, { workflowsPath: ownWorkflows }, ({ taskQueue: plainQueue }) =>
      askWhetherShared(plainQueue),
    );
    expect(unshared).toBe(false);
  }, 120_000);

  it('refuses at Worker.create a namespace without Relay-E’s search attributes, and leaves nothing open', async () => {
    const bare = await startTemporalDevServer({ searchAttributes: [] });
    const connection = await NativeConnection.connect({ address: bare.address });
    const sourceClosed = { count: 0 };
    try {
      const plugin = await RelayPlugin.create({
        tools: [shipParcel, countingCloses(sourceClosed)],
        models: { scripted: scriptedModel([]) },
      });
      const created = Worker.create({
        connection,
        namespace: bare.namespace,
        taskQueue: uniqueTaskQueue('bare'),
        plugins: [plugin],
      });

      await expect(created).rejects.toMatchObject({
        code: 'invalid_input',
        message: expect.stringContaining('temporal operator search-attribute create') as unknown,
      });
      expect(sourceClosed.count).toBe(1);
      // A worker that had been created would hold the connection until it ran and stopped.
      await expect(connection.close()).resolves.toBeUndefined();
    } finally {
      await bare.stop();
    }
  }, 60_000);

  it('refuses to be a connection’s plugin, which would configure every worker on it, and closes its tools', async () => {
    const sourceClosed = { count: 0 };
    const plugin = await RelayPlugin.create({
      tools: [shipParcel, countingCloses(sourceClosed)],
      models: { scripted: scriptedModel([]) },
    });
    // Before this refusal, its model-call worker took the connection's plugins too and started one of its own, and so
    // on: workers without end.
    await expect(NativeConnection.connect({ address: env.address, plugins: [plugin] })).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining('give it to Worker.create({ plugins })') as unknown,
    });
    await vi.waitFor(() => expect(sourceClosed.count).toBe(1));
  });

  it('serves one worker: a second Worker.create given the same plugin is refused, and the first keeps its tools', async () => {
    const sourceClosed = { count: 0 };
    const plugin = await RelayPlugin.create({
      tools: [shipParcel, countingCloses(sourceClosed)],
      models: { scripted: scriptedModel([{ text: 'Still here.' }]) },
      workflowBundle: await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') }),
    });
    const taskQueue = uniqueTaskQueue('first');
    const options = { connection: env.nativeConnection, namespace: env.namespace, plugins: [plugin] };
    const first = await Worker.create({ ...options, taskQueue });
    const second = Worker.create({ ...options, taskQueue: uniqueTaskQueue('second') });
    await expect(second).rejects.toMatchObject({
      code: 'invalid_input',
      message: expect.stringContaining(`already configured the worker of task queue '${taskQueue}'`) as unknown,
    });
    expect(sourceClosed.count).toBe(0);
    const client = await RelayClient.connect({ connection: env.connection, namespace: env.namespace, taskQueue });
    const result = await first.runUntil(async () => {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'there?' });
      return client.result(runId);
    });
    expect(result.output).toBe('Still here.');
    expect(sourceClosed.count).toBe(1);
  });

  it('stops a worker whose model-call worker cannot be created, so its connection closes and the process can exit', async () => {
    // A team's own plugin on the connection: the SDK applies it to every worker there, the model-call worker too.
    const refusesOtherQueues: NativeConnectionPlugin & WorkerPlugin = {
      name: 'refuses-other-queues',
      configureWorker(options) {
        if (options.taskQueue?.includes('/model-calls/')) throw new Error('This team runs no worker on such a queue');
        return options;
      },
    };
    const connection = await NativeConnection.connect({ address: env.address, plugins: [refusesOtherQueues] });
    const plugin = await RelayPlugin.create({
      tools: [shipParcel],
      models: { scripted: scriptedModel([]) },
      workflowBundle: await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') }),
    });
    const worker = await Worker.create({
      connection,
      namespace: env.namespace,
      taskQueue: uniqueTaskQueue('refused-model-calls'),
      plugins: [plugin],
    });

    await expect(worker.run()).rejects.toThrow('This team runs no worker on such a queue');
    expect(worker.getState()).toBe('STOPPED');
    // A worker created and never run would still hold the connection: closing it would throw.
    await expect(connection.close()).resolves.toBeUndefined();
  });

  it('closes the tool sources when createWorker cannot create the worker', async () => {
    const sourceClosed = { count: 0 };
    const refusesEveryWorker: WorkerPlugin = {
      name: 'refuses-every-worker',
      configureWorker() {
        throw new Error('Not on this machine');
      },
    };
    const created = createWorker({
      connection: env.nativeConnection,
      namespace: env.namespace,
      taskQueue: uniqueTaskQueue('not-created'),
      tools: [countingCloses(sourceClosed)],
      models: { scripted: scriptedModel([]) },
      workerOptions: { plugins: [refusesEveryWorker] },
    });
    await expect(created).rejects.toThrow('Not on this machine');
    expect(sourceClosed.count).toBe(1);
  });

  it('closes the connection createWorker opened when it cannot create the worker, and leaves a given one open', async () => {
    const closes: string[] = [];
    const connect = NativeConnection.connect.bind(NativeConnection);
    const connectSpy = vi.spyOn(NativeConnection, 'connect').mockImplementation(async (options) => {
      const connection = await connect(options);
      const close = connection.close.bind(connection);
      vi.spyOn(connection, 'close').mockImplementation(() => {
        closes.push(options?.address ?? '');
        return close();
      });
      return connection;
    });
    const refusesEveryWorker: WorkerPlugin = {
      name: 'refuses-every-worker',
      configureWorker() {
        throw new Error('Not on this machine');
      },
    };
    const reminding = defineTool({
      name: 'reminding',
      description: 'Reminds, which needs an approval webhook.',
      inputSchema: z.object({}),
      requiresApproval: true,
      remindApproversBeforeExpiryMs: 1_000,
      execute: () => 'done',
    });
    const common = { namespace: env.namespace, models: { scripted: scriptedModel([]) } };
    try {
      // Refused by Worker.create, then by RelayPlugin.create before any worker: each closes its own connection.
      const refusedWorker = createWorker({
        ...common,
        address: env.address,
        taskQueue: uniqueTaskQueue('refused-worker'),
        workerOptions: { plugins: [refusesEveryWorker] },
      });
      await expect(refusedWorker).rejects.toThrow('Not on this machine');
      const refusedPlugin = createWorker({
        ...common,
        address: env.address,
        taskQueue: uniqueTaskQueue('refused-plugin'),
        tools: [reminding],
      });
      await expect(refusedPlugin).rejects.toMatchObject({ code: 'invalid_input' });
      expect(connectSpy).toHaveBeenCalledTimes(2);
      expect(closes).toStrictEqual([env.address, env.address]);

      const given = createWorker({
        ...common,
        connection: env.nativeConnection,
        taskQueue: uniqueTaskQueue('given'),
        tools: [reminding],
      });
      await expect(given).rejects.toMatchObject({ code: 'invalid_input' });
      expect(closes).toHaveLength(2);
      await expect(
        env.nativeConnection.operatorService.listSearchAttributes({ namespace: env.namespace }),
      ).resolves.toBeDefined();
    } finally {
      connectSpy.mockRestore();
    }
  });

  it('announces the worker’s tools and models on its task queue while it runs', async () => {
    const taskQueue = uniqueTaskQueue('plugin-catalog');
    const { stop } = await startPlainWorker(taskQueue, { models: { scripted: scriptedModel([{ text: 'ok' }]) } });
    const client = await RelayClient.connect({ connection: env.connection, namespace: env.namespace, taskQueue });
    try {
      const catalog = await waitForWorkerCatalog(client);
      expect(catalog.tools.map((tool) => tool.name)).toEqual(['ship_parcel']);
      expect(catalog.modelPrefixes).toEqual(['scripted']);
      expect(catalog.workers).toBe(1);
    } finally {
      await stop();
      await client.close();
    }
  });
  it(
    'opens its own connection for a worker given none, so a clean stop resolves and withdraws the catalog',
    () =>
      // A worker given no connection connects to 7233, which the walkthrough's npm start needs free.
      withDefaultPorts(async () => {
        const server = await serverAtSdkDefaultAddress();
        const connection = await Connection.connect({ address: server.address });
        const taskQueue = uniqueTaskQueue('no-connection');
        const client = await RelayClient.connect({ connection, namespace: server.namespace, taskQueue });
        try {
          const plugin = await RelayPlugin.create({
            tools: [shipParcel],
            models: { scripted: scriptedModel([]) },
            workflowBundle: await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') }),
          });
          const connections = recordConnections();
          const worker = await Worker.create({ taskQueue, plugins: [plugin] });
          const running = worker.run();
          expect((await waitForWorkerCatalog(client)).workers).toBe(1);

          worker.shutdown();
          await expect(running).resolves.toBeUndefined();
          // Withdrawn on the way out, not left listed until the announcement lapses.
          expect(await client.getWorkerCatalog()).toBeUndefined();
          // The search-attribute check's, the SDK's for the worker and the plugin's own: all closed.
          expect(connections).toEqual([{ closed: true }, { closed: true }, { closed: true }]);
        } finally {
          vi.restoreAllMocks();
          await connection.close();
          await server.stop();
        }
      }),
    120_000,
  );

  it('starts stopping the model-call worker as the main worker starts to, and waits for both', async () => {
    const taskQueue = uniqueTaskQueue('plugin-drain');
    const { worker, stop } = await startPlainWorker(taskQueue, {
      models: { scripted: scriptedModel([{ text: 'ok' }]) },
    });
    const client = await RelayClient.connect({ connection: env.connection, namespace: env.namespace, taskQueue });
    // A finished run: the worker is running.
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'hi' });
    expect(await client.result(runId)).toMatchObject({ output: 'ok' });
    await client.close();
    // Each shutdown as it is asked for, with the main worker's state at that moment (the spy calls through).
    const shutdowns: { worker: Worker; mainState: string }[] = [];
    const shutdownWorker = Object.getOwnPropertyDescriptor(Worker.prototype, 'shutdown')?.value as (
      this: Worker,
    ) => void;
    const shutdown = vi.spyOn(Worker.prototype, 'shutdown').mockImplementation(function (this: Worker) {
      shutdowns.push({ worker: this, mainState: worker.getState() });
      shutdownWorker.call(this);
    });
    try {
      await stop();
    } finally {
      shutdown.mockRestore();
    }
    const modelCalls = shutdowns.find((entry) => entry.worker !== worker);
    expect(shutdowns.map((entry) => entry.worker === worker)).toEqual([true, false]);
    expect(modelCalls?.worker.options.taskQueue).toContain(`${taskQueue}/model-calls/`);
    // Not after the main worker drained, and stopped by the time its run() resolves.
    expect(modelCalls?.mainState).not.toMatch(/DRAINED|STOPPED/);
    expect(modelCalls?.worker.getState()).toBe('STOPPED');
  });
});
