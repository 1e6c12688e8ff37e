import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { compileToolSchema } from '../../../src/shared/compile-tool-schema.js';
import { checkToolInput } from '../../../src/shared/tool-input.js';
import { defineJsonSchemaTool, defineTool } from '../../../src/tool/define-tool.js';
import { patternRules } from '../../../src/tool/pattern-risks.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { formatToolListing, toToolListing } from '../../../src/tool/tool-listing.js';
import { createToolRegistry } from '../../../src/tool/tool-registry.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import { definitionRefusal } from '../../helpers/definition-refusal.js';

const withPattern = (pattern: string) => ({ type: 'object', properties: { text: { type: 'string', pattern } } });
const forZodTool = { workerTries: false };
const forJsonSchemaTool = { workerTries: true };

describe('the rules a worker sets for the patterns of a tool', () => {
  it.each([
    ['trailing space, quadratic', '\\s+$', 4096],
    ['a popular address check, cubic', '^\\S+@\\S+\\.\\S+$', 256],
    ['two wildcards around words, cubic', '^.*foo.*bar.*$', 256],
  ])('limit a pattern that backtracks polynomially (%s) to about 2^24 steps', (_case, pattern, limit) => {
    expect(patternRules(withPattern(pattern), forZodTool)).toEqual({ patternLengthLimits: { [pattern]: limit } });
  });

  it('leave a pattern of the fourth power or more to a JSON Schema tool’s worker, where a limit would be short', () => {
    // recheck finds this one's cost grows with the fourth power of the string's length: 64 characters at most.
    const pattern = '^.*a.*b.*c.*$';
    expect(patternRules(withPattern(pattern), forZodTool)).toEqual({ patternLengthLimits: { [pattern]: 64 } });
    expect(patternRules(withPattern(pattern), forJsonSchemaTool)).toEqual({ patternsTriedByWorker: [pattern] });
  });

  it.each(['^[a-z0-9-]+(\\.[a-z0-9-]+)*$', '^[0-9a-f]{8}-[0-9a-f]{4}$', '^\\p{L}+$', '^(?=.*\\d).{8,}$'])(
    'leave a pattern that does not backtrack alone (%s)',
    (pattern) => {
      expect(patternRules(withPattern(pattern), forZodTool)).toEqual({});
    },
  );

  it.each([
    ['^(a+)+$', "a string of 33 characters ('a' + 'a'.repeat(31) + '\\x00')"],
    ['^(\\w+\\s?)*$', 'a string of 33 characters'],
  ])('leave a pattern that backtracks exponentially (%s) to the worker, or refuse a Zod tool', (pattern, attack) => {
    expect(patternRules(withPattern(pattern), forJsonSchemaTool)).toEqual({ patternsTriedByWorker: [pattern] });
    expect(() => patternRules(withPattern(pattern), forZodTool)).toThrow(
      `the pattern /${pattern}/ backtracks exponentially: ${attack}`,
    );
  });

  it('refuse a pattern that is not a regular expression, as JavaScript says it', () => {
    expect(() => patternRules(withPattern('^(a$'), forJsonSchemaTool)).toThrow(
      'the pattern /^(a$/ is not a regular expression (Invalid regular expression: /^(a$/: Unterminated group)',
    );
  });

  it('refuse a patternProperties key that backtracks, whose values a bound or a skip would leave unchecked', () => {
    for (const pattern of ['\\s+$', '^(a+)+$']) {
      const schema = { type: 'object', patternProperties: { [pattern]: { type: 'number' } } };
      expect(() => patternRules(schema, forJsonSchemaTool)).toThrow('where a run can neither bound nor skip it');
    }
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
      expect(() => patternRules(schema, forJsonSchemaTool)).toThrow(
        `the pattern /${pattern}/ backtracks (its cost grows with the power 2 of a string's length), where a run`,
      );
    }
  });
});

describe('a tool with a pattern that backtracks exponentially', () => {
  it('is refused where it is registered when it is a Zod tool, whose own check is its author’s', () => {
    const fromZod = defineTool({
      name: 'label',
      description: 'Labels.',
      inputSchema: z.object({ text: z.string().regex(/^(\w+\s?)*$/) }),
      execute: () => 1,
    });
    const registered = definitionRefusal(() => createToolRegistry([fromZod]));
    expect(registered).toMatchObject({ code: 'invalid_tool_definition', details: { toolName: 'label' } });
    expect(registered.message).toContain("tool 'label' cannot be checked in a run: the pattern /^(\\w+\\s?)*$/");
  });

  it('is offered when it is a JSON Schema tool: runs skip the pattern, its own check tries it with a time limit', () => {
    const tag = defineJsonSchemaTool({
      name: 'tag',
      description: 'Tags.',
      inputSchema: withPattern('^(a+)+$'),
      execute: () => 'tagged',
    });
    expect(createToolRegistry([tag]).has('tag')).toBe(true);
    const entry = toCatalogEntry(tag);
    expect(entry.patternsTriedByWorker).toEqual(['^(a+)+$']);
    expect(formatToolListing(toToolListing(entry))).toContain(
      'pattern /^(a+)+$/ tried by the worker, with a time limit',
    );
    const attack = { text: `${'a'.repeat(40)}!` };
    // The run's check passes it untried, at once; the tool's own check stops the pattern and refuses the string.
    expect(new ToolCallValidator([entry]).check('tag', attack).valid).toBe(true);
    const started = performance.now();
    const own = checkToolInput(tag.inputSchema, attack);
    expect(performance.now() - started).toBeLessThan(5_000);
    expect(own).toMatchObject({ success: false, issues: [{ path: 'text', code: 'pattern_timed_out' }] });
    expect(own.success || own.message).toContain('The pattern /^(a+)+$/ could not decide this string within 500 ms');
    expect(checkToolInput(tag.inputSchema, { text: 'aaa' }).success).toBe(true);
    expect(checkToolInput(tag.inputSchema, { text: 'b' })).toMatchObject({ issues: [{ code: 'invalid_format' }] });
  });
});

describe('a tool with a pattern the analyser cannot judge', () => {
  /** Valid JavaScript (a modifier group, case-insensitive inside), which recheck cannot parse: never judged, anywhere. */
  const unreadable = '^(?i:ab)+$';

  it('is refused when it is a Zod tool, saying the analyser cannot read the pattern', () => {
    const fromZod = defineTool({
      name: 'pair',
      description: 'Pairs.',
      inputSchema: z.object({ text: z.string().regex(new RegExp(unreadable)) }),
      execute: () => 1,
    });
    const registered = definitionRefusal(() => createToolRegistry([fromZod]));
    expect(registered.message).toContain(
      `the pattern /${unreadable}/ could not be shown to finish on every string: the analyser cannot read it (invalid: `,
    );
  });

  it('is offered when it is a JSON Schema tool, the pattern left to its own check with a time limit', () => {
    const pair = defineJsonSchemaTool({
      name: 'pair',
      description: 'Pairs.',
      inputSchema: withPattern(unreadable),
      execute: () => 'paired',
    });
    const entry = toCatalogEntry(pair);
    expect(entry.patternsTriedByWorker).toEqual([unreadable]);
    expect(new ToolCallValidator([entry]).check('pair', { text: 'x' }).valid).toBe(true);
    expect(checkToolInput(pair.inputSchema, { text: 'abAB' }).success).toBe(true);
    expect(checkToolInput(pair.inputSchema, { text: 'abc' })).toMatchObject({ issues: [{ code: 'invalid_format' }] });
  });
});

describe('a tool with a pattern that backtracks polynomially', () => {
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

  it('is refused when the pattern is where a run can neither bound nor skip it', () => {
    const inputSchema = { type: 'object', propertyNames: { pattern: '\\s+$' } };
    const refused = definitionRefusal(() =>
      defineJsonSchemaTool({ name: 'keys', description: 'Keys.', inputSchema, execute: () => 1 }),
    );
    expect(refused.message).toContain('where a run can neither bound nor skip it');
  });

  it('is checked by a catalog recorded without rules as before: every pattern tried on any string', () => {
    const inputSchema = withPattern('^\\S+@\\S+\\.\\S+$');
    const long = `${'a'.repeat(250)}@example.com`;
    expect(checkToolInput(compileToolSchema(inputSchema), { text: long }).success).toBe(true);
    const recorded = { name: 'notify', description: 'Sends a note.', inputSchema, requiresApproval: false };
    expect(new ToolCallValidator([recorded]).check('notify', { text: long }).valid).toBe(true);
  });
});
