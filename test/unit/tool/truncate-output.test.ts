import { describe, expect, it } from 'vitest';
import { truncateOutput } from '../../../src/tool/truncate-output.js';

const byteLength = (text: string) => new TextEncoder().encode(text).length;
/** What a cut output's text takes in history: a JSON string, quotes and escapes included. */
const storedLength = (text: string) => byteLength(JSON.stringify(text));

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
      expect(storedLength(text)).toBeLessThanOrEqual(maxBytes);
      expect(storedLength(text)).toBeGreaterThan(maxBytes - byteLength(character));
      expect(json.startsWith(text)).toBe(true);
      expect(text).not.toContain('\uFFFD');
      expect(new TextDecoder().decode(new TextEncoder().encode(text))).toBe(text);
    }
  });

  it.each([
    ['quotes', '"'],
    ['backslashes', '\\'],
    ['newlines', '\n'],
    ['control characters', '\u0001'],
  ])('keeps an output full of %s within the bound as history stores it', (_label, character) => {
    const maxBytes = 1000;

    const { data, truncated } = truncateOutput(character.repeat(5000), maxBytes);

    expect(truncated).toBe(true);
    const text = data as string;
    expect(storedLength(text)).toBeLessThanOrEqual(maxBytes);
    // Within one escaped character of the bound: nothing is cut that would have fitted.
    expect(storedLength(text)).toBeGreaterThan(maxBytes - storedLength(JSON.stringify(character)));
    expect(JSON.stringify(character.repeat(5000)).startsWith(text)).toBe(true);
  });

  it('cuts to an empty text when the bound cannot hold even the quotes', () => {
    expect(truncateOutput('abc', 1)).toStrictEqual({ data: '', truncated: true, originalSize: 5 });
  });

  it('refuses output JSON cannot carry instead of dropping it', () => {
    expect(() => truncateOutput({ nested: { fn: () => 1 } }, 100)).toThrow(
      "Output is not JSON-serialisable: 'fn' is a function",
    );
    expect(() => truncateOutput(Symbol('s'), 100)).toThrow('the output is a symbol');
    expect(() => truncateOutput(1n, 100)).toThrow(expect.objectContaining({ code: 'tool_execution_failed' }));
  });

  it('says an output nested past what JSON encoding reaches is nested too deeply, not only that a stack ran out', () => {
    let nested: unknown = 'bottom';
    for (let level = 0; level < 200_000; level += 1) nested = [nested];

    expect(() => truncateOutput({ nested }, 100)).toThrow(
      'Output is not JSON-serialisable: it nests objects and arrays more deeply than JSON encoding reaches (Maximum call stack size exceeded)',
    );
  });
});
