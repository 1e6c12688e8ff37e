/**
 * JSON Schema's `pattern` is an ECMA-262 regular expression read in Unicode mode (the `u` flag), so `\p{L}` is a
 * letter; Zod's `fromJSONSchema` compiles each without flags, where `\p{L}` is the text `p{L}`. A pattern that needs
 * Unicode mode is recompiled in it here. Pure, so the workflow can call it.
 */

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
  const found = new Set<string>();
  const visit = (value: unknown): void => {
    if (Array.isArray(value)) return value.forEach(visit);
    if (typeof value !== 'object' || value === null) return;
    for (const [key, child] of Object.entries(value as Record<string, unknown>)) {
      if (key === 'pattern' && typeof child === 'string' && readsAsUnicode(child)) found.add(child);
      if (key === 'patternProperties' && typeof child === 'object' && child !== null) {
        for (const source of Object.keys(child)) if (readsAsUnicode(source)) found.add(source);
      }
      visit(child);
    }
  };
  visit(schema);
  return found;
}

/** A node of a Zod schema as this walk reads it: a schema or a check, with its definition. */
interface ZodNode {
  _zod: { def: Record<string, unknown> & { pattern?: unknown } };
}

function isZodNode(value: unknown): value is ZodNode {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/**
 * Recompiles in Unicode mode every flagless regex of a Zod schema (its checks, nested schemas, lazy ones) whose
 * source reads as Unicode, and returns the sources it recompiled. Zod's checks read their `pattern` when they run,
 * so the schema checks with the new one. Regexes Zod keeps only inside its own closures (`propertyNames`, `contains`,
 * `patternProperties` beside `additionalProperties: false`) are not reached: the caller compares what it found.
 */
export function recompileUnicodePatterns(schema: unknown): Set<string> {
  const recompiled = new Set<string>();
  const seen = new Set<unknown>();
  const visit = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) return value.forEach(visit);
    if (!isZodNode(value)) return Object.values(value).forEach(visit);
    const { def } = value._zod;
    const { pattern } = def;
    if (pattern instanceof RegExp && pattern.flags === '' && readsAsUnicode(pattern.source)) {
      def.pattern = new RegExp(pattern.source, 'u');
      recompiled.add(pattern.source);
    }
    for (const [key, child] of Object.entries(def)) {
      // A lazy schema (a recursive $ref) keeps its target behind a getter.
      if (key === 'getter' && typeof child === 'function') visit((child as () => unknown)());
      else visit(child);
    }
  };
  visit(schema);
  return recompiled;
}
