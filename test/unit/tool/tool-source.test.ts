import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJsonSchemaTool, defineTool } from '../../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { loadToolSources } from '../../../src/tool/tool-source.js';
import type { LeftOutTool, ToolSource, ToolSourceContext } from '../../../src/tool/tool-source.js';
import { recordingLogger } from './build-tools.js';

const greet = defineJsonSchemaTool({
  name: 'greet',
  description: 'Greet someone.',
  inputSchema: { type: 'object', properties: { name: { type: 'string', minLength: 1 } }, required: ['name'] },
  execute: (input) => `hello ${(input as { name: string }).name}`,
});

const add = defineTool({
  name: 'add',
  description: 'Add two numbers.',
  inputSchema: z.object({ a: z.number(), b: z.number() }),
  execute: ({ a, b }) => a + b,
});

/** A source whose tools (and the tools it leaves out) the test changes through the context it was opened with. */
function controllableSource(name: string, tools: ToolDefinition[], leftOut?: LeftOutTool[]) {
  let context: ToolSourceContext | undefined;
  const source: ToolSource = {
    kind: 'tool-source',
    name,
    open: async (given) => {
      context = given;
      return { tools, ...(leftOut ? { leftOut } : {}), close: async () => undefined };
    },
  };
  return {
    source,
    change: (next: ToolDefinition[], nextLeftOut?: LeftOutTool[]) => context?.onToolsChanged(next, nextLeftOut),
  };
}

describe('defineJsonSchemaTool', () => {
  it('shows the model its JSON Schema as given and validates input with Zod built from it', async () => {
    const executor = new ToolExecutor((await loadToolSources([greet])).registry);
    expect((await loadToolSources([greet])).registry.catalog()[0]?.inputSchema).toBe(greet.inputJsonSchema);
    await expect(executor.execute('greet', { name: 'Ada' })).resolves.toMatchObject({ data: 'hello Ada' });
    await expect(executor.execute('greet', { name: '' })).resolves.toMatchObject({
      errorType: 'validation',
      issues: [{ path: 'name' }],
    });
  });

  it('refuses an input schema that is not a JSON Schema object', () => {
    expect(() =>
      defineJsonSchemaTool({ name: 'bad', description: 'Bad.', inputSchema: [] as never, execute: () => 1 }),
    ).toThrow("Tool 'bad' needs a JSON Schema object as its input schema");
  });
});

describe('loadToolSources', () => {
  it('puts a source’s tools beside the worker’s own and swaps them when the source changes', async () => {
    const { source, change } = controllableSource('remote', [greet]);
    const loaded = await loadToolSources([add, source]);
    expect(loaded.registry.list().map((tool) => tool.name)).toEqual(['add', 'greet']);

    change([{ ...greet, name: 'greet_again' }]);
    expect(loaded.registry.list().map((tool) => tool.name)).toEqual(['add', 'greet_again']);
  });

  it('tells which tools each source leaves out, as of its latest list', async () => {
    const odd = { source: 'remote', tool: 'odd', name: 'remote_odd', reason: 'its JSON Schema cannot be read' };
    const { source, change } = controllableSource('remote', [greet], [odd]);
    const other = controllableSource('other', [add]);
    const loaded = await loadToolSources([source, other.source]);
    expect(loaded.leftOut()).toEqual([odd]);

    const odder = { ...odd, tool: 'odder', name: 'remote_odder' };
    change([greet], [odd, odder]);
    expect(loaded.leftOut()).toEqual([odd, odder]);
    change([greet]);
    expect(loaded.leftOut()).toEqual([]);
  });

  it('keeps a source’s previous tools when its new list clashes with another tool, and logs why', async () => {
    const { source, change } = controllableSource('remote', [greet]);
    const logger = recordingLogger();
    const loaded = await loadToolSources([add, source], { logger });
    change([{ ...greet, name: 'add' }]);
    expect(loaded.registry.list().map((tool) => tool.name)).toEqual(['add', 'greet']);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'Kept the previous tools of a tool source: its new list clashes',
      }),
    );
  });
  it('closes every source even when one fails to close, and logs the one that failed', async () => {
    const closed: string[] = [];
    const closing = (name: string, fails: boolean): ToolSource => ({
      kind: 'tool-source',
      name,
      open: async () => ({
        tools: [],
        close: async () => {
          if (fails) throw new Error('the server did not exit');
          closed.push(name);
        },
      }),
    });
    const logger = recordingLogger();
    const loaded = await loadToolSources([closing('stuck', true), closing('fine', false)], { logger });
    await loaded.close();
    expect(closed).toEqual(['fine']);
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'Could not close a tool source',
        attributes: expect.objectContaining({ source: 'stuck' }) as unknown,
      }),
    );
  });

  it('closes a source whose tools clash at start before the start fails, and logs a failure to close it', async () => {
    const closed: string[] = [];
    const clashing = (name: string, fails: boolean): ToolSource => ({
      kind: 'tool-source',
      name,
      open: async () => ({
        tools: [{ ...greet, name: 'add' }],
        close: async () => {
          if (fails) throw new Error('the server did not exit');
          closed.push(name);
        },
      }),
    });
    await expect(loadToolSources([add, clashing('remote', false)])).rejects.toMatchObject({ code: 'duplicate_tool' });
    expect(closed).toEqual(['remote']);

    const logger = recordingLogger();
    await expect(loadToolSources([add, clashing('stuck', true)], { logger })).rejects.toMatchObject({
      code: 'duplicate_tool',
    });
    expect(logger.records).toContainEqual(
      expect.objectContaining({
        level: 'error',
        message: 'Could not close a tool source',
        attributes: expect.objectContaining({ source: 'stuck' }) as unknown,
      }),
    );
  });
});
