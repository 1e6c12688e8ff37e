import { describe, expect, it } from 'vitest';
import { truncateOutput } from '../../../src/tool/truncate-output.js';

const byteLength = (text: string) => new TextEncoder().encode(text).length;

describe('truncateOutput', () => {
  it('returns small output as its JSON value, without a flag', () => {
    expect(truncateOutput({ a: [1, 'two', null] }, 100)).toStrictEqual({ data: { a: [1, 'two', null] } });
  });

  it('passes undefined output through', () => {
    expect(truncateOutput(undefined, 10)).toStrictEqual({ data: undefined });
  });

  it('measures the limit in UTF-8 bytes, not in characters', () => {
    const output = { text: 'é'.repeat(50) };

    const cut = truncateOutput(output, 60);

    expect(cut).toMatchObject({ truncated: true, originalSize: byteLength(JSON.stringify(output)) });
    expect(cut.originalSize).toBe(111);
  });

  it.each([
    ['two-byte', 'é'],
    ['three-byte', '€'],
    ['four-byte (surrogate pair)', '😀'],
  ])('never splits a %s character', (_label, character) => {
    const json = JSON.stringify({ text: character.repeat(40) });

    for (let maxBytes = 10; maxBytes < 30; maxBytes += 1) {
      const { data } = truncateOutput({ text: character.repeat(40) }, maxBytes);

      expect(typeof data).toBe('string');
      const text = data as string;
      expect(byteLength(text)).toBeLessThanOrEqual(maxBytes);
      expect(byteLength(text)).toBeGreaterThan(maxBytes - byteLength(character));
      expect(json.startsWith(text)).toBe(true);
      expect(text).not.toContain('\uFFFD');
      expect(new TextDecoder().decode(new TextEncoder().encode(text))).toBe(text);
    }
  });

  it('refuses output JSON cannot carry instead of dropping it', () => {
    expect(() => truncateOutput({ nested: { fn: () => 1 } }, 100)).toThrow(
      "Output is not JSON-serialisable: 'fn' is a function",
    );
    expect(() => truncateOutput(Symbol('s'), 100)).toThrow('the output is a symbol');
    expect(() => truncateOutput(1n, 100)).toThrow(expect.objectContaining({ code: 'tool_execution_failed' }));
  });
});
