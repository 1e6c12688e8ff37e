import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import { toCatalogEntry } from '../../../src/tool/tool-catalog.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import type { RelayError } from '../../../src/shared/errors.js';
import { compileToolSchema } from '../../../src/shared/compile-tool-schema.js';
import { definitionRefusal } from '../../helpers/definition-refusal.js';

function toolWith(inputSchema: z.ZodType) {
  return defineTool({ name: 'greet', description: 'Greets someone.', inputSchema, execute: () => 'hello' });
}

/** `\p{L}` without the u flag: the text `p{L}` to the tool (TypeScript refuses it as a literal). */
const lettersWithoutU = new RegExp('^\\p{L}+$');

function refusal(inputSchema: z.ZodType): RelayError {
  return definitionRefusal(() => toolWith(inputSchema));
}

describe('a regex a run would check otherwise than the tool', () => {
  it.each([
    ['i', z.object({ name: z.string().regex(/^[a-z]+$/i) }), '/^[a-z]+$/i at /properties/name'],
    ['none, with \\p{…}', z.object({ name: z.string().regex(lettersWithoutU) }), '/^\\p{L}+$/ at /properties/name'],
    ['m, nested', z.object({ rows: z.array(z.object({ code: z.string().regex(/^x$/m) })) }), '/items/'],
    ['s, at the top', z.string().regex(/a.b/s), '/a.b/s at the top'],
  ])('is refused when the tool is defined (%s), naming the pattern and its place', (_flag, schema, named) => {
    const error = refusal(schema);
    expect(error.code).toBe('invalid_tool_definition');
    expect(error.message).toContain(named);
    expect(error.message).toContain("tool 'greet'");
  });

  it('reads \\p{…} in Unicode mode, where the regex without its u flag means the text p{…}', () => {
    const schema = z.object({ name: z.string().regex(lettersWithoutU) });
    expect(schema.safeParse({ name: 'p{L}' }).success).toBe(true);
    expect(compileToolSchema(z.toJSONSchema(schema, { io: 'input' })).safeParse({ name: 'p{L}' }).success).toBe(false);
  });

  it('would otherwise have the run refuse input the tool accepts (why the definition is refused)', () => {
    const schema = z.object({ name: z.string().regex(/^[a-z]+$/i) });
    const asTheRunChecksIt = compileToolSchema(z.toJSONSchema(schema, { io: 'input' }));
    expect(schema.safeParse({ name: 'ABC' }).success).toBe(true);
    expect(asTheRunChecksIt.safeParse({ name: 'ABC' }).success).toBe(false);
  });
});

describe('a regex checked alike with and without its flags', () => {
  it.each([
    ['no flags', /^[a-z]+$/],
    ['g', /^[a-z]+$/g],
    ['u without Unicode-only escapes', /^[a-z]+$/u],
    ['u with an escaped backslash before p{', /^\\p\{x\}$/u],
    ['u with \\p{…}, which a run reads in Unicode mode', /^\p{L}+$/u],
  ])('is accepted (%s), and the run checks it as the tool does', (_case, regex) => {
    const tool = toolWith(z.object({ name: z.string().regex(regex) }));
    const validator = new ToolCallValidator([toCatalogEntry(tool)]);
    for (const name of ['abc', 'ABC', '\\p{x}', 'José', 'p{L}']) {
      expect(validator.check('greet', { name }).valid, name).toBe(tool.inputSchema.safeParse({ name }).success);
    }
  });
});

describe('z.emoji(), whose pattern needs Unicode mode', () => {
  it('is accepted, and the run checks it as the tool does', () => {
    const tool = toolWith(z.object({ reaction: z.emoji() }));
    const validator = new ToolCallValidator([toCatalogEntry(tool)]);
    expect(validator.check('greet', { reaction: '👍' }).valid).toBe(true);
    expect(validator.check('greet', { reaction: 'a' }).valid).toBe(false);
    expect(tool.inputSchema.safeParse({ reaction: 'a' }).success).toBe(false);
  });
});
