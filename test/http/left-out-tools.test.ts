import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { RelayError } from '../../src/shared/errors.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { useRelayTestKit, waitForWorkerCatalog } from '../helpers/relay-test-kit.js';
import { faultyStdioTransport } from '../mcp/mcp-test-kit.js';
import { createTestTenants } from './http-test-kit.js';

// A worker whose MCP server lists tools it cannot offer (faulty-server.ts, `unreadable-schema`): `broken` refers to
// nothing, `loop` loops on one value. Clients learn which, and why, from the catalog the worker announces.

const { keys, apiKeys } = createTestTenants();
const kit = useRelayTestKit();
let worker: RunningWorker;
let server: ApiServer;

const loops = "the $ref '#/$defs/a' leads back to itself without reading into the input: a check never ends";

beforeAll(async () => {
  worker = await kit.startWorker({
    tools: [mcpTools({ name: 'odd', transport: faultyStdioTransport('unreadable-schema') })],
    models: { scripted: scriptedModel([{ text: 'never asked' }]) },
  });
  await waitForWorkerCatalog(worker.client);
  server = await startApiServer({ client: worker.client, apiKeys });
});

afterAll(async () => {
  await server?.close();
});

describe('tools a worker left out', () => {
  it('are listed by GET /v1/tools beside the tools served, each with the reason no run can call it', async () => {
    const response = await fetch(`${server.url}/v1/tools`, { headers: { authorization: `Bearer ${keys.bob}` } });
    expect(response.status).toBe(200);
    const body = (await response.json()) as { tools: Array<{ name: string }>; leftOut: unknown[] };
    expect(body.tools.map((tool) => tool.name).sort()).toEqual(['odd_fine', 'odd_move']);
    expect(body.leftOut).toEqual([
      {
        name: 'odd_broken',
        source: 'odd',
        tool: 'broken',
        reason: expect.stringContaining('Reference not found: #/nowhere') as unknown,
      },
      { name: 'odd_loop', source: 'odd', tool: 'loop', reason: expect.stringContaining(loops) as unknown },
    ]);
  });

  it('refuse a run that names one with unknown_tool and the reason, over the client and over HTTP', async () => {
    const refused = worker.client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'x',
      tools: ['odd_loop'],
    });
    await expect(refused).rejects.toBeInstanceOf(RelayError);
    await expect(refused).rejects.toMatchObject({
      code: 'unknown_tool',
      message: expect.stringContaining(
        "No worker serves the tool(s) 'odd_loop' (served: odd_fine, odd_move); a worker left out 'odd_loop' " +
          `(source 'odd', tool 'loop'): The input JSON Schema of tool 'odd_loop' cannot be read (${loops})`,
      ) as unknown,
      details: { names: ['odd_loop'], leftOut: [expect.objectContaining({ name: 'odd_loop' })] },
    });

    const response = await fetch(`${server.url}/v1/runs`, {
      method: 'POST',
      headers: { authorization: `Bearer ${keys.bob}`, 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'scripted:test', prompt: 'x', tools: ['odd_loop', 'odd_fine'] }),
    });
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { code: string; detail: string };
    expect(problem.code).toBe('unknown_tool');
    expect(problem.detail).toContain(`a worker left out 'odd_loop' (source 'odd', tool 'loop'): `);
  });

  it('leave a run that names only served tools alone', async () => {
    const { runId } = await worker.client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      prompt: 'x',
      tools: ['odd_fine'],
    });
    expect((await worker.client.result(runId)).output).toBe('never asked');
  });
});
