import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileToolSchema } from '../../../src/shared/compile-tool-schema.js';
import { endlessRef } from '../../../src/shared/endless-refs.js';
import type { JsonSchema } from '../../../src/shared/tool-catalog.js';
import { defineJsonSchemaTool } from '../../../src/tool/define-tool.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';

/** An object whose `x` is checked against the definition `a`, beside the given definitions. */
const withDefinitions = (definitions: Record<string, unknown>): JsonSchema => ({
  type: 'object',
  properties: { x: { $ref: '#/$defs/a' } },
  $defs: definitions,
});

const endless: Array<[string, JsonSchema, string]> = [
  ['a $ref to itself', withDefinitions({ a: { $ref: '#/$defs/a' } }), '#/$defs/a'],
  ['two $refs to each other', withDefinitions({ a: { $ref: '#/$defs/b' }, b: { $ref: '#/$defs/a' } }), '#/$defs/b'],
  [
    'an anyOf branch back to itself',
    withDefinitions({ a: { anyOf: [{ $ref: '#/$defs/a' }, { type: 'string' }] } }),
    '#/$defs/a',
  ],
  [
    'a oneOf branch back to itself',
    withDefinitions({ a: { oneOf: [{ type: 'string' }, { $ref: '#/$defs/a' }] } }),
    '#/$defs/a',
  ],
  ['an allOf entry back to itself', withDefinitions({ a: { allOf: [{ $ref: '#/$defs/a' }] } }), '#/$defs/a'],
  ['the whole schema in its own allOf', { type: 'object', allOf: [{ $ref: '#' }] }, '#'],
  [
    'draft-07 definitions',
    {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      properties: { x: { $ref: '#/definitions/a' } },
      definitions: { a: { anyOf: [{ $ref: '#/definitions/a' }] } },
    },
    '#/definitions/a',
  ],
];

const ending: Array<[string, JsonSchema, unknown]> = [
  [
    'recursion through items',
    { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } },
    { name: 'a', children: [{ name: 'b', children: [] }] },
  ],
  [
    'recursion through a property, in anyOf',
    withDefinitions({
      a: { anyOf: [{ type: 'string' }, { type: 'object', properties: { next: { $ref: '#/$defs/a' } } }] },
    }),
    { x: { next: { next: 'end' } } },
  ],
  ['a loop in a definition nothing reaches', { type: 'object', $defs: { a: { $ref: '#/$defs/a' } } }, { y: 1 }],
  [
    // Zod reads `#/$defs/p/properties/id` as all of `p`: the loop goes through the property `id`.
    'a pointer past a definition, read as Zod reads it',
    {
      type: 'object',
      properties: { x: { $ref: '#/$defs/p/properties/id' } },
      $defs: { p: { type: 'object', properties: { id: { $ref: '#/$defs/p/properties/id' } } } },
    },
    { x: { id: { id: {} } } },
  ],
  [
    // Beside a `$ref`, Zod reads the reference instead of `properties`: the loop there is never checked.
    'a loop beside a $ref',
    {
      type: 'object',
      properties: { x: { $ref: '#/$defs/s', properties: { y: { $ref: '#/$defs/a' } } } },
      $defs: { s: { type: 'string' }, a: { $ref: '#/$defs/a' } },
    },
    { x: 'text' },
  ],
];

describe('a JSON Schema whose $refs loop on one value', () => {
  it.each(endless)('is found: %s, whose check in Zod exhausts the stack', (_name, schema, ref) => {
    expect(endlessRef(schema)).toBe(ref);
    const input = schema['properties'] ? { x: 'v' } : {};
    expect(() => z.fromJSONSchema(schema).safeParse(input)).toThrow(RangeError);
  });

  it.each(endless)('is refused when a tool is defined with it: %s', (_name, schema, ref) => {
    const define = () =>
      defineJsonSchemaTool({ name: 'loop', description: 'Loops.', inputSchema: schema, execute: () => 'never' });
    expect(define).toThrow(expect.objectContaining({ code: 'invalid_tool_definition' }));
    expect(define).toThrow(`the $ref '${ref}' leads back to itself without reading into the input`);
  });

  it('fails a run whose catalog was recorded with it before, naming the tool, instead of failing its task again', () => {
    const [, schema] = endless[2] ?? [];
    const catalog = [{ name: 'loop', description: 'Loops.', inputSchema: schema ?? {}, requiresApproval: false }];
    let thrown: unknown;
    try {
      new ToolCallValidator(catalog).check('loop', { x: 'v' });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(ApplicationFailure);
    expect(thrown).toMatchObject({
      type: 'invalid_tool_definition',
      nonRetryable: true,
      message:
        "The recorded JSON Schema of tool 'loop' cannot be checked: its $ref '#/$defs/a' leads back to itself without reading into the input",
    });
  });
});

describe('a JSON Schema whose every loop reads into the value', () => {
  it.each(ending)('is not refused: %s', (_name, schema, input) => {
    expect(endlessRef(schema)).toBeUndefined();
    expect(compileToolSchema(schema).safeParse(input).success).toBe(true);
  });
});
