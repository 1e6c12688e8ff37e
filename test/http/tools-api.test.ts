import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RelayClient } from '../../src/client/relay-client.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ToolListing } from '../../src/tool/tool-listing.js';
import { useRelayTestKit, waitForWorkerCatalog } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { fixtureStdioTransport } from '../mcp/mcp-test-kit.js';
import { createTestTenants } from './http-test-kit.js';

const { keys, apiKeys } = createTestTenants();
const kit = useRelayTestKit();
let server: ApiServer;
let client: RelayClient;

beforeAll(async () => {
  const worker = await kit.startWorker({
    tools: [
      ...createTestTools(createLedger()),
      mcpTools({ name: 'fixture', transport: fixtureStdioTransport(), tools: { slow_count: { timeoutMs: 20_000 } } }),
    ],
    // A run that makes the fixture server add a tool, announcing a tool list change.
    models: {
      scripted: scriptedModel((call) =>
        call.step === 1
          ? { toolCalls: [{ name: 'fixture_change_tools', input: { action: 'add' } }] }
          : { text: 'added' },
      ),
    },
  });
  client = worker.client;
  await waitForWorkerCatalog(worker.client);
  server = await startApiServer({ client: worker.client, apiKeys });
});

afterAll(async () => {
  await server?.close();
});

function getTools(key?: string): Promise<Response> {
  return fetch(`${server.url}/v1/tools`, key === undefined ? {} : { headers: { authorization: `Bearer ${key}` } });
}

describe('GET /v1/tools', () => {
  it('lists the worker’s own tools and an MCP server’s, each with its source, approval policy and schema', async () => {
    const response = await getTools(keys.bob);
    expect(response.status).toBe(200);
    const { tools, workers } = (await response.json()) as { tools: ToolListing[]; workers: number };
    expect(workers).toBe(1);
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('transfer_funds')).toMatchObject({
      source: { kind: 'worker' },
      requiresApproval: true,
      inputSchema: { type: 'object', required: expect.arrayContaining(['amount']) as unknown },
    });
    // Not annotated read-only: the secure default asks a human, and the server's destructive hint is shown.
    expect(byName.get('fixture_write_note')).toMatchObject({
      source: { kind: 'mcp', server: 'fixture', tool: 'write_note' },
      requiresApproval: true,
      annotations: { destructiveHint: true, idempotentHint: true },
      inputSchema: { type: 'object', properties: { path: { type: 'string' } } },
    });
    expect(byName.get('fixture_echo_text')).toMatchObject({
      source: { kind: 'mcp', server: 'fixture', tool: 'echo.text' },
      requiresApproval: false,
      retry: { maximumAttempts: 3 },
    });
    expect(byName.get('fixture_slow_count')).toMatchObject({ timeoutMs: 20_000 });
  });

  it('lists a tool an MCP server adds while the worker runs, without waiting for the periodic announcement', async () => {
    const listedNames = async () =>
      ((await (await getTools(keys.alice)).json()) as { tools: ToolListing[] }).tools.map((tool) => tool.name);
    expect(await listedNames()).not.toContain('fixture_late_tool');

    const { runId } = await client.startRun({ tenantId: 'http', model: 'scripted:change', prompt: 'add a tool' });
    await expect(client.result(runId)).resolves.toMatchObject({ output: 'added' });

    let names = await listedNames();
    for (let attempt = 0; !names.includes('fixture_late_tool') && attempt < 50; attempt += 1) {
      await new Promise((resolve) => setTimeout(resolve, 200));
      names = await listedNames();
    }
    expect(names).toContain('fixture_late_tool');
  });

  it('needs an API key', async () => {
    const response = await getTools();
    expect(response.status).toBe(401);
    expect(await response.json()).toMatchObject({ code: 'unauthorized' });
  });

  it('answers 503 catalog_unavailable, not an empty list, on a task queue no running worker announced', async () => {
    const nobody = await startApiServer({ client: kit.client, apiKeys });
    try {
      const response = await fetch(`${nobody.url}/v1/tools`, { headers: { authorization: `Bearer ${keys.alice}` } });
      expect(response.status).toBe(503);
      expect(response.headers.get('content-type')).toBe('application/problem+json');
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toMatchObject({
        code: 'catalog_unavailable',
        detail: expect.stringContaining(kit.client.taskQueue) as unknown,
      });
    } finally {
      await nobody.close();
    }
  });
});
