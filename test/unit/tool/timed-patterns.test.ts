import { describe, expect, it } from 'vitest';
import { createCheckToolCallInput } from '../../../activities/check-tool-call-input.js';
import { defineJsonSchemaTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

/** A pattern that backtracks exponentially: runs skip it, so the worker tries it with a time limit. */
const tags = defineJsonSchemaTool({
  name: 'tags',
  description: 'Tags.',
  inputSchema: {
    type: 'object',
    properties: { tags: { type: 'array', items: { type: 'string', pattern: '^(a+)+$' } } },
    required: ['tags'],
  },
  execute: () => 'tagged',
});

/** Each takes far longer than the 500 ms a string gets (2^40 ways to split it), so each is stopped at its limit. */
const undecidable = `${'a'.repeat(40)}!`;

const perString = 'The pattern /^(a+)+$/ could not decide this string within 500 ms (it backtracks on strings like it)';
const restOfCall =
  'The pattern /^(a+)+$/ could not decide this string within what was left of the 1000 ms the worker gives all the ' +
  'patterns of one call';
const untried =
  "The pattern /^(a+)+$/ was not tried on this string: the call's strings took the 1000 ms the worker gives all the " +
  'patterns of one call';

describe("a call's strings tried against a pattern with a time limit", () => {
  it('share one limit for the whole call in the executor: past it, the strings left are refused untried', async () => {
    const executor = new ToolExecutor(new ToolRegistry([tags]));
    const input = { tags: [undecidable, undecidable, undecidable, undecidable] };
    const result = await executor.executeCall({ id: 'c1', name: 'tags', arguments: input });
    expect(result).toMatchObject({ success: false, errorType: 'validation' });
    const messages = (result.success ? [] : (result.issues ?? [])).map(({ path, message }) => ({ path, message }));
    expect(messages).toEqual([
      { path: 'tags[0]', message: expect.stringContaining(perString) as string },
      { path: 'tags[1]', message: expect.stringContaining(restOfCall) as string },
      { path: 'tags[2]', message: expect.stringContaining(untried) as string },
      { path: 'tags[3]', message: expect.stringContaining(untried) as string },
    ]);
    // Every call starts with the whole limit again, and strings the pattern decides are not held to it.
    const decided = await executor.executeCall({ id: 'c2', name: 'tags', arguments: { tags: ['aaa', 'a'] } });
    expect(decided).toMatchObject({ success: true, data: 'tagged' });
  });

  it('share one limit in the check a worker makes before a human is asked', async () => {
    const check = createCheckToolCallInput(new ToolRegistry([tags]));
    const verdict = await check({ toolName: 'tags', input: { tags: [undecidable, undecidable, undecidable] } });
    expect(verdict).toMatchObject({ valid: false, errorType: 'validation' });
    const messages = verdict.valid ? [] : verdict.issues.map(({ message }) => message);
    expect(messages).toEqual([
      expect.stringContaining(perString),
      expect.stringContaining(restOfCall),
      expect.stringContaining(untried),
    ]);
  });
});
