import { z } from 'zod';
import type { JsonSchema, ToolCatalogEntry } from './tool-catalog.js';
import { boundPatterns, skipPatterns } from './bounded-patterns.js';
import { endlessRef } from './endless-refs.js';
import { withRefsZodFollows } from './schema-refs.js';
import { recompileUnicodePatterns, unicodePatternsIn } from './unicode-patterns.js';

/**
 * Builds the Zod schema a run checks a tool's input with, from the JSON Schema in its catalog, its patterns read as
 * JSON Schema means them (Unicode mode, where that differs: unicode-patterns.ts) and, in a schema Zod cannot read
 * as it is, its local references moved where Zod follows them (schema-refs.ts). Throws when the JSON Schema cannot
 * be read, or holds such a pattern where Zod keeps it out of reach (`propertyNames`, `contains`, `patternProperties`
 * beside `additionalProperties: false`), or a `$ref` that loops on one value (endless-refs.ts): the worker refuses such
 * a tool when it is registered, so a run never checks a call against "anything goes", against a pattern read otherwise
 * than its server reads it, or in a check that never ends. The patterns `rules` name are tried only on strings up to
 * their length limit, or not at all (bounded-patterns.ts); one Zod keeps out of reach throws too. Pure, so the
 * workflow can call it.
 */
export function compileToolSchema(inputSchema: JsonSchema, rules: PatternRulesOfRun = {}): z.ZodType {
  const followed = withRefsZodFollows(inputSchema);
  const endless = endlessRef(followed);
  if (endless !== undefined) {
    throw new Error(`the $ref '${endless}' leads back to itself without reading into the input: a check never ends`);
  }
  return withPatternRules(withUnicodePatterns(followed, unicodePatternsIn(followed)), rules);
}

/**
 * The schema as runs recorded before Unicode-mode patterns checked with it (every pattern without flags), and the one
 * {@link compileToolSchema} builds when it differs; a schema that one refuses keeps only the first. Both follow the
 * pattern `rules`, which only catalogs recorded since workers set them hold.
 */
export function compileToolSchemaBothWays(
  inputSchema: JsonSchema,
  rules: PatternRulesOfRun = {},
): { flagless: z.ZodType; unicode?: z.ZodType } {
  const followed = withRefsZodFollows(inputSchema);
  const flagless = withPatternRules(z.fromJSONSchema(followed), rules);
  const needed = unicodePatternsIn(followed);
  if (needed.size === 0) return { flagless };
  try {
    return { flagless, unicode: withPatternRules(withUnicodePatterns(followed, needed), rules) };
  } catch {
    // Only a catalog recorded before workers refused such a tool holds one: it keeps the check it was recorded with.
    return { flagless };
  }
}

/** The schema with `needed` (the patterns that read as Unicode) recompiled in Unicode mode, or the refusal. */
function withUnicodePatterns(inputSchema: JsonSchema, needed: ReadonlySet<string>): z.ZodType {
  const schema = z.fromJSONSchema(inputSchema);
  if (needed.size === 0) return schema;
  const recompiled = recompileUnicodePatterns(schema);
  const unreached = [...needed].filter((source) => !recompiled.has(source));
  if (unreached.length > 0) {
    throw new Error(
      `the pattern(s) ${unreached.map((source) => JSON.stringify(source)).join(', ')} need Unicode mode where ` +
        'Relay-E cannot give it (propertyNames, contains, or patternProperties beside additionalProperties: false)',
    );
  }
  return schema;
}

/** What a run does with the patterns of a tool that backtrack, as its catalog entry records it. */
export type PatternRulesOfRun = Pick<ToolCatalogEntry, 'patternLengthLimits' | 'patternsTriedByWorker'>;

/** The schema with its patterns bounded or skipped as `rules` say, or the refusal when Zod keeps one out of reach. */
function withPatternRules(schema: z.ZodType, rules: PatternRulesOfRun): z.ZodType {
  const { patternLengthLimits = {}, patternsTriedByWorker = [] } = rules;
  const named = [...Object.keys(patternLengthLimits), ...patternsTriedByWorker];
  if (named.length === 0) return schema;
  const reached = new Set([
    ...boundPatterns(schema, patternLengthLimits),
    ...skipPatterns(schema, new Set(patternsTriedByWorker)),
  ]);
  const unreached = named.filter((source) => !reached.has(source));
  if (unreached.length > 0) {
    throw new Error(
      `the pattern(s) ${unreached.map((source) => JSON.stringify(source)).join(', ')} backtrack where Relay-E can ` +
        'neither bound nor skip them (inside propertyNames or contains)',
    );
  }
  return schema;
}
