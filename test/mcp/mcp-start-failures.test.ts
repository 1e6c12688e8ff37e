import { describe, expect, it } from 'vitest';
import { mcpTools } from '../../src/mcp/mcp-tools.js';
import { createLogger } from '../../src/tool/tool-context.js';
import { loadToolSources } from '../../src/tool/tool-source.js';
import { faultyStdioTransport, fixtureStdioTransport, quietLogger, settledWithin } from './mcp-test-kit.js';

// What fails a worker's start (the server cannot list its tools, the operator's policy cannot apply), and what only
// leaves one tool out (the server describes it in a way Relay-E cannot offer).

describe('a server whose tool list never ends', () => {
  it('fails the start when it repeats a cursor, naming the server and the cursor', async () => {
    const source = mcpTools({ name: 'looping', transport: faultyStdioTransport('repeated-cursor') });
    await expect(settledWithin('the start', loadToolSources([source], { logger: quietLogger }))).rejects.toMatchObject({
      code: 'tool_protocol_error',
      message: `MCP server 'looping' repeated the tools/list cursor "again": its tool list never ends`,
    });
  });

  it('fails the start past 1000 pages, naming the server', async () => {
    const source = mcpTools({ name: 'paging', transport: faultyStdioTransport('endless-pages') });
    await expect(settledWithin('the start', loadToolSources([source], { logger: quietLogger }))).rejects.toMatchObject({
      code: 'tool_protocol_error',
      message: `MCP server 'paging' lists its tools in more than 1000 pages`,
    });
  });
});

describe('a policy that a server’s tool cannot take', () => {
  it('fails the start naming the server and the tool, instead of leaving the tool out', async () => {
    // Each part is sound on its own; together they ask write_note for 2 approvals from 1 approver.
    const source = mcpTools({
      name: 'strict',
      transport: fixtureStdioTransport(),
      approvalsRequired: 2,
      tools: { write_note: { approvers: ['alice'] } },
    });
    await expect(loadToolSources([source], { logger: quietLogger })).rejects.toMatchObject({
      code: 'invalid_tool_definition',
      message: "MCP server 'strict', tool 'write_note': approvalsRequired (2) is more than its 1 approver(s)",
    });
  });
});

describe('a tool the server describes in a way Relay-E cannot offer', () => {
  it('is left out with an error in the log, and the server’s other tools are offered, references and all', async () => {
    const logged: Array<Record<string, unknown>> = [];
    const logger = createLogger({
      level: 'error',
      write: (line) => logged.push(JSON.parse(line) as Record<string, unknown>),
    });
    const source = mcpTools({ name: 'odd', transport: faultyStdioTransport('unreadable-schema') });
    const loaded = await loadToolSources([source], { logger });
    try {
      expect(loaded.registry.list().map((tool) => tool.name)).toEqual(['odd_fine', 'odd_move']);
      const loops = "the $ref '#/$defs/a' leads back to itself without reading into the input: a check never ends";
      expect(logged).toMatchObject([
        {
          message: 'Left out an MCP tool Relay-E cannot offer',
          server: 'odd',
          toolName: 'broken',
          reason: expect.stringContaining('Reference not found: #/nowhere') as unknown,
        },
        {
          message: 'Left out an MCP tool Relay-E cannot offer',
          server: 'odd',
          toolName: 'loop',
          reason: expect.stringContaining(loops) as unknown,
        },
      ]);
      expect(logged).toHaveLength(2);
      expect(JSON.stringify(logged[0])).not.toContain('    at ');
      expect(loaded.leftOut()).toEqual([
        {
          source: 'odd',
          tool: 'broken',
          name: 'odd_broken',
          reason: expect.stringContaining('Reference not found: #/nowhere') as unknown,
        },
        { source: 'odd', tool: 'loop', name: 'odd_loop', reason: expect.stringContaining(loops) as unknown },
      ]);
      // `move` refers to its `from` place by a pointer Zod does not follow itself: its `to` is checked as `from` is.
      const move = loaded.registry.get('odd_move')?.inputSchema;
      expect(move?.safeParse({ from: { id: 'shelf' }, to: { id: 'box' } }).success).toBe(true);
      expect(move?.safeParse({ from: { id: 'shelf' }, to: { id: 7 } }).success).toBe(false);
    } finally {
      await loaded.close();
    }
  });
});

describe('a server whose tools have patterns that backtrack', () => {
  it('has them offered: the polynomial one with its length limit, the exponential one tried by the worker', async () => {
    const source = mcpTools({ name: 'mail', transport: faultyStdioTransport('backtracking-pattern') });
    const loaded = await loadToolSources([source], { logger: quietLogger });
    try {
      expect(loaded.registry.list().map((tool) => tool.name)).toEqual(['mail_notify', 'mail_tag']);
      expect(loaded.leftOut()).toEqual([]);
      const [notify, tag] = loaded.registry.catalog(['mail_notify', 'mail_tag']);
      expect(notify?.patternLengthLimits).toEqual({ '^\\S+@\\S+\\.\\S+$': 256 });
      expect(tag?.patternsTriedByWorker).toEqual(['^(\\w+\\s?)*$']);
    } finally {
      await loaded.close();
    }
  });
});
