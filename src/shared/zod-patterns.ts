/** A check of a Zod schema that tries a regex (`.regex()`, a string format), as the walk below reads it. */
export interface PatternCheck {
  _zod: { def: Record<string, unknown> & { pattern: RegExp }; check: (payload: PatternPayload) => void };
}

/** What Zod hands a check: the value, and the issues it collects. */
export interface PatternPayload {
  value: unknown;
  issues: unknown[];
}

interface ZodNode {
  _zod: { def: Record<string, unknown> };
}

function isZodNode(value: unknown): value is ZodNode {
  return typeof value === 'object' && value !== null && '_zod' in value;
}

/**
 * Calls `visit` for every node of a Zod schema (its checks, nested schemas, lazy ones) that tries a regex, once each.
 * Zod's checks read their `pattern` and their `check` when they run, so what `visit` changes there is what they do.
 * Regexes Zod keeps only inside its own closures (`propertyNames`, `contains`, `patternProperties` beside
 * `additionalProperties: false`) are not reached: callers compare what they found with what they looked for.
 */
export function forEachPatternCheck(schema: unknown, visit: (check: PatternCheck) => void): void {
  const seen = new Set<unknown>();
  const walk = (value: unknown): void => {
    if (typeof value !== 'object' || value === null || seen.has(value)) return;
    seen.add(value);
    if (Array.isArray(value)) return value.forEach(walk);
    if (!isZodNode(value)) return Object.values(value).forEach(walk);
    const { def } = value._zod;
    if (def['pattern'] instanceof RegExp) visit(value as unknown as PatternCheck);
    for (const [key, child] of Object.entries(def)) {
      // A lazy schema (a recursive $ref) keeps its target behind a getter.
      if (key === 'getter' && typeof child === 'function') walk((child as () => unknown)());
      else walk(child);
    }
  };
  walk(schema);
}
