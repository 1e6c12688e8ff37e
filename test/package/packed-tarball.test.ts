import { execFile, spawn } from 'node:child_process';
import type { Readable } from 'node:stream';
import { mkdir, mkdtemp, readFile, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';

const repository = path.resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const minutes = 60_000;

/** Runs a command in the user's project with the same Node as the tests (npm and npx come with it). */
function inProject(project: string, command: string, args: string[], env: NodeJS.ProcessEnv = {}) {
  return run(command, args, {
    cwd: project,
    env: { ...process.env, ...env },
    maxBuffer: 16 * 1024 * 1024,
    timeout: 5 * minutes,
  });
}

// A project of its own, as a user would write it: only the documented public API, its own tool, plain JavaScript.
const userRun = `
import { RelayClient, defineTool } from '@relay-e/engine';
import { createWorker } from '@relay-e/engine/worker';
import { scriptedModel } from '@relay-e/engine/testing';
import { z } from 'zod';

const greenhouse = new Map([['tomatoes', 12]]);
const waterPlants = defineTool({
  name: 'water_plants',
  description: 'Water one bed of the greenhouse with a number of litres.',
  inputSchema: z.object({ bed: z.string(), litres: z.number().positive() }),
  requiresApproval: true,
  execute: async ({ bed, litres }) => {
    greenhouse.set(bed, (greenhouse.get(bed) ?? 0) + litres);
    return { bed, litres_now: greenhouse.get(bed) };
  },
});

const [address, namespace, taskQueue] = process.argv.slice(2);
const worker = await createWorker({
  address,
  namespace,
  taskQueue,
  tools: [waterPlants],
  models: {
    scripted: scriptedModel([
      { toolCalls: [{ id: 'water', name: 'water_plants', input: { bed: 'tomatoes', litres: 3 } }] },
      { text: 'Watered.' },
    ]),
  },
});
const running = worker.run();
const client = await RelayClient.connect({ address, namespace, taskQueue });
const { runId } = await client.startRun({ tenantId: 'garden', model: 'scripted:gardener', prompt: 'water the tomatoes' });
let snapshot = await client.getRun(runId);
while (snapshot.status !== 'awaiting_approval') {
  await new Promise((resolve) => setTimeout(resolve, 100));
  snapshot = await client.getRun(runId);
}
await client.approve(runId, snapshot.pendingApprovals[0].toolCallId, { approver: 'gardener' });
const result = await client.result(runId);
const events = await client.events(runId);
worker.shutdown();
await running;
await client.close();
process.stdout.write(JSON.stringify({ result, litres: greenhouse.get('tomatoes'), events: events.map((e) => e.type) }));
`;

// A team's own Temporal worker with Relay-E's plugin: its workflows file re-exports Relay-E's beside its own workflow,
// which answers whether the worker shares Relay-E's workflow modules between runs (the SDK freezes what it shares).
const ownWorkflows = `
import * as relayWorkflows from '@relay-e/engine/workflows';
export * from '@relay-e/engine/workflows';

export async function relayModulesShared() {
  return Object.isFrozen(relayWorkflows);
}
`;

const ownWorker = `
import path from 'node:path';
import { NativeConnection, Worker } from '@temporalio/worker';
import { RelayClient } from '@relay-e/engine';
import { RelayPlugin } from '@relay-e/engine/worker';
import { scriptedModel } from '@relay-e/engine/testing';

const [address, namespace, taskQueue] = process.argv.slice(2);
const relay = await RelayPlugin.create({ tools: [], models: { scripted: scriptedModel([{ text: 'Hello.' }]) } });
const connection = await NativeConnection.connect({ address });
const worker = await Worker.create({
  connection,
  namespace,
  taskQueue,
  workflowsPath: path.join(import.meta.dirname, 'workflows.mjs'),
  plugins: [relay],
});
const client = await RelayClient.connect({ address, namespace, taskQueue });
const outcome = await worker.runUntil(async () => {
  const { runId } = await client.startRun({ tenantId: 'garden', model: 'scripted:gardener', prompt: 'hello' });
  const { output } = await client.result(runId);
  const shared = await client.temporal.workflow.execute('relayModulesShared', { taskQueue, workflowId: 'shared-' + runId });
  return { output, shared };
});
await client.close();
await connection.close();
process.stdout.write(JSON.stringify(outcome));
`;

// Every subpath, type-checked by the TypeScript the repository uses, as a consumer with NodeNext resolution. An
// entry point whose types did not resolve fails under \`strict\` (implicit any); \`skipLibCheck\`, as Temporal's own
// setup advises, skips only the checking inside dependencies' declaration files.
const userTypes = `
import { RelayClient, defineTool, defineConfig } from '@relay-e/engine';
import type { ToolDefinition, RunSnapshot } from '@relay-e/engine';
import { ToolRegistry } from '@relay-e/engine/tool';
import type { RelayClientOptions } from '@relay-e/engine/client';
import { RelayPlugin, createPostgresPayloadStore, createWorker } from '@relay-e/engine/worker';
import { createApi, startApiServer } from '@relay-e/engine/http';
import { agentRun } from '@relay-e/engine/workflows';
import { scriptedModel, startTemporalDevServer } from '@relay-e/engine/testing';
import { z } from 'zod';

const tool: ToolDefinition<{ name: string }, string> = {
  name: 'greet',
  description: 'Greet someone.',
  inputSchema: z.object({ name: z.string() }),
  execute: async ({ name }) => \`hello \${name}\`,
};
export const config = defineConfig({ tools: [tool, defineTool({ ...tool, name: 'greet_too' })], models: { scripted: scriptedModel([]) } });
export const used = [RelayClient, ToolRegistry, RelayPlugin, createWorker, createApi, startApiServer, agentRun, startTemporalDevServer];
export type Used = [RunSnapshot, RelayClientOptions];
// The PostgreSQL store's pool is typed by the package's own dependencies: without pg's types it would take anything.
// @ts-expect-error a number is no pg.Pool
export const wrongPool = () => createPostgresPayloadStore({ pool: 42 });
`;

const tsconfig = {
  compilerOptions: {
    module: 'NodeNext',
    moduleResolution: 'NodeNext',
    target: 'ES2023',
    strict: true,
    noEmit: true,
    skipLibCheck: true,
  },
  include: ['check-types.ts'],
};

// The README's start from an empty folder: a TypeScript config with one tool, loaded by \`npx relay-e dev\` with no
// build step.
const userConfig = `
import { defineConfig, defineTool } from '@relay-e/engine';
import type { ToolDefinition } from '@relay-e/engine';
import { scriptedModel } from '@relay-e/engine/testing';
import { z } from 'zod';

const harvest: ToolDefinition<{ bed: string }, { bed: string; kilos: number }> = defineTool({
  name: 'harvest',
  description: 'Harvest one bed of the greenhouse.',
  inputSchema: z.object({ bed: z.string() }),
  requiresApproval: true,
  execute: async ({ bed }) => ({ bed, kilos: 4 }),
});

export default defineConfig({
  tools: [harvest],
  models: {
    scripted: scriptedModel((request) =>
      request.step === 1
        ? { toolCalls: [{ name: 'harvest', input: { bed: 'tomatoes' } }] }
        : { text: 'Harvested the tomatoes.' },
    ),
  },
});
`;

let project: string;

beforeAll(async () => {
  // Outside the repository, so nothing resolves through its node_modules by accident.
  project = await mkdtemp(path.join(tmpdir(), 'relay-e-user-project-'));
  const packed = path.join(project, 'packed');
  await mkdir(packed);
  await run('npm', ['pack', '--pack-destination', packed], { cwd: repository, timeout: 5 * minutes });
  const [tarball] = await readdir(packed);
  if (!tarball) throw new Error('npm pack wrote no tarball');
  await writeFile(
    path.join(project, 'package.json'),
    JSON.stringify({ name: 'my-garden', private: true, type: 'module' }),
  );
  // The npm cache the repository's install filled serves every dependency; --prefer-offline keeps it off the network.
  await inProject(project, 'npm', [
    'install',
    '--prefer-offline',
    '--no-audit',
    '--no-fund',
    path.join(packed, tarball),
    'zod@4.6.7',
  ]);
  await writeFile(path.join(project, 'run.mjs'), userRun);
  await writeFile(path.join(project, 'workflows.mjs'), ownWorkflows);
  await writeFile(path.join(project, 'own-worker.mjs'), ownWorker);
  await writeFile(path.join(project, 'check-types.ts'), userTypes);
  await writeFile(path.join(project, 'tsconfig.json'), JSON.stringify(tsconfig));
  await writeFile(path.join(project, 'relay-e.config.ts'), userConfig);
}, 10 * minutes);

afterAll(async () => {
  if (project) await rm(project, { recursive: true, force: true });
});

describe('the packed package, installed in a project of its own', () => {
  it(
    'runs the project’s own tool through a worker, a run, an approval and a result',
    async () => {
      const { stdout } = await inProject(project, process.execPath, [
        'run.mjs',
        inject('temporalAddress'),
        inject('temporalNamespace'),
        `user-project-${Date.now()}`,
      ]);
      const outcome = JSON.parse(stdout) as { result: { output: string }; litres: number; events: string[] };

      expect(outcome.result.output).toBe('Watered.');
      expect(outcome.litres).toBe(15);
      expect(outcome.events).toEqual(
        expect.arrayContaining(['tool_awaiting_approval', 'tool_approved', 'tool_succeeded']),
      );
    },
    3 * minutes,
  );

  it(
    'runs agent runs on the project’s own worker and workflows file, with Relay-E’s workflow modules shared',
    async () => {
      const { stdout } = await inProject(project, process.execPath, [
        'own-worker.mjs',
        inject('temporalAddress'),
        inject('temporalNamespace'),
        `user-project-own-worker-${Date.now()}`,
      ]);

      expect(JSON.parse(stdout)).toEqual({ output: 'Hello.', shared: true });
    },
    3 * minutes,
  );

  it(
    'resolves the types of every subpath for a TypeScript project',
    async () => {
      const tsc = path.join(repository, 'node_modules/typescript/bin/tsc');
      const checked = await inProject(project, process.execPath, [tsc, '-p', 'tsconfig.json']).then(
        () => 'no errors',
        (error: Error & { stdout?: string }) => error.stdout ?? error.message,
      );

      expect(checked).toBe('no errors');
    },
    3 * minutes,
  );

  it(
    'runs relay-e dev with the project’s TypeScript config: its tool, approved over HTTP, gives the answer',
    async () => {
      // What `npx relay-e` runs, started directly so Ctrl-C's SIGINT reaches it; the first `node` on PATH is the tests'.
      const dev = spawn(path.join(project, 'node_modules/.bin/relay-e'), ['dev', '--json', '--port', '0'], {
        cwd: project,
        env: {
          ...process.env,
          PATH: `${path.dirname(process.execPath)}${path.delimiter}${process.env['PATH'] ?? ''}`,
          TEMPORAL_ADDRESS: inject('temporalAddress'),
          RELAY_E_TASK_QUEUE: `user-project-dev-${Date.now()}`,
          RELAY_E_API_KEYS: 'key-garden-0123456789:garden',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let stderr = '';
      dev.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
      const exited = new Promise<number | null>((resolve) => dev.once('exit', resolve));
      try {
        const api = await readyApiUrl(dev, () => stderr);
        const call = (route: string, body?: unknown) =>
          fetch(`${api}${route}`, {
            method: body === undefined ? 'GET' : 'POST',
            headers: { authorization: 'Bearer key-garden-0123456789', 'content-type': 'application/json' },
            ...(body === undefined ? {} : { body: JSON.stringify(body) }),
          }).then(async (response) => ({ status: response.status, body: (await response.json()) as RunAnswer }));

        const started = await call('/v1/runs', { model: 'scripted:gardener', prompt: 'harvest the tomatoes' });
        expect(started.status).toBe(201);
        const runId = started.body.runId;
        const waiting = await waitFor(
          () => call(`/v1/runs/${runId}`),
          (run) => run.status === 'awaiting_approval',
        );
        expect(waiting.pendingApprovals?.[0]).toMatchObject({ toolName: 'harvest', input: { bed: 'tomatoes' } });
        const approved = await call(`/v1/runs/${runId}/approve`, {
          toolCallId: waiting.pendingApprovals?.[0]?.toolCallId,
        });
        expect(approved.status).toBe(200);
        const done = await waitFor(
          () => call(`/v1/runs/${runId}`),
          (run) => run.status === 'completed',
        );
        expect(done.output).toBe('Harvested the tomatoes.');
      } finally {
        dev.kill('SIGINT');
        expect(await exited).toBe(0);
      }
    },
    3 * minutes,
  );

  it('ships the licence, what docker-compose.yml mounts, the docs, and source maps that hold their sources', async () => {
    const installed = path.join(project, 'node_modules/@relay-e/engine');
    const shipped = (await readdir(installed, { recursive: true })).map((file) => file.split(path.sep).join('/'));
    // docs/your-own-project.md tells users to copy these four and deploy/temporal, which the compose file bind-mounts.
    const deploy = (await readdir(path.join(repository, 'deploy/temporal'))).map((file) => `deploy/temporal/${file}`);
    expect(deploy.length).toBeGreaterThan(0);
    expect(shipped).toEqual(
      expect.arrayContaining(['LICENSE', 'docker-compose.yml', 'Dockerfile', '.dockerignore', ...deploy]),
    );
    expect(shipped).toEqual(expect.arrayContaining(['docs/your-own-project.md', 'examples/mcp-tools.ts']));
    expect(await readFile(path.join(installed, 'LICENSE'), 'utf8')).toMatch(/^MIT License\n/);
    // A stack trace or debugger in the user's project shows Relay-E's TypeScript, which the package does not ship.
    const map = JSON.parse(await readFile(path.join(installed, 'dist/src/index.js.map'), 'utf8')) as {
      sourcesContent?: string[];
    };
    expect(map.sourcesContent).toEqual([await readFile(path.join(repository, 'src/index.ts'), 'utf8')]);
  });

  it('runs the relay-e command with npx', async () => {
    const { stdout } = await inProject(project, 'npx', ['--no-install', 'relay-e', '--help']);

    // Inside a project that installed the package, the help names the invocation that works there.
    expect(stdout).toContain('Usage: npx relay-e <command> [options]');
    expect(stdout).toContain('dev');
  });
});

interface RunAnswer {
  runId: string;
  status?: string;
  output?: string;
  pendingApprovals?: { toolCallId: string; toolName: string; input: unknown }[];
}

/** The API's URL from `relay-e dev --json`'s ready line. */
async function readyApiUrl(child: { stdout: Readable }, stderr: () => string): Promise<string> {
  for await (const line of createInterface({ input: child.stdout })) {
    const ready = JSON.parse(line) as { status?: string; apiUrl?: string };
    if (ready.status === 'ready' && ready.apiUrl) return ready.apiUrl;
  }
  throw new Error(`relay-e dev ended before it was ready:\n${stderr()}`);
}

async function waitFor(
  read: () => Promise<{ body: RunAnswer }>,
  done: (run: RunAnswer) => boolean,
): Promise<RunAnswer> {
  for (let attempt = 0; attempt < 200; attempt += 1) {
    const { body } = await read();
    if (done(body)) return body;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error('The run did not reach the expected state within 20 s');
}
