import { describe, expect, it } from 'vitest';
import type { RelayError } from '../../../src/shared/errors.js';
import type { JsonSchema } from '../../../src/shared/tool-catalog.js';
import { defineJsonSchemaTool } from '../../../src/tool/define-tool.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import { definitionRefusal } from '../../helpers/definition-refusal.js';

/** A tool as an MCP server describes one: its input by a JSON Schema whose patterns JSON Schema reads with `u`. */
function toolWith(inputSchema: JsonSchema) {
  return defineJsonSchemaTool({ name: 'greet', description: 'Greets someone.', inputSchema, execute: () => 'hello' });
}

const letters = '^\\p{L}+$';

/** Whether the run accepts `input`, and whether the tool's own check does: the two must agree. */
function checkedBoth(inputSchema: JsonSchema, input: unknown): { run: boolean; tool: boolean } {
  const tool = toolWith(inputSchema);
  const run = new ToolCallValidator([toCatalogEntry(tool)]).check('greet', input).valid;
  return { run, tool: tool.inputSchema.safeParse(input).success };
}

function refusal(inputSchema: JsonSchema): RelayError {
  return definitionRefusal(() => toolWith(inputSchema));
}

describe('a JSON Schema pattern that needs Unicode mode', () => {
  it.each([
    [
      'a property',
      { type: 'object', properties: { name: { type: 'string', pattern: letters } } },
      (name: string) => ({ name }),
    ],
    [
      'array items',
      { type: 'object', properties: { names: { type: 'array', items: { type: 'string', pattern: letters } } } },
      (name: string) => ({ names: ['Ana', name] }),
    ],
    [
      'a branch of anyOf',
      { type: 'object', properties: { name: { anyOf: [{ type: 'number' }, { type: 'string', pattern: letters }] } } },
      (name: string) => ({ name }),
    ],
    [
      'a recursive $ref',
      {
        type: 'object',
        properties: { person: { $ref: '#/$defs/person' } },
        $defs: {
          person: {
            type: 'object',
            properties: { name: { type: 'string', pattern: letters }, child: { $ref: '#/$defs/person' } },
          },
        },
      },
      (name: string) => ({ person: { name: 'Ana', child: { name } } }),
    ],
  ])('is read in it in %s: a letter is \\p{L}, not the text p{L}', (_place, schema, inputOf) => {
    expect(checkedBoth(schema, inputOf('José'))).toEqual({ run: true, tool: true });
    expect(checkedBoth(schema, inputOf('p{L}'))).toEqual({ run: false, tool: false });
  });

  it('reads \\u{…} as a code point', () => {
    const schema = { type: 'object', properties: { mood: { type: 'string', pattern: '^\\u{1F600}$' } } };
    expect(checkedBoth(schema, { mood: '😀' })).toEqual({ run: true, tool: true });
    expect(checkedBoth(schema, { mood: 'u'.repeat(0x1f600) })).toEqual({ run: false, tool: false });
  });

  it('keeps a pattern that compiles only without u in its flagless reading', () => {
    const schema = { type: 'object', properties: { host: { type: 'string', pattern: '^[\\w-.]+$' } } };
    expect(checkedBoth(schema, { host: 'a-b.c' })).toEqual({ run: true, tool: true });
    expect(checkedBoth(schema, { host: 'a b' })).toEqual({ run: false, tool: false });
  });

  it('refuses the tool where Relay-E cannot read it in Unicode mode, naming the pattern', () => {
    const error = refusal({ type: 'object', propertyNames: { pattern: letters } });
    expect(error.code).toBe('invalid_tool_definition');
    expect(error.message).toContain(JSON.stringify(letters));
    expect(error.message).toContain('propertyNames');
  });
});

describe('a run recorded before patterns were read in Unicode mode', () => {
  const schema = { type: 'object', properties: { name: { type: 'string', pattern: letters } } };

  it('keeps the flagless reading its rule answers for, and is asked only where the two readings part', () => {
    let asked = 0;
    const validator = new ToolCallValidator([toCatalogEntry(toolWith(schema))], {
      patternsInUnicodeMode: () => {
        asked += 1;
        return false;
      },
      inputDepthBounded: () => true,
    });
    // Refused alike: its type is checked before any pattern.
    expect(validator.check('greet', { name: 42 }).valid).toBe(false);
    expect(asked).toBe(0);
    expect(validator.check('greet', { name: 'José' }).valid).toBe(false);
    expect(validator.check('greet', { name: 'p{L}' }).valid).toBe(true);
    expect(asked).toBe(2);
  });
});
