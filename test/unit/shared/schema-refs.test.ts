import { describe, expect, it } from 'vitest';
import { compileToolSchema, compileToolSchemaBothWays } from '../../../src/shared/compile-tool-schema.js';
import { withRefsZodFollows } from '../../../src/shared/schema-refs.js';
import type { JsonSchema } from '../../../src/shared/tool-catalog.js';

const accepts = (schema: JsonSchema, input: unknown) => compileToolSchema(schema).safeParse(input).success;

/** What zod-to-json-schema writes for a Zod v3 object schema used twice in one tool (its default `$ref` strategy). */
const usedTwice: JsonSchema = {
  $schema: 'http://json-schema.org/draft-07/schema#',
  type: 'object',
  properties: {
    from: { type: 'object', properties: { id: { type: 'string' } }, required: ['id'], additionalProperties: false },
    to: { $ref: '#/properties/from' },
  },
  required: ['from', 'to'],
  additionalProperties: false,
};

describe('a tool schema whose $ref points where Zod does not look', () => {
  it('compiles a schema used twice, checking the second use as the first', () => {
    expect(accepts(usedTwice, { from: { id: 'a' }, to: { id: 'b' } })).toBe(true);
    expect(accepts(usedTwice, { from: { id: 'a' }, to: { id: 2 } })).toBe(false);
    expect(accepts(usedTwice, { from: { id: 'a' }, to: { id: 'b', extra: true } })).toBe(false);
    expect(accepts(usedTwice, { from: { id: 'a' } })).toBe(false);
  });

  it('follows recursion through such a pointer to any depth', () => {
    const tree: JsonSchema = {
      type: 'object',
      properties: {
        tree: {
          type: 'object',
          properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#/properties/tree' } } },
          required: ['name'],
        },
      },
      required: ['tree'],
    };
    const leaf = (name: unknown) => ({ name, children: [] });
    expect(accepts(tree, { tree: { name: 'a', children: [{ name: 'b', children: [leaf('c')] }] } })).toBe(true);
    expect(accepts(tree, { tree: { name: 'a', children: [{ name: 'b', children: [leaf(3)] }] } })).toBe(false);
  });

  it('reads definitions under the other draft’s name: `definitions` without a draft-07 $schema, `$defs` with one', () => {
    const word = { type: 'string', minLength: 2 };
    const unnamedDraft: JsonSchema = {
      type: 'object',
      definitions: { word },
      properties: { a: { $ref: '#/definitions/word' } },
    };
    const draft07: JsonSchema = {
      $schema: 'http://json-schema.org/draft-07/schema#',
      type: 'object',
      $defs: { word },
      properties: { a: { $ref: '#/$defs/word' } },
    };
    for (const schema of [unnamedDraft, draft07]) {
      expect(accepts(schema, { a: 'ok' })).toBe(true);
      expect(accepts(schema, { a: 'x' })).toBe(false);
    }
  });

  it('gives each moved pointer its own definition, through chains and pointers that refer to each other', () => {
    const chain: JsonSchema = {
      type: 'object',
      properties: {
        a: { type: 'object', properties: { b: { $ref: '#/properties/b' } } },
        b: { type: 'object', properties: { y: { type: 'number' }, c: { $ref: '#/properties/c' } } },
        c: { type: 'boolean' },
      },
    };
    expect(accepts(chain, { a: { b: { y: 1, c: true } } })).toBe(true);
    expect(accepts(chain, { a: { b: { y: 1, c: 'yes' } } })).toBe(false);
    const mutual: JsonSchema = {
      type: 'object',
      properties: {
        a: { type: 'object', properties: { b: { $ref: '#/properties/b' }, x: { type: 'string' } } },
        b: { type: 'object', properties: { a: { $ref: '#/properties/a' }, y: { type: 'number' } } },
      },
    };
    expect(accepts(mutual, { b: { a: { x: 'five', b: { y: 5 } } } })).toBe(true);
    expect(accepts(mutual, { b: { a: { x: 5 } } })).toBe(false);
    expect(accepts(mutual, { a: { b: { a: { b: { y: 'five' } } } } })).toBe(false);
  });

  it('reads a property or definition named like a data keyword as a schema', () => {
    const schema: JsonSchema = {
      type: 'object',
      properties: { from: { type: 'string' }, default: { $ref: '#/properties/from' } },
    };
    expect(accepts(schema, { default: 'here' })).toBe(true);
    expect(accepts(schema, { default: 1 })).toBe(false);
  });

  it('keeps a pointer to `false` refusing everything, and refuses one that leads back to itself through $refs alone', () => {
    const never: JsonSchema = { type: 'object', properties: { no: false, never: { $ref: '#/properties/no' } } };
    expect(accepts(never, {})).toBe(true);
    expect(accepts(never, { never: 1 })).toBe(false);
    const loop: JsonSchema = { type: 'object', properties: { a: { $ref: '#/properties/a' } } };
    expect(() => compileToolSchema(loop)).toThrow("the $ref '#/properties/a' leads back to itself through $refs alone");
  });

  it('leaves a schema Zod compiles as it is, whatever pointers it also holds, so its check stays what runs recorded', () => {
    const annotated: JsonSchema = {
      type: 'object',
      properties: { x: { type: 'object', 'x-source': { $ref: '#/properties/y' } }, y: { type: 'string' } },
    };
    expect(withRefsZodFollows(annotated)).toBe(annotated);
    expect(accepts(annotated, { x: {} })).toBe(true);
  });

  it('leaves a schema whose references Zod follows as it is, so its check stays what runs recorded', () => {
    const followed: JsonSchema = {
      $defs: { word: { type: 'string' } },
      properties: { a: { $ref: '#/$defs/word' }, self: { $ref: '#' } },
    };
    expect(withRefsZodFollows(followed)).toBe(followed);
    expect(withRefsZodFollows(usedTwice)).not.toBe(usedTwice);
    expect(usedTwice.properties).toMatchObject({ to: { $ref: '#/properties/from' } });
  });

  it('leaves a $ref that is data (a const, an enum, a default, an example) as it is', () => {
    const data = { $ref: '#/properties/from' };
    const schema: JsonSchema = {
      type: 'object',
      properties: {
        from: { type: 'string' },
        to: { $ref: '#/properties/from' },
        marker: { const: data, enum: [data], default: data, examples: [data] },
      },
    };
    const followed = withRefsZodFollows(schema);
    expect(followed.properties).toMatchObject({
      to: { $ref: '#/$defs/relay-e-ref-1' },
      marker: { const: data, enum: [data], default: data, examples: [data] },
    });
    expect(followed.$defs).toEqual({ 'relay-e-ref-1': { type: 'string' } });
  });

  it('still refuses a schema whose pointer points at nothing', () => {
    const dangling: JsonSchema = { type: 'object', properties: { a: { $ref: '#/properties/missing' } } };
    expect(() => compileToolSchema(dangling)).toThrow('Reference not found: #/properties/missing');
  });

  it('builds both readings of a schema with a Unicode pattern from the followed schema', () => {
    const named: JsonSchema = {
      type: 'object',
      properties: { first: { type: 'string', pattern: '^\\p{L}+$' }, last: { $ref: '#/properties/first' } },
    };
    const { flagless, unicode } = compileToolSchemaBothWays(named);
    expect(flagless.safeParse({ last: 'José' }).success).toBe(false);
    expect(unicode?.safeParse({ last: 'José' }).success).toBe(true);
  });
});
