import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { describe, expect, it } from 'vitest';
import { callMcpTool } from '../../../src/mcp/call-mcp-tool.js';
import type { McpConnection } from '../../../src/mcp/mcp-connection.js';
import { defaultLogger } from '../../../src/tool/tool-context.js';

/** A connection whose server answers every call with `result`. */
function answering(result: CallToolResult): McpConnection {
  const client = { callTool: async () => result };
  return { client: async () => client, reset: async () => undefined } as unknown as McpConnection;
}

const call = { server: 'billing', toolName: 'charge', input: {}, safeToRepeat: false };
const ctx = { tenantId: 't', config: {}, logger: defaultLogger, signal: new AbortController().signal };

/** The message of the error a call answered with `result` throws. */
async function errorOf(result: CallToolResult): Promise<unknown> {
  return callMcpTool(answering(result), call, ctx).then(
    () => expect.fail('the call should have thrown'),
    (error: unknown) => error,
  );
}

describe('callMcpTool: an isError result', () => {
  it('is the text of its text items', async () => {
    const error = await errorOf({ isError: true, content: [{ type: 'text', text: 'card declined' }] });
    expect(error).toMatchObject({ code: 'tool_reported_error', message: 'card declined' });
  });

  it('keeps the details of structured content when no text item carries them', async () => {
    const error = await errorOf({
      isError: true,
      content: [],
      structuredContent: { code: 'QUOTA', detail: 'monthly quota exceeded' },
    });
    expect(error).toMatchObject({
      code: 'tool_reported_error',
      message: '{"code":"QUOTA","detail":"monthly quota exceeded"}',
    });
  });

  it('describes other content (a resource) when there is neither text nor structured content', async () => {
    const error = await errorOf({
      isError: true,
      content: [{ type: 'resource', resource: { uri: 'file:///errors/42', text: 'disk full' } }],
    });
    expect((error as Error).message).toContain('disk full');
    expect((error as Error).message).toContain('file:///errors/42');
  });

  it('says the server reported an error when it gave nothing else', async () => {
    const error = await errorOf({ isError: true, content: [] });
    expect(error).toMatchObject({ code: 'tool_reported_error', message: "MCP tool 'charge' reported an error" });
  });
});
