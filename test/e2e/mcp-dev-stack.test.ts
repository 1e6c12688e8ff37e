import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import type { ToolListing } from '../../src/tool/tool-listing.js';
import { startFixtureHttpServer } from '../fixtures/mcp/http-server.js';
import type { FixtureHttpServer } from '../fixtures/mcp/http-server.js';
import { relayECliArgs, spawnRelayE } from '../helpers/relay-e-process.js';
import { temporaryFolder } from '../mcp/mcp-test-kit.js';

// A project of someone's own whose relay-e.config.ts adds two MCP servers, one over stdio and one over HTTP, and
// `relay-e dev` started in it on the test harness's Temporal: the dev stack serves their tools like its own.

const root = fileURLToPath(new URL('../..', import.meta.url));
const apiKey = `key-mcp-${randomUUID()}`;
const token = 'token-dev-stack';

let project: string;
let notesFile: string;
let remote: FixtureHttpServer;
let dev: ReturnType<typeof spawnRelayE>;
let apiUrl: string;

/** The config as a user writes it, with the fixture servers' command line and URL filled in. */
function projectConfig(remoteUrl: string): string {
  const stdioServer = [
    process.execPath,
    '--import',
    path.join(root, 'node_modules/tsx/dist/loader.mjs'),
    path.join(root, 'test/fixtures/mcp/stdio-server.ts'),
  ];
  return `import { defineConfig } from '@relay-e/engine';
import { scriptedModel } from '@relay-e/engine/testing';
import { mcpTools } from '@relay-e/engine/worker';

const [command, ...args] = ${JSON.stringify(stdioServer)};

export default defineConfig({
  tools: [
    mcpTools({ name: 'notes', transport: { type: 'stdio', command, args } }),
    mcpTools({
      name: 'remote',
      transport: { type: 'http', url: ${JSON.stringify(remoteUrl)}, headers: { Authorization: { $secret: 'REMOTE_TOKEN' } } },
    }),
  ],
  models: {
    // Writes a note and asks the HTTP server who it is talking to, then answers with what the tools returned.
    scripted: scriptedModel((request) =>
      request.step === 1
        ? {
            toolCalls: [
              { name: 'notes_write_note', input: { path: ${JSON.stringify(notesFile)}, text: 'from the dev stack' } },
              { name: 'remote_whoami', input: {} },
            ],
          }
        : {
            text: request.messages
              .flatMap((message) => (message.role === 'tool' ? [JSON.stringify(message.result)] : []))
              .join('\\n'),
          },
    ),
  },
});
`;
}

function cliEnv(): NodeJS.ProcessEnv {
  const { RELAY_E_API_KEYS: _keys, TEMPORAL_PROFILE: _profile, ...env } = process.env;
  return {
    ...env,
    TEMPORAL_ADDRESS: inject('temporalAddress'),
    RELAY_E_TASK_QUEUE: `mcp-dev-${randomUUID()}`,
    RELAY_E_API_KEYS: `${apiKey}:shop:ops`,
    // The config's { $secret: 'REMOTE_TOKEN' }: without secrets of its own, a project's worker reads RELAY_E_SECRET_*.
    RELAY_E_SECRET_REMOTE_TOKEN: `Bearer ${token}`,
  };
}

function api(method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${apiUrl}${route}`, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function waitForRun(runId: string, predicate: (run: RunSnapshot) => boolean): Promise<RunSnapshot> {
  const deadline = Date.now() + 30_000;
  let last: RunSnapshot | undefined;
  while (Date.now() < deadline) {
    const response = await api('GET', `/v1/runs/${runId}`);
    last = response.ok ? ((await response.json()) as RunSnapshot) : undefined;
    if (last && predicate(last)) return last;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`Run ${runId} did not get there; last: ${JSON.stringify(last)}; relay-e dev:\n${dev.stderr()}`);
}

beforeAll(async () => {
  project = temporaryFolder('mcp-project');
  notesFile = path.join(project, 'notes.txt');
  remote = await startFixtureHttpServer({ tokens: [token] });
  // Inside the Relay-E repository @relay-e/engine resolves to the sources, as in examples/your-own-project.
  writeFileSync(path.join(project, 'tsconfig.json'), JSON.stringify({ extends: path.join(root, 'tsconfig.json') }));
  writeFileSync(path.join(project, 'relay-e.config.ts'), projectConfig(remote.url));
  dev = spawnRelayE(['dev', '--json', '--port', '0', '--temporal-address', inject('temporalAddress')], {
    cwd: project,
    env: cliEnv(),
  });
  const ready = JSON.parse(await dev.nextLine()) as { status: string; apiUrl: string; tools: string[] };
  expect(ready).toMatchObject({ status: 'ready', tools: ['notes (tool source)', 'remote (tool source)'] });
  apiUrl = ready.apiUrl;
});

afterAll(async () => {
  if (dev) expect(await dev.stop()).toBe(0);
  await remote?.close();
});

describe('relay-e dev with MCP servers in relay-e.config.ts', () => {
  it('lists the servers’ tools at GET /v1/tools with their MCP source and approval policy', async () => {
    let response = await api('GET', '/v1/tools');
    // The worker announces its catalog just after it starts polling.
    for (let attempt = 0; response.status === 503 && attempt < 50; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      response = await api('GET', '/v1/tools');
    }
    expect(response.status).toBe(200);
    const { tools } = (await response.json()) as { tools: ToolListing[] };
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('notes_write_note')).toMatchObject({
      source: { kind: 'mcp', server: 'notes', tool: 'write_note' },
      requiresApproval: true,
      annotations: { destructiveHint: true },
    });
    expect(byName.get('remote_whoami')).toMatchObject({
      source: { kind: 'mcp', server: 'remote', tool: 'whoami' },
      requiresApproval: false,
    });
  });

  it('runs the tools in a run started over HTTP: the write after approval, the HTTP call with the secret token', async () => {
    const started = await api('POST', '/v1/runs', { model: 'scripted:mcp', prompt: 'note it and check who I am' });
    expect(started.status).toBe(201);
    const { runId } = (await started.json()) as { runId: string };

    const waiting = await waitForRun(runId, (run) => run.status === 'awaiting_approval');
    expect(waiting.pendingApprovals).toEqual([
      expect.objectContaining({
        toolName: 'notes_write_note',
        source: { kind: 'mcp', server: 'notes', tool: 'write_note' },
        destructiveHint: true,
      }),
    ]);
    const toolCallId = waiting.pendingApprovals[0]?.toolCallId;
    const approved = await api('POST', `/v1/runs/${runId}/approve`, { toolCallId });
    expect(approved.status).toBe(200);

    const done = await waitForRun(runId, (run) => run.status === 'completed');
    expect(readFileSync(notesFile, 'utf8')).toBe('from the dev stack\n');
    // What the servers answered reached the model: the stdio server's write, and `whoami`'s answer with the secret
    // token it echoes hidden (the HTTP server saw the token itself).
    expect(done.output).toContain(`wrote ${notesFile}`);
    expect(done.output).toContain('[secret]');
    expect(done.output).not.toContain(token);
    expect(remote.tokensSeen).toContain(token);
  });

  it('relay-e tools in the project lists the same MCP tools from the config, without a worker', async () => {
    const { stdout, stderr } = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) => {
      execFile(
        process.execPath,
        [...relayECliArgs, 'tools', '--json'],
        { cwd: project, env: cliEnv() },
        (error, out, err) =>
          error ? reject(new Error(`${error.message}\n${err}`)) : resolve({ stdout: out, stderr: err }),
      );
    });
    const listed = (JSON.parse(stdout) as ToolListing[]).map((tool) => [tool.name, tool.source]);
    expect(listed).toEqual(
      expect.arrayContaining([
        ['notes_write_note', { kind: 'mcp', server: 'notes', tool: 'write_note' }],
        ['remote_whoami', { kind: 'mcp', server: 'remote', tool: 'whoami' }],
      ]),
    );
    expect(listed.map(([name]) => name)).not.toContain('transfer_funds');
    expect(stderr).toBe('');
  });
});
