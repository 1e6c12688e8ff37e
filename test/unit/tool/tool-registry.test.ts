import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RelayError } from '../../../src/shared/errors.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolRegistry, createToolRegistry } from '../../../src/tool/tool-registry.js';
import { buildAddTool } from './build-tools.js';

const echoTool = defineTool({
  name: 'echo',
  description: 'Repeat the text.',
  inputSchema: z.object({ text: z.string() }),
  requiresApproval: true,
  timeoutMs: 2_000,
  retry: { maximumAttempts: 1 },
  execute: ({ text }) => text,
});

describe('ToolRegistry', () => {
  it('holds the tools given to its constructor', () => {
    const addTool = buildAddTool();
    const registry = new ToolRegistry([addTool]);

    expect(registry.has('add')).toBe(true);
    expect(registry.get('add')).toBe(addTool);
    expect(registry.list()).toEqual([addTool]);
  });

  it('answers undefined and false for a tool it does not hold', () => {
    const registry = new ToolRegistry();

    expect(registry.get('missing')).toBeUndefined();
    expect(registry.has('missing')).toBe(false);
    expect(registry.list()).toEqual([]);
  });

  it('registers more tools and lists them in registration order', () => {
    const addTool = buildAddTool();
    const registry = new ToolRegistry([echoTool]).register(addTool);

    expect(registry.list().map((tool) => tool.name)).toEqual(['echo', 'add']);
  });

  it('returns a copy from list so callers cannot change the registry', () => {
    const registry = new ToolRegistry([echoTool]);
    registry.list().pop();

    expect(registry.list()).toHaveLength(1);
  });

  it('refuses a second tool with the same name', () => {
    const registry = new ToolRegistry([buildAddTool()]);

    expect(() => registry.register(buildAddTool())).toThrow(
      expect.objectContaining({ code: 'duplicate_tool', message: expect.stringContaining("'add'") as unknown }),
    );
    expect(() => new ToolRegistry([echoTool, echoTool])).toThrow(RelayError);
  });

  it('is also created by createToolRegistry', () => {
    const registry = createToolRegistry([echoTool]);

    expect(registry).toBeInstanceOf(ToolRegistry);
    expect(registry.get('echo')).toBe(echoTool);
  });
});

describe('ToolRegistry.catalog', () => {
  const registry = new ToolRegistry([buildAddTool(), echoTool]);

  it('describes every tool when no names are given', () => {
    expect(registry.catalog()).toEqual([
      {
        name: 'add',
        description: 'Add two numbers.',
        inputSchema: z.toJSONSchema(z.strictObject({ a: z.number(), b: z.number() }), { io: 'input' }),
        requiresApproval: false,
      },
      {
        name: 'echo',
        description: 'Repeat the text.',
        inputSchema: z.toJSONSchema(z.strictObject({ text: z.string() }), { io: 'input' }),
        requiresApproval: true,
        timeoutMs: 2_000,
        retry: { maximumAttempts: 1 },
      },
    ]);
  });

  it('keeps only the named tools, in the order of the names, once each', () => {
    expect(registry.catalog(['echo', 'add', 'echo']).map((entry) => entry.name)).toEqual(['echo', 'add']);
  });

  it('refuses names it does not know, listing all of them', () => {
    expect(() => registry.catalog(['add', 'nope', 'gone'])).toThrow(
      expect.objectContaining({ code: 'unknown_tool', message: "Unknown tool(s): 'nope', 'gone'" }),
    );
  });
});
