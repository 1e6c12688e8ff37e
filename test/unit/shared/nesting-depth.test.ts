import { describe, expect, it } from 'vitest';
import { cutBelow, nestedDeeperThan } from '../../../src/shared/nesting-depth.js';

/** `levels` objects, each holding the next under `next`, around `inner`. */
function nested(levels: number, inner: unknown = 'x'): unknown {
  let value = inner;
  for (let level = 0; level < levels; level += 1) value = { next: value };
  return value;
}

describe('nestedDeeperThan', () => {
  it('counts each object or array as a level, without recursion, however deep', () => {
    expect(nestedDeeperThan(nested(3), 3)).toBe(false);
    expect(nestedDeeperThan(nested(4), 3)).toBe(true);
    expect(nestedDeeperThan([1, [2, [3]]], 3)).toBe(false);
    expect(nestedDeeperThan(nested(1_000_000), 128)).toBe(true);
  });
});

describe('cutBelow', () => {
  it('empties what lies below the limit, so the value is still deeper than it but encodes as JSON', () => {
    const deep = nested(1_000_000);
    expect(() => JSON.stringify(deep)).toThrow(RangeError);
    const cut = cutBelow(deep, 128);
    expect(nestedDeeperThan(cut, 128)).toBe(true);
    expect(nestedDeeperThan(cut, 129)).toBe(false);
    expect(cut).toEqual(nested(128, {}));
    expect(JSON.stringify(cut)).toHaveLength('{"next":'.length * 128 + '{}'.length + '}'.length * 128);
  });

  it('keeps arrays as arrays, values above the limit as they are, and a key named __proto__ as a key', () => {
    const value = JSON.parse('{"__proto__": [[["deep"]]], "kept": [1, "two", null]}') as unknown;
    expect(cutBelow(value, 2)).toEqual(JSON.parse('{"__proto__": [[]], "kept": [1, "two", null]}'));
    expect(Object.keys(cutBelow(value, 2) as object)).toEqual(['__proto__', 'kept']);
  });
});
