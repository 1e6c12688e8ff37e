import { describe, expect, it } from 'vitest';
import { mcpTools } from '../../../src/mcp/mcp-tools.js';
import type { McpToolsOptions } from '../../../src/mcp/mcp-tools.js';

const transport: McpToolsOptions['transport'] = { type: 'stdio', command: 'mcp-server' };
const source = (options: Partial<McpToolsOptions>) => () => mcpTools({ name: 'srv', transport, ...options });

describe('mcpTools policies', () => {
  it('refuses a server policy that defineTool would refuse, at the call, naming the server', () => {
    expect(source({ timeoutMs: 0 })).toThrow("MCP server 'srv': timeoutMs must be a positive integer, got 0");
    expect(source({ retry: { maximumAttempts: 0 } })).toThrow(
      "MCP server 'srv': retry.maximumAttempts must be a positive integer, got 0",
    );
    expect(source({ approvers: ['alice'], approvalsRequired: 2 })).toThrow(
      "MCP server 'srv': approvalsRequired (2) is more than its 1 approver(s)",
    );
    expect(source({ approvers: [] })).toThrow(
      "MCP server 'srv': approvers must be a list of one or more approver names",
    );
  });

  it('refuses a bad per-tool policy, naming its key', () => {
    expect(source({ tools: { '*': { maxResultBytes: 1.5 } } })).toThrow(
      "MCP server 'srv', tools['*']: maxResultBytes must be a positive integer, got 1.5",
    );
    expect(source({ tools: { delete_repo: { requiresApproval: 'yes' as unknown as boolean } } })).toThrow(
      "MCP server 'srv', tools['delete_repo']: requiresApproval must be true, false or a function of the input",
    );
    // null is no policy: it would leave every tool the rule reaches out at the worker's start, rather than throw here.
    expect(source({ tools: { x: { requiresApproval: null as unknown as boolean } } })).toThrow(
      "MCP server 'srv', tools['x']: requiresApproval must be true, false or a function of the input",
    );
    expect(source({ tools: { x: null as unknown as object } })).toThrow(
      "MCP server 'srv', tools['x']: a policy must be an object",
    );
  });

  it('throws invalid_tool_definition', () => {
    expect(source({ approvalTimeoutMs: -1 })).toThrow(expect.objectContaining({ code: 'invalid_tool_definition' }));
  });

  it('accepts approval options beside requiresApproval false: they reach the tools of other rules that ask', () => {
    expect(
      source({
        requiresApproval: false,
        approvers: ['alice', 'bob'],
        approvalsRequired: 2,
        tools: { 'delete_*': { requiresApproval: true } },
      }),
    ).not.toThrow();
  });
});
