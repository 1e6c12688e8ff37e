import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { resolveToolPolicy } from '../../../src/mcp/mcp-tool-policy.js';
import { mcpTools } from '../../../src/mcp/mcp-tools.js';
import { retriesTimeouts } from '../../../src/shared/tool-catalog.js';
import { runTool } from '../../../src/testing/run-tool.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { loadToolSources } from '../../../src/tool/tool-source.js';
import type { LoadedTools } from '../../../src/tool/tool-source.js';
import { fixtureStdioTransport, quietLogger } from '../../mcp/mcp-test-kit.js';

describe('the retry an MCP policy gives a tool', () => {
  it('keeps the default attempts but retries no timeout unless the operator configured retry', () => {
    const cases = [
      { annotations: { readOnlyHint: true }, attempts: 3 },
      { annotations: { idempotentHint: true }, attempts: 3 },
      { annotations: undefined, attempts: 1 },
    ];
    for (const { annotations, attempts } of cases) {
      for (const requiresApproval of [undefined, true, false]) {
        const server = requiresApproval === undefined ? {} : { requiresApproval };
        const { retry } = resolveToolPolicy('a', annotations, server);
        // The run reads the attempts from `retry` first (toolActivityOptions), so they stay what they were.
        expect(retry?.maximumAttempts).toBe(attempts);
        expect(retriesTimeouts({ retry })).toBe(false);
      }
    }
    const configured = resolveToolPolicy('a', undefined, { retry: { maximumAttempts: 5 } }).retry;
    expect(configured).toEqual({ maximumAttempts: 5 });
    expect(retriesTimeouts({ retry: configured })).toBe(true);
  });
});

describe('a timed-out MCP call', () => {
  let loaded: LoadedTools;
  beforeAll(async () => {
    const fixture = mcpTools({
      name: 'fixture',
      transport: fixtureStdioTransport(),
      timeoutMs: 300,
      tools: { slow_count: { requiresApproval: true } },
    });
    const retrying = mcpTools({
      name: 'retrying',
      transport: fixtureStdioTransport(),
      tools: { slow_count: { timeoutMs: 300, retry: { maximumAttempts: 2 } } },
    });
    loaded = await loadToolSources([fixture, retrying], { logger: quietLogger });
  });
  afterAll(() => loaded.close());
  const slowly = { to: 50, stepMs: 100 };
  const toolNamed = (name: string) => {
    const tool = loaded.registry.get(name);
    if (!tool) throw new Error(`The fixture server lists no ${name}`);
    return tool;
  };

  it('is a timeout result the model is warned about, as for a defineTool tool, when no retry was configured', async () => {
    const tool = toolNamed('fixture_slow_count');
    expect(toCatalogEntry(tool).retry?.maximumAttempts).toBe(3);
    await expect(runTool(tool, slowly)).resolves.toMatchObject({
      success: false,
      errorType: 'timeout',
      error: expect.stringContaining('It may still have had an effect: it was not retried') as unknown,
    });
  });

  it('is thrown for Temporal to retry when the operator configured retry', async () => {
    await expect(runTool(toolNamed('retrying_slow_count'), slowly)).rejects.toMatchObject({
      type: 'tool_execution_failed',
    });
  });
});
