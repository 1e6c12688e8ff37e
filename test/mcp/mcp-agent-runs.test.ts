import { existsSync, readFileSync } from 'node:fs';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import type { ToolProgress } from '../../src/tool/tool-context.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { ToolExecutor } from '../../src/tool/tool-executor.js';
import { loadToolSources } from '../../src/tool/tool-source.js';
import { startFixtureHttpServer } from '../fixtures/mcp/http-server.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import {
  eventually,
  faultyStdioTransport,
  fixtureStdioTransport,
  installedBin,
  quietLogger,
  temporaryFolder,
} from './mcp-test-kit.js';

const kit = useRelayTestKit();

function eventOf<T extends RunEvent['type']>(events: readonly RunEvent[], type: T, toolCallId: string) {
  return events.find((event) => event.type === type && 'toolCallId' in event && event.toolCallId === toolCallId) as
    Extract<RunEvent, { type: T }> | undefined;
}

describe('@modelcontextprotocol/server-filesystem in an agent run', () => {
  it('reads without approval, writes only what a human approved (edited path), and nothing it rejected', async () => {
    const folder = temporaryFolder('mcp-fs');
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'look', name: 'fs_list_directory', input: { path: folder } },
          { id: 'keep', name: 'fs_write_file', input: { path: join(folder, 'draft.txt'), content: 'hello' } },
          { id: 'drop', name: 'fs_write_file', input: { path: join(folder, 'other.txt'), content: 'nope' } },
        ],
      },
      { text: 'done' },
    ]);
    const filesystem = mcpTools({
      name: 'fs',
      transport: { type: 'stdio', command: process.execPath, args: [installedBin('mcp-server-filesystem'), folder] },
    });
    const { client, stop } = await kit.startWorker({ tools: [filesystem], models: { scripted: model } });
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:fs', prompt: 'write it' });

    const waiting = await waitForRun(client, runId, (run) => run.pendingApprovals.length === 2);
    expect(waiting.pendingApprovals.map((pending) => pending.toolCallId).sort()).toEqual(['call_1_1', 'call_1_2']);
    expect(waiting.pendingApprovals[0]).toMatchObject({
      toolName: 'fs_write_file',
      source: { kind: 'mcp', server: 'fs', tool: 'write_file' },
      destructiveHint: true,
    });
    await client.approve(runId, 'call_1_1', {
      approver: 'ops',
      input: { path: join(folder, 'approved.txt'), content: 'hello' },
    });
    await client.reject(runId, 'call_1_2', { approver: 'ops', reason: 'not this one' });

    await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'done' });
    expect(readFileSync(join(folder, 'approved.txt'), 'utf8')).toBe('hello');
    expect(existsSync(join(folder, 'draft.txt'))).toBe(false);
    expect(existsSync(join(folder, 'other.txt'))).toBe(false);

    const events = await client.events(runId);
    expect(eventOf(events, 'tool_call_validated', 'call_1_0')).toMatchObject({ requiresApproval: false });
    expect(eventOf(events, 'tool_succeeded', 'call_1_0')).toBeDefined();
    expect(eventOf(events, 'tool_awaiting_approval', 'call_1_1')).toMatchObject({ destructiveHint: true });
    expect(eventOf(events, 'tool_succeeded', 'call_1_1')).toBeDefined();
    expect(eventOf(events, 'tool_rejected', 'call_1_2')).toMatchObject({ reason: 'not this one' });
    await stop();
  });
});

describe('@modelcontextprotocol/server-everything in an agent run', () => {
  it('runs its read-only tools without approval and gives the model their text and a description of images', async () => {
    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'sum', name: 'everything_get-sum', input: { a: 2, b: 40 } },
          { id: 'image', name: 'everything_get-tiny-image', input: {} },
        ],
      },
      { text: 'seen' },
    ]);
    const everything = mcpTools({
      name: 'everything',
      transport: { type: 'stdio', command: process.execPath, args: [installedBin('mcp-server-everything'), 'stdio'] },
    });
    const { client, stop } = await kit.startWorker({ tools: [everything], models: { scripted: model } });
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:everything', prompt: 'add' });

    await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'seen' });
    const events = await client.events(runId);
    expect(eventOf(events, 'tool_succeeded', 'call_1_0')?.output).toContain('42');
    expect(eventOf(events, 'tool_succeeded', 'call_1_1')?.output).toEqual(
      expect.arrayContaining([expect.objectContaining({ type: 'image', mimeType: 'image/png' })]),
    );
    await stop();
  });
});

describe('a run whose MCP tools change after it started', () => {
  it('keeps its catalog: a reshaped tool is a validation result, a removed one not_found, and the run completes', async () => {
    const loaded = await loadToolSources(
      [
        mcpTools({
          name: 'fixture',
          transport: fixtureStdioTransport(),
          tools: { late_tool: { requiresApproval: true }, change_tools: { requiresApproval: false } },
        }),
      ],
      { logger: quietLogger },
    );
    const operator = new ToolExecutor(loaded.registry, { logger: quietLogger });
    await operator.execute('fixture_change_tools', { action: 'add' });
    await eventually('late_tool is listed', () => loaded.registry.has('fixture_late_tool'));

    const model = scriptedModel([
      {
        toolCalls: [
          { id: 'reshaped', name: 'fixture_late_tool', input: { n: 1 } },
          { id: 'removed', name: 'fixture_late_tool', input: { n: 2 } },
        ],
      },
      { text: 'coped' },
    ]);
    const { client, stop } = await kit.startWorker({ registry: loaded.registry, models: { scripted: model } });
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:late', prompt: 'call it' });
    await waitForRun(client, runId, (run) => run.pendingApprovals.length === 2);

    const schemaOf = () => JSON.stringify(loaded.registry.catalog(['fixture_late_tool'])[0]?.inputSchema);
    const before = schemaOf();
    await operator.execute('fixture_change_tools', { action: 'reshape' });
    await eventually('late_tool has its new schema', () => schemaOf() !== before);
    await client.approve(runId, 'call_1_0', { approver: 'ops' });
    // The approved call runs (and fails its check against the new schema) before the tool is removed.
    const firstOutcome = async () => eventOf(await client.events(runId), 'tool_failed', 'call_1_0')?.errorType;
    await expect.poll(firstOutcome, { timeout: 10_000 }).toBe('validation');

    await operator.execute('fixture_change_tools', { action: 'remove' });
    await eventually('late_tool is gone', () => !loaded.registry.has('fixture_late_tool'));
    await client.approve(runId, 'call_1_1', { approver: 'ops' });

    await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'coped' });
    const events = await client.events(runId);
    expect(eventOf(events, 'tool_failed', 'call_1_0')).toMatchObject({ errorType: 'validation' });
    expect(eventOf(events, 'tool_failed', 'call_1_1')).toMatchObject({ errorType: 'not_found' });
    await stop();
    await loaded.close();
  });
});

describe('an MCP tool that reports progress in an agent run', () => {
  /** The heartbeat details of the run's pending tool activity, or `'none'` when it has none (yet, or any more). */
  async function toolHeartbeat(runId: string): Promise<ToolProgress | 'none' | undefined> {
    const { raw } = await kit.temporal.workflow.getHandle(runId).describe();
    const tool = raw.pendingActivities?.find((activity) => activity.activityType?.name === 'executeTool');
    if (!tool) return undefined;
    const payloads = tool.heartbeatDetails?.payloads;
    if (!payloads?.length) return 'none';
    return decodeFromPayloadsAtIndex<ToolProgress>(kit.temporal.options.loadedDataConverter, 0, payloads);
  }

  it('shows each progress notification as the tool activity’s heartbeat details, and keeps the latest', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'count', name: 'fixture_slow_count', input: { to: 8, stepMs: 600 } }] },
      { text: 'counted' },
    ]);
    const fixture = mcpTools({ name: 'fixture', transport: fixtureStdioTransport() });
    const { client, stop } = await kit.startWorker({ tools: [fixture], models: { scripted: model } });
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:progress', prompt: 'count' });

    // Sampled from Temporal's own record of the pending activity, as the Web UI and `temporal workflow describe` show it.
    const seen: Array<ToolProgress | 'none'> = [];
    const deadline = Date.now() + 20_000;
    let finished = false;
    while (!finished && Date.now() < deadline) {
      const heartbeat = await toolHeartbeat(runId);
      if (heartbeat !== undefined) seen.push(heartbeat);
      finished = heartbeat === undefined && seen.length > 0;
      await new Promise((resolve) => setTimeout(resolve, 150));
    }
    await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'counted' });

    const progress = seen.filter((entry): entry is ToolProgress => entry !== 'none');
    const steps = [...new Set(progress.map((entry) => entry.progress))];
    expect(steps.length, JSON.stringify(seen)).toBeGreaterThanOrEqual(4);
    expect(steps).toEqual([...steps].sort((a, b) => a - b));
    expect(progress[0]).toEqual({ progress: steps[0], total: 8, message: `step ${steps[0]}` });
    // Once the server has reported progress, the activity's periodic heartbeat carries it on rather than blanking it.
    const firstProgress = seen.findIndex((entry) => entry !== 'none');
    expect(seen.slice(firstProgress)).not.toContain('none');
    expect(eventOf(await client.events(runId), 'tool_succeeded', 'call_1_0')).toMatchObject({ output: 'counted to 8' });
    await stop();
  });
});

describe('an MCP server over HTTP that is down when a run calls it', () => {
  const echoTwice = () =>
    scriptedModel([
      { toolCalls: [{ id: 'echo', name: 'remote_echo_text', input: { text: 'hi' } }] },
      { text: 'answered' },
    ]);

  async function startRemoteWorker() {
    const server = await startFixtureHttpServer({ tokens: ['token-acme'] });
    const remote = mcpTools({
      name: 'remote',
      transport: { type: 'http', url: server.url, headers: { Authorization: 'Bearer token-acme' } },
      retry: { maximumAttempts: 3, initialInterval: '500ms' },
    });
    const running = await kit.startWorker({ tools: [remote], models: { scripted: echoTwice() } });
    return { server, ...running };
  }

  it('retries the call through Temporal and succeeds once the server is back', async () => {
    const { server, client, stop } = await startRemoteWorker();
    const { port } = server;
    await server.close();
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:down', prompt: 'echo' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    const back = await startFixtureHttpServer({ tokens: ['token-acme'], port });

    await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'answered' });
    expect(eventOf(await client.events(runId), 'tool_succeeded', 'call_1_0')).toMatchObject({ output: 'hi' });
    await stop();
    await back.close();
  });

  it('tells the model a transport failure once the attempts are spent', async () => {
    const { server, client, stop } = await startRemoteWorker();
    await server.close();
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:down', prompt: 'echo' });

    await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'answered' });
    expect(eventOf(await client.events(runId), 'tool_failed', 'call_1_0')).toMatchObject({ errorType: 'transport' });
    await stop();
  });
});

describe('a tool whose JSON Schema default its server refuses, as a Python server’s `limit: int = None`', () => {
  it('gets the call as the model gave it, the default left to the server, and the run records that input', async () => {
    const model = scriptedModel([
      { toolCalls: [{ id: 'find', name: 'py_lookup', input: { city: 'Oslo' } }] },
      { text: 'found' },
    ]);
    const python = mcpTools({ name: 'py', transport: faultyStdioTransport('null-default') });
    const { client, stop } = await kit.startWorker({ tools: [python], models: { scripted: model } });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:py', prompt: 'find Oslo' });
      await expect(client.result(runId)).resolves.toMatchObject({ status: 'completed', output: 'found' });
      const events = await client.events(runId);
      expect(eventOf(events, 'tool_call_validated', 'call_1_0')).toMatchObject({ input: { city: 'Oslo' } });
      expect(eventOf(events, 'tool_succeeded', 'call_1_0')).toMatchObject({ output: '{"city":"Oslo"}' });
      expect((await client.toolCatalog(runId))[0]).toMatchObject({ name: 'py_lookup', inputAsGiven: true });
    } finally {
      await stop();
    }
  });
});
