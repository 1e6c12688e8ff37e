import { describe, expect, it } from 'vitest';
import {
  boundEchoedInput,
  boundIssues,
  maxEchoedIssues,
  newestWithinBytes,
  toJsonText,
  utf8ByteLength,
} from '../../../src/shared/payload-limits.js';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';

describe('payload limits', () => {
  it('counts UTF-8 bytes the way Buffer does, surrogate pairs included', () => {
    for (const text of ['', 'abc', 'é', '€', '😀', 'a😀é€z', '\ud800']) {
      expect(utf8ByteLength(text), text).toBe(Buffer.byteLength(text, 'utf8'));
    }
  });

  it('echoes a small input unchanged and a large one as a preview with its size', () => {
    const small = { a: 1, b: 'two' };
    expect(boundEchoedInput(small)).toBe(small);
    const large = { a: 'x'.repeat(10_000) };
    expect(boundEchoedInput(large, 2_048)).toEqual({
      truncated: true,
      bytes: 10_008,
      preview: JSON.stringify(large).slice(0, 512),
    });
  });

  it('echoes an input with no JSON (nested past the stack) as an empty preview instead of throwing', () => {
    let deep: unknown = 1;
    for (let level = 0; level < 200_000; level++) deep = [deep];
    expect(toJsonText(deep)).toBeUndefined();
    expect(boundEchoedInput(deep)).toEqual({ truncated: true, bytes: -1, preview: '' });
  });

  it('keeps the first issues and counts the rest in one closing issue', () => {
    const issues = Array.from({ length: 50 }, (_, index) => ({ path: `[${index}]`, message: 'Bad', code: 'x' }));
    const bounded = boundIssues(issues);
    expect(bounded).toHaveLength(maxEchoedIssues + 1);
    expect(bounded.at(-1)).toEqual({ path: '', message: '30 more issues not listed', code: 'more_issues' });
    expect(boundIssues(issues.slice(0, 3))).toEqual(issues.slice(0, 3));
  });

  it('reports a tool call with thousands of wrong items to the model with a bounded list of issues', () => {
    const validator = new ToolCallValidator([
      {
        name: 'sum',
        description: 'Sum numbers.',
        inputSchema: { type: 'object', properties: { items: { type: 'array', items: { type: 'number' } } } },
        requiresApproval: false,
      },
    ]);
    const check = validator.check('sum', { items: Array.from({ length: 5_000 }, () => 'x') });
    expect(check.valid).toBe(false);
    if (check.valid) return;
    expect(check.issues).toHaveLength(maxEchoedIssues + 1);
    expect(check.error).toContain('4980 more issues not listed');
    expect(check.error.length).toBeLessThan(2_000);
  });

  it('keeps the newest items whose JSON fits, in their order, measuring what jsonOf picks', () => {
    const items = ['aaaa', 'bb', 'cccc', 'd'];
    // As JSON: 6, 4, 6 and 3 bytes.
    expect(newestWithinBytes(items, 13)).toEqual(['bb', 'cccc', 'd']);
    expect(newestWithinBytes(items, 12)).toEqual(['cccc', 'd']);
    expect(newestWithinBytes(items, 2)).toEqual([]);
    expect(newestWithinBytes(items, 100)).toEqual(items);
    const wrapped = items.map((text) => ({ text, ignored: 'x'.repeat(100) }));
    expect(newestWithinBytes(wrapped, 9, ({ text }) => text).map(({ text }) => text)).toEqual(['cccc', 'd']);
  });
});
