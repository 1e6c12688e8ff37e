import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { Client, Connection } from '@temporalio/client';
import { readHistory } from '../../src/client/read-history.js';
import { RelayClient } from '../../src/client/relay-client.js';
import { defaultPayloadDirectory } from '../../src/cli/cli-payload-store.js';
import { createFilePayloadStore } from '../../src/store/file-payload-store.js';
import { holdPort } from '../helpers/free-port.js';
import { relayECliArgs, spawnRelayE as spawnProcess } from '../helpers/relay-e-process.js';
import { waitForWorkerCatalog } from '../helpers/relay-test-kit.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const project = path.join(root, 'examples/your-own-project');
const configFile = path.join(project, 'relay-e.config.ts');

function cliEnv(taskQueue: string, extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const { RELAY_E_API_KEYS: _keys, TEMPORAL_PROFILE: _profile, ...env } = process.env;
  return { ...env, TEMPORAL_ADDRESS: inject('temporalAddress'), RELAY_E_TASK_QUEUE: taskQueue, ...extra };
}

function spawnRelayE(args: string[], env: NodeJS.ProcessEnv, cwd = project) {
  return spawnProcess(args, { env, cwd });
}

/** Runs `relay-e` to completion. */
function relayE(args: string[], env: NodeJS.ProcessEnv, cwd = project) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(process.execPath, [...relayECliArgs, ...args], { env, cwd }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

describe('relay-e worker in a project with a relay-e.config.ts', () => {
  const taskQueue = `config-worker-${randomUUID()}`;
  let worker: ReturnType<typeof spawnRelayE>;
  let client: RelayClient;

  beforeAll(async () => {
    worker = spawnRelayE(['worker', '--json'], cliEnv(taskQueue));
    client = await RelayClient.connect({ address: inject('temporalAddress'), taskQueue });
  });

  afterAll(async () => {
    await worker?.stop();
    await client?.close();
  });

  it('serves the config’s tools and models instead of the demo’s', async () => {
    const ready = JSON.parse(await worker.nextLine()) as Record<string, unknown>;

    expect(ready).toMatchObject({ status: 'ready', taskQueue, tools: ['look_up_order'], source: configFile });
    expect(ready['providers']).toContain('scripted');
    expect((await waitForWorkerCatalog(client)).tools.map((tool) => tool.name)).toEqual(['look_up_order']);
  });

  it('runs the config’s tool in a run', async () => {
    const { runId } = await client.startRun({ tenantId: 'shop', model: 'scripted:orders', prompt: 'where is it?' });
    const result = await client.result(runId);
    const events = await client.events(runId);

    expect(result.output).toBe('Order ORD-1001 has shipped with DHL.');
    expect(events.find((event) => event.type === 'tool_succeeded')).toMatchObject({
      output: { order_id: 'ORD-1001', status: 'shipped' },
    });
    // Without a payloadStore in the config, the worker keeps model-call contexts in files under the project.
    const store = createFilePayloadStore({ directory: path.join(project, defaultPayloadDirectory) });
    try {
      const runs = await store.listUnclosedRuns({ limit: 1_000 });
      expect(runs.map(({ tenantId, runId: id }) => ({ tenantId, runId: id }))).toContainEqual({
        tenantId: 'shop',
        runId,
      });
    } finally {
      await store.close();
    }
  });
});

describe('relay-e worker with a config that names modelCallStartTimeout', () => {
  it('gives a model call sent back to it the config’s wait to start', async () => {
    const taskQueue = `config-start-timeout-${randomUUID()}`;
    // A folder of its own, so the worker keeps its model-call contexts (and calls) to itself.
    const folder = await mkdtemp(path.join(tmpdir(), 'relay-e-start-timeout-'));
    const config = path.join(root, 'test/fixtures/project-config/start-timeout.config.ts');
    const worker = spawnRelayE(['worker', '--json', '--config', config], cliEnv(taskQueue), folder);
    const client = await RelayClient.connect({ address: inject('temporalAddress'), taskQueue });
    try {
      expect(JSON.parse(await worker.nextLine())).toMatchObject({ status: 'ready', taskQueue, tools: ['echo'] });
      const { runId } = await client.startRun({ tenantId: 'shop', model: 'scripted:echo', prompt: 'echo hi' });
      expect(await client.result(runId)).toMatchObject({ output: 'echoed', steps: 2 });
      const modelCalls = ((await readHistory(client.temporal, runId)).events ?? []).flatMap((event) => {
        const scheduled = event.activityTaskScheduledEventAttributes;
        return scheduled?.activityType?.name === 'callModel' ? [scheduled] : [];
      });
      // The first call by the shared queue with no start limit of its own; the second to the worker's queue, 3 s.
      expect(
        modelCalls.map((scheduled) => ({
          queue:
            scheduled.taskQueue?.name === taskQueue
              ? 'shared'
              : scheduled.taskQueue?.name?.replace(/[0-9a-f]{16}$/, '…'),
          startWithinSeconds: Number(scheduled.scheduleToStartTimeout?.seconds ?? 0),
        })),
      ).toEqual([
        { queue: 'shared', startWithinSeconds: 0 },
        { queue: `${taskQueue}/model-calls/…`, startWithinSeconds: 3 },
      ]);
    } finally {
      expect(await worker.stop()).toBe(0);
      await client.close();
      await rm(folder, { recursive: true, force: true });
    }
  });
});

describe('relay-e serve and dev with a config', () => {
  it('serve takes its task queue from the config named with --config', async () => {
    const { RELAY_E_TASK_QUEUE: _queue, ...env } = cliEnv('unused', { RELAY_E_API_KEYS: 'key-serve-0123456789:shop' });
    const serve = spawnRelayE(
      ['serve', '--json', '--port', '0', '--config', 'test/fixtures/project-config/relay-e.config.mjs'],
      env,
      root,
    );
    try {
      const ready = JSON.parse(await serve.nextLine()) as { url: string };
      expect(ready).toMatchObject({ status: 'ready', taskQueue: 'orders-from-config' });
      // It opened a payload store (the default folder: the config names none), so the route goes on to look for the
      // run (none here) instead of answering 501.
      const stored = await fetch(`${ready.url}/v1/runs/run_1/stored/sha256:${'0'.repeat(64)}`, {
        headers: { authorization: 'Bearer key-serve-0123456789' },
      });
      expect([stored.status, ((await stored.json()) as { code: string }).code]).toEqual([404, 'run_not_found']);
    } finally {
      expect([await serve.stop(), serve.stderr()]).toEqual([0, '']);
    }
  });

  it('dev runs the config’s tools, refuses a run naming another tool with 422, and says when it has stopped', async () => {
    const taskQueue = `config-dev-${randomUUID()}`;
    const dev = spawnRelayE(
      ['dev', '--port', '0', '--temporal-address', inject('temporalAddress')],
      cliEnv(taskQueue, { RELAY_E_API_KEYS: 'key-dev-0123456789:shop' }),
    );
    let printed = '';
    while (!printed.includes('Ctrl-C stops')) printed += `${await dev.nextLine()}\n`;
    const apiUrl = /API\s+(http:\/\/\S+)/.exec(printed)?.[1];

    expect(printed).toContain('Tools        look_up_order');
    expect(printed).toContain(`from ${configFile}`);
    expect(printed).not.toContain('transfer_funds');
    const temporalCli = /Temporal CLI (\/\S+)/.exec(printed)?.[1];
    expect(temporalCli && path.basename(temporalCli)).toBe('temporal');
    expect(printed).toContain(`${temporalCli} workflow list --address ${inject('temporalAddress')}`);
    await waitForWorkerCatalog(await RelayClient.connect({ address: inject('temporalAddress'), taskQueue }));
    const refused = await fetch(`${apiUrl}/v1/runs`, {
      method: 'POST',
      headers: { authorization: 'Bearer key-dev-0123456789', 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted:orders', prompt: 'pay', tools: ['transfer_funds'] }),
    });
    expect([refused.status, ((await refused.json()) as { code: string }).code]).toEqual([422, 'unknown_tool']);
    // The API reads its worker's payload store: the route goes on to look for the run (none here), not 501.
    const stored = await fetch(`${apiUrl}/v1/runs/run_1/stored/sha256:${'0'.repeat(64)}`, {
      headers: { authorization: 'Bearer key-dev-0123456789' },
    });
    expect([stored.status, ((await stored.json()) as { code: string }).code]).toEqual([404, 'run_not_found']);

    expect(await dev.stop()).toBe(0);
    expect(dev.stderr()).toContain('Stopping Relay-E dev');
    expect(dev.stderr()).toContain('Stopped.');
  });

  it('dev reports a busy API port with the flag that changes it', async () => {
    const busy = await holdPort();
    const { port } = busy;
    try {
      const { code, stderr } = await relayE(
        ['dev', '--port', String(port), '--temporal-address', inject('temporalAddress')],
        cliEnv(`busy-${randomUUID()}`, { RELAY_E_API_KEYS: 'key-busy-0123456789:shop' }),
      );

      expect(code).toBe(2);
      expect(stderr).toContain(`Port ${port} on 127.0.0.1 is already in use`);
      expect(stderr).toContain('--port N');
      expect(stderr).not.toContain('EADDRINUSE');
    } finally {
      busy.close();
    }
  });
});

describe('the commands that work on runs, with a config that moves the task queue and encrypts payloads', () => {
  it('start, list, decide and inspect runs on the config’s task queue, with its keys', async () => {
    const fixture = path.join(root, 'test/fixtures/project-config/encrypted-orders.config.ts');
    // A folder whose relay-e.config.ts is the fixture: found there without --config, as in a project.
    const folder = await mkdtemp(path.join(tmpdir(), 'relay-e-run-commands-'));
    await writeFile(path.join(folder, 'relay-e.config.ts'), `export { default } from ${JSON.stringify(fixture)};\n`);
    const { RELAY_E_TASK_QUEUE: _queue, RELAY_E_ENCRYPTION_KEYS: _keys, ...env } = cliEnv('unused');
    const worker = spawnRelayE(['worker', '--json'], env, folder);
    try {
      expect(JSON.parse(await worker.nextLine())).toMatchObject({ taskQueue: 'encrypted-orders-from-config' });
      const started = await relayE(
        ['run', '--detach', '--tenant', 'shop', '--model', 'scripted:orders', 'ship'],
        env,
        folder,
      );
      expect([started.code, started.stderr]).toEqual([0, '']);
      const runId = started.stdout.trim();

      // From another folder, the config named with --config.
      const elsewhere = ['--config', fixture, '--json'];
      let waiting: { approvals: { runId: string; toolCallId: string; input: unknown }[] } = { approvals: [] };
      await vi.waitFor(async () => {
        const listed = await relayE(['approvals', '--tenant', 'shop', ...elsewhere], env, root);
        waiting = JSON.parse(listed.stdout) as typeof waiting;
        expect(waiting.approvals.filter((approval) => approval.runId === runId)).toHaveLength(1);
      }, 30_000);
      const call = waiting.approvals.find((approval) => approval.runId === runId);
      expect(call?.input).toEqual({ orderId: 'ORD-7' });
      const approved = await relayE(['approve', runId, call?.toolCallId ?? '', ...elsewhere], env, root);
      expect([approved.code, approved.stderr]).toEqual([0, '']);

      await vi.waitFor(async () => {
        const inspected = await relayE(['inspect', runId, '--json'], env, folder);
        expect(inspected.code).toBe(0);
        expect(inspected.stdout).toContain('"shipped":true');
        expect(inspected.stdout).toContain('Shipped.');
      }, 30_000);
      // The payloads were encrypted with the config's key: a client without it sees ciphertext only.
      const connection = await Connection.connect({ address: inject('temporalAddress') });
      try {
        const history = await readHistory(new Client({ connection }), runId);
        const started = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
        expect(new TextDecoder().decode(started?.metadata?.['encoding'])).toBe('binary/encrypted');
      } finally {
        await connection.close();
      }
    } finally {
      expect(await worker.stop()).toBe(0);
      await rm(folder, { recursive: true, force: true });
    }
  });
});
