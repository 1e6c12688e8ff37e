/**
 * JSON Schema's `pattern` is an ECMA-262 regular expression read in Unicode mode (the `u` flag), so `\p{L}` is a
 * letter; Zod's `fromJSONSchema` compiles each without flags, where `\p{L}` is the text `p{L}`. A pattern that needs
 * Unicode mode is recompiled in it here. Pure, so the workflow can call it.
 */

import { forEachPatternCheck } from './zod-patterns.js';

/** `\p{`, `\P{` or `\u{` not itself escaped (an even run of backslashes before it). */
const unicodeOnlyEscape = /(?<!\\)(?:\\\\)*\\[pPu]\{/;

/**
 * Whether a pattern means something else in Unicode mode and reads there: it holds a Unicode-only escape, and
 * compiles with `u`. A pattern that compiles only without `u` (`[\w-.]`) can mean only what it says there.
 */
export function readsAsUnicode(source: string): boolean {
  if (!unicodeOnlyEscape.test(source)) return false;
  try {
    new RegExp(source, 'u');
    return true;
  } catch {
    return false;
  }
}

/** The patterns of a JSON Schema that read as Unicode: every `pattern` and `patternProperties` key, wherever. */
export function unicodePatternsIn(schema: unknown): Set<string> {
  const { values, keys } = patternsIn(schema);
  return new Set([...values, ...keys].filter(readsAsUnicode));
}

/**
 * The patterns of a JSON Schema, wherever they are: those tried on values (`pattern`), and those tried on an object's
 * keys (`patternProperties`).
 */
export function patternsIn(schema: unknown): { values: Set<string>; keys: Set<string> } {
  const values = new Set<string>();
  const keys = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (key === 'pattern' && typeof child === 'string') values.add(child);
      if (key === 'patternProperties' && typeof child === 'object' && child !== null) {
        for (const source of Object.keys(child)) keys.add(source);
      }
      visit(child);
    }
  };
  visit(schema);
  return { values, keys };
}

/**
 * Recompiles in Unicode mode every flagless regex of a Zod schema (its checks, nested schemas, lazy ones) whose
 * source reads as Unicode, and returns the sources it recompiled. Zod's checks read their `pattern` when they run,
 * so the schema checks with the new one. Regexes Zod keeps only inside its own closures are not reached
 * (zod-patterns.ts): the caller compares what it found.
 */
export function recompileUnicodePatterns(schema: unknown): Set<string> {
  const recompiled = new Set<string>();
  forEachPatternCheck(schema, ({ _zod: { def } }) => {
    const { pattern } = def;
    if (pattern.flags === '' && readsAsUnicode(pattern.source)) {
      def.pattern = new RegExp(pattern.source, 'u');
      recompiled.add(pattern.source);
    }
  });
  return recompiled;
}
