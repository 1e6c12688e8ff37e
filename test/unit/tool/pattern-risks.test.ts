import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileToolSchema } from '../../../src/shared/compile-tool-schema.js';
import { checkToolInput } from '../../../src/shared/tool-input.js';
import { defineJsonSchemaTool, defineTool } from '../../../src/tool/define-tool.js';
import { patternLengthLimits } from '../../../src/tool/pattern-risks.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { formatToolListing, toToolListing } from '../../../src/tool/tool-listing.js';
import { createToolRegistry } from '../../../src/tool/tool-registry.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import { definitionRefusal } from '../../helpers/definition-refusal.js';

const withPattern = (pattern: string) => ({ type: 'object', properties: { text: { type: 'string', pattern } } });

describe('the length limits a worker sets on the patterns of a tool', () => {
  it.each([
    ['trailing space, quadratic', '\\s+$', 4096],
    ['a popular address check, cubic', '^\\S+@\\S+\\.\\S+$', 256],
    ['two wildcards around words, cubic', '^.*foo.*bar.*$', 256],
  ])('limit a pattern that backtracks polynomially (%s) to about 2^24 steps', (_case, pattern, limit) => {
    expect(patternLengthLimits(withPattern(pattern))).toEqual({ [pattern]: limit });
  });

  it.each(['^[a-z0-9-]+(\\.[a-z0-9-]+)*$', '^[0-9a-f]{8}-[0-9a-f]{4}$', '^\\p{L}+$', '^(?=.*\\d).{8,}$'])(
    'leave a pattern that does not backtrack alone (%s)',
    (pattern) => {
      expect(patternLengthLimits(withPattern(pattern))).toBeUndefined();
    },
  );

  it.each([
    ['^(a+)+$', "a string of 33 characters ('a' + 'a'.repeat(31) + '\\x00')"],
    ['^(\\w+\\s?)*$', 'a string of 33 characters'],
  ])('refuse a pattern that backtracks exponentially (%s), saying on what', (pattern, attack) => {
    expect(() => patternLengthLimits(withPattern(pattern))).toThrow(
      `the pattern /${pattern}/ backtracks exponentially: ${attack}`,
    );
  });

  it('refuse a pattern that is not a regular expression, as JavaScript says it', () => {
    expect(() => patternLengthLimits(withPattern('^(a$'))).toThrow(
      'the pattern /^(a$/ is not a regular expression (Invalid regular expression: /^(a$/: Unterminated group)',
    );
  });

  it('refuse a patternProperties key that backtracks, whose values a bound would leave unchecked', () => {
    const schema = { type: 'object', patternProperties: { '\\s+$': { type: 'number' } } };
    expect(() => patternLengthLimits(schema)).toThrow('where a run cannot bound the strings it is tried on');
  });

  it('refuse one tried inside propertyNames or contains, even where it is bounded elsewhere, $refs followed', () => {
    const pattern = '\\s+$';
    const direct = { type: 'object', properties: { a: { type: 'string', pattern } }, propertyNames: { pattern } };
    const referred = {
      type: 'object',
      properties: { a: { $ref: '#/$defs/spaced' }, b: { type: 'array', contains: { $ref: '#/$defs/spaced' } } },
      $defs: { spaced: { type: 'string', pattern } },
    };
    for (const schema of [direct, referred]) {
      expect(() => patternLengthLimits(schema)).toThrow(`the pattern /${pattern}/ backtracks (its cost grows with`);
    }
  });
});

describe('a tool with such a pattern', () => {
  it('is refused where it is defined or registered when its pattern backtracks exponentially', () => {
    const fromJson = definitionRefusal(() =>
      defineJsonSchemaTool({
        name: 'tag',
        description: 'Tags.',
        inputSchema: withPattern('^(a+)+$'),
        execute: () => 1,
      }),
    );
    expect(fromJson).toMatchObject({ code: 'invalid_tool_definition', details: { toolName: 'tag' } });
    expect(fromJson.message).toContain("tool 'tag' cannot be checked in a run: the pattern /^(a+)+$/ backtracks");
    const fromZod = defineTool({
      name: 'label',
      description: 'Labels.',
      inputSchema: z.object({ text: z.string().regex(/^(\w+\s?)*$/) }),
      execute: () => 1,
    });
    const registered = definitionRefusal(() => createToolRegistry([fromZod]));
    expect(registered.message).toContain("tool 'label' cannot be checked in a run: the pattern /^(\\w+\\s?)*$/");
  });

  it('is refused when its polynomial pattern is where a run cannot bound the strings it is tried on', () => {
    const inputSchema = { type: 'object', propertyNames: { pattern: '\\s+$' } };
    const refused = definitionRefusal(() =>
      defineJsonSchemaTool({ name: 'keys', description: 'Keys.', inputSchema, execute: () => 1 }),
    );
    expect(refused.message).toContain('where a run cannot bound the strings it is tried on');
  });

  it('records the limits in its catalog entry, and a run refuses a longer string as too long, untried', () => {
    const notify = defineTool({
      name: 'notify',
      description: 'Sends a note.',
      inputSchema: z.object({ to: z.string().regex(/^\S+@\S+\.\S+$/), note: z.string().regex(/\s+$/).optional() }),
      execute: () => 'sent',
    });
    const entry = toCatalogEntry(notify);
    expect(entry.patternLengthLimits).toEqual({ '^\\S+@\\S+\\.\\S+$': 256, '\\s+$': 4096 });
    expect(toToolListing(entry).patternLengthLimits).toEqual(entry.patternLengthLimits);
    expect(formatToolListing(toToolListing(entry))).toContain(
      'pattern /^\\S+@\\S+\\.\\S+$/ tried on strings of at most 256 characters',
    );
    const validator = new ToolCallValidator([entry]);
    const tooLong = validator.check('notify', { to: `${'a'.repeat(250)}@example.com` });
    expect(tooLong).toMatchObject({ valid: false, issues: [{ path: 'to', code: 'too_big' }] });
    expect(tooLong.valid || tooLong.error).toContain('String is longer than 256 characters');
    // At the limit the pattern is tried: 256 characters that match pass, and 256 that do not are refused by it.
    expect(validator.check('notify', { to: `${'a'.repeat(244)}@example.com` }).valid).toBe(true);
    expect(validator.check('notify', { to: 'a'.repeat(256) })).toMatchObject({
      valid: false,
      issues: [{ path: 'to', code: 'invalid_format' }],
    });
    // The other pattern keeps its own limit.
    expect(validator.check('notify', { to: 'a@b.co', note: `${'x'.repeat(4_095)} ` }).valid).toBe(true);
    expect(validator.check('notify', { to: 'a@b.co', note: `${'x'.repeat(4_096)} ` })).toMatchObject({
      issues: [{ path: 'note', code: 'too_big' }],
    });
  });

  it('is checked by a catalog recorded without limits as before: every pattern tried on any string', () => {
    const inputSchema = withPattern('^\\S+@\\S+\\.\\S+$');
    const long = `${'a'.repeat(250)}@example.com`;
    expect(checkToolInput(compileToolSchema(inputSchema), { text: long }).success).toBe(true);
    const recorded = { name: 'notify', description: 'Sends a note.', inputSchema, requiresApproval: false };
    expect(new ToolCallValidator([recorded]).check('notify', { text: long }).valid).toBe(true);
  });
});
