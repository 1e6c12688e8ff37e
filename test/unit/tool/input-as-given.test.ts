import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineJsonSchemaTool, defineTool } from '../../../src/tool/define-tool.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import { createCheckToolCallInput } from '../../../activities/check-tool-call-input.js';

/** A Python server's `def lookup(city: str, limit: int = None)`, as its JSON Schema says it. */
const inputSchema = {
  type: 'object',
  properties: { city: { type: 'string' }, limit: { type: 'integer', default: null } },
  required: ['city'],
};
const received: unknown[] = [];
const record = (input: unknown) => {
  received.push(input);
  return 'found';
};
const fromServer = defineJsonSchemaTool({
  name: 'py_lookup',
  description: 'Looks a city up.',
  inputSchema,
  source: { kind: 'mcp', server: 'py', tool: 'lookup' },
  execute: record,
});
const ownJsonSchemaTool = defineJsonSchemaTool({
  name: 'lookup',
  description: 'Looks a city up.',
  inputSchema,
  execute: record,
});
const ownZodTool = defineTool({
  name: 'count',
  description: 'Counts up to a limit.',
  inputSchema: z.object({ limit: z.number().int().default(10) }),
  execute: record,
});

describe('an MCP server’s tool', () => {
  it('is marked in the catalog as taking its input as given; the worker’s own tools are not', () => {
    expect(toCatalogEntry(fromServer)).toMatchObject({ inputAsGiven: true });
    expect(toCatalogEntry(ownJsonSchemaTool)).not.toHaveProperty('inputAsGiven');
    expect(toCatalogEntry(ownZodTool)).not.toHaveProperty('inputAsGiven');
  });

  it('keeps the call’s input as given in a run, defaults left to its server; a catalog without the mark fills them', () => {
    const marked = new ToolCallValidator([toCatalogEntry(fromServer)]);
    const inputOf = (validator: ToolCallValidator, input: unknown) => {
      const check = validator.check('py_lookup', input);
      return check.valid ? check.input : check.error;
    };
    expect(inputOf(marked, { city: 'Oslo' })).toEqual({ city: 'Oslo' });
    expect(inputOf(marked, '{"city":"Oslo"}')).toEqual({ city: 'Oslo' });
    expect(inputOf(marked, { city: 3 })).toMatch(/^Validation failed/);
    const { inputAsGiven: _mark, ...recordedBefore } = toCatalogEntry(fromServer);
    expect(inputOf(new ToolCallValidator([recordedBefore]), { city: 'Oslo' })).toEqual({ city: 'Oslo', limit: null });
  });

  it('is executed with the input as given, while the worker’s own tools get their checked input, defaults filled', async () => {
    const executor = new ToolExecutor(new ToolRegistry([fromServer, ownJsonSchemaTool, ownZodTool]));
    received.length = 0;
    await expect(executor.execute('py_lookup', '{"city":"Oslo"}')).resolves.toMatchObject({ success: true });
    await expect(executor.execute('py_lookup', { city: 3 })).resolves.toMatchObject({ errorType: 'validation' });
    await executor.execute('lookup', { city: 'Oslo' });
    await executor.execute('count', {});
    expect(received).toEqual([{ city: 'Oslo' }, { city: 'Oslo', limit: null }, { limit: 10 }]);
  });

  it('has its approval rule asked about the input as given, the input its server will get', async () => {
    const judged: unknown[] = [];
    const ruled = defineJsonSchemaTool({
      name: 'py_lookup',
      description: 'Looks a city up.',
      inputSchema,
      source: { kind: 'mcp', server: 'py', tool: 'lookup' },
      requiresApproval: (input) => {
        judged.push(input);
        return false;
      },
      execute: record,
    });
    const check = createCheckToolCallInput(new ToolRegistry([ruled]));
    const approvalRuleContext = { tenantId: 'acme', runId: 'run_1', toolCallId: 'call_1_0' };
    const verdict = await new MockActivityEnvironment().run(() =>
      check({ toolName: 'py_lookup', input: { city: 'Oslo' }, approvalRuleContext }),
    );
    expect(verdict).toMatchObject({ valid: true, approvalNeeded: false });
    expect(judged).toEqual([{ city: 'Oslo' }]);
  });
});
