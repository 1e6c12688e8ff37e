import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import type { ToolCallRequest } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

const executor = new ToolExecutor(
  new ToolRegistry([
    defineTool({
      name: 'add',
      description: 'Add.',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: ({ a, b }) => ({ result: a + b }),
    }),
  ]),
);

describe('ToolExecutor.executeCall with calls that are not calls', () => {
  it.each([
    ['null', null],
    ['undefined', undefined],
    ['a call without a name', { id: 'c1', arguments: { a: 1 } }],
    ['a call whose name is not a string', { id: 'c2', name: 42, arguments: {} }],
  ])('answers %s with a structured failure instead of throwing', async (_label, call) => {
    const result = await executor.executeCall(call as unknown as ToolCallRequest);
    expect(result).toMatchObject({ success: false, errorType: 'validation', toolName: '' });
    expect(result.success === false && result.error).toMatch(/needs a tool name/);
  });
});

describe('ToolRegistry.register', () => {
  it('refuses a tool whose JSON Schema a run could not check calls against, naming the tool', () => {
    // A JSON Schema with a $ref into nowhere: z.toJSONSchema cannot produce one, so build the tool by hand.
    const tool = {
      ...defineTool({ name: 'odd', description: 'Odd.', inputSchema: z.object({}), execute: () => ({}) }),
      inputSchema: z.object({}).meta({ $ref: '#/$defs/missing' }),
    };
    expect(() => new ToolRegistry([tool])).toThrow(/tool 'odd' cannot be checked in a run/);
  });
});
