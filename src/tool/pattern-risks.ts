/**
 * A JavaScript regex backtracks: tried on the wrong string, a pattern with overlapping repetition (`^(a+)+$`, the
 * popular `^\S+@\S+\.\S+$`) can take seconds or years, and a run's check runs in its workflow task, which has 5
 * seconds. So before a worker offers a tool, each pattern of its input schema is analysed with recheck (on the
 * worker, never in a run): one whose cost grows exponentially, or that recheck cannot judge, refuses the tool, and
 * one whose cost grows polynomially is tried only on strings short enough to stay within the budget below.
 */

import { checkSync } from 'recheck';
import type { Diagnostics } from 'recheck';
import type { PatternLengthLimits } from '../shared/bounded-patterns.js';
import { errorMessage } from '../shared/error-message.js';
import type { JsonSchema } from '../shared/tool-catalog.js';
import { withRefsZodFollows, zodRefTarget } from '../shared/schema-refs.js';
import { patternsIn, readsAsUnicode } from '../shared/unicode-patterns.js';

/** About how many backtracking steps a run's check may spend trying one pattern on one string, as a power of 2. */
const backtrackingBudgetBits = 24;

/** How trying a pattern grows with the string: within the budget at any length (recheck's `safe`), or not. */
type PatternGrowth = { kind: 'safe' } | { kind: 'polynomial'; degree: number } | { kind: 'refused'; reason: string };

/** Analyses by flags and source: recheck takes up to about a second on a long pattern, and workers list tools often. */
const analysed = new Map<string, PatternGrowth>();
const analysedLimit = 10_000;

/**
 * The length limits a run applies to the polynomial patterns of a tool's input schema (undefined when none), or
 * throws naming the patterns that refuse the tool and why. A polynomial pattern where a run cannot bound the strings
 * it is tried on refuses it too.
 */
export function patternLengthLimits(inputSchema: JsonSchema): PatternLengthLimits | undefined {
  let judged = judgedSchemas.get(inputSchema);
  if (judged === undefined) {
    judged = judge(inputSchema);
    judgedSchemas.set(inputSchema, judged);
  }
  if (judged.refusals.length > 0) throw new Error(judged.refusals.join('; '));
  return judged.limits;
}

/** What {@link patternLengthLimits} found, by schema: a catalog entry is built for every run that asks for the tool. */
const judgedSchemas = new WeakMap<JsonSchema, Judgement>();

interface Judgement {
  limits: PatternLengthLimits | undefined;
  refusals: string[];
}

function judge(inputSchema: JsonSchema): Judgement {
  const limits: Record<string, number> = {};
  const refusals: string[] = [];
  const { values, keys } = patternsIn(inputSchema);
  let unboundable: Set<string> | undefined;
  for (const source of new Set([...values, ...keys])) {
    const growth = growthOf(source);
    if (growth.kind === 'refused') refusals.push(growth.reason);
    if (growth.kind !== 'polynomial') continue;
    unboundable ??= new Set([...keys, ...patternsTriedInClosures(inputSchema)]);
    if (unboundable.has(source)) refusals.push(unbounded(source, growth.degree));
    else limits[source] = Math.floor(2 ** (backtrackingBudgetBits / growth.degree));
  }
  return { limits: Object.keys(limits).length > 0 ? limits : undefined, refusals };
}

function unbounded(source: string, degree: number): string {
  return (
    `the pattern /${source}/ backtracks (its cost grows with the power ${degree} of a string's length) where a run ` +
    'cannot bound the strings it is tried on: as a patternProperties key (a key too long to try would count as not ' +
    'matching, its value unchecked), or inside propertyNames or contains'
  );
}

/**
 * The patterns of the subschemas Zod checks inside closures of its own (`propertyNames`, `contains`), where a run
 * cannot reach them to bound them, `$ref`s followed: the same pattern bounded elsewhere would still be tried there on
 * any string.
 */
function patternsTriedInClosures(inputSchema: JsonSchema): Set<string> {
  const schema = withRefsZodFollows(inputSchema);
  const found = new Set<string>();
  const followed = new Set<unknown>();
  const inClosure = (node: unknown): void => {
    if (typeof node !== 'object' || node === null || followed.has(node)) return;
    followed.add(node);
    const { values, keys } = patternsIn(node);
    for (const source of [...values, ...keys]) found.add(source);
    forEachRef(node, (ref) => inClosure(zodRefTarget(schema, ref)));
  };
  const visit = (node: unknown): void => {
    if (Array.isArray(node)) return node.forEach(visit);
    if (typeof node !== 'object' || node === null) return;
    for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
      if (key === 'propertyNames' || key === 'contains') inClosure(child);
      else visit(child);
    }
  };
  visit(schema);
  return found;
}

/** Calls `use` with every `$ref` string anywhere in `node`. */
function forEachRef(node: unknown, use: (ref: string) => void): void {
  if (Array.isArray(node)) return node.forEach((child) => forEachRef(child, use));
  if (typeof node !== 'object' || node === null) return;
  for (const [key, child] of Object.entries(node as Record<string, unknown>)) {
    if (key === '$ref' && typeof child === 'string') use(child);
    else forEachRef(child, use);
  }
}

/** The worse of a pattern's two readings: without flags, and in Unicode mode where that reads differently. */
function growthOf(source: string): PatternGrowth {
  const readings = readsAsUnicode(source) ? ['', 'u'] : [''];
  return readings.map((flags) => analyse(source, flags)).reduce(worse);
}

function worse(a: PatternGrowth, b: PatternGrowth): PatternGrowth {
  const rank = (growth: PatternGrowth) =>
    growth.kind === 'refused' ? Infinity : growth.kind === 'polynomial' ? growth.degree : 1;
  return rank(b) > rank(a) ? b : a;
}

/**
 * `\u{` not itself escaped. Without flags it is the letter `u` and a brace (`\u{3}` is `uuu`), which recheck's parser
 * refuses to read; written as `u{` it means the same to both.
 */
const flaglessCodePointEscape = /(?<!\\)((?:\\\\)*)\\u\{/g;

function analyse(source: string, flags: string): PatternGrowth {
  const key = `${flags}/${source}`;
  let growth = analysed.get(key);
  if (growth === undefined) {
    const read = flags === '' ? source.replace(flaglessCodePointEscape, '$1u{') : source;
    growth = growthFrom(source, checkSync(read, flags));
    if (analysed.size >= analysedLimit) analysed.clear();
    analysed.set(key, growth);
  }
  return growth;
}

function growthFrom(source: string, diagnostics: Diagnostics): PatternGrowth {
  const pattern = `/${source}/${diagnostics.flags}`;
  if (diagnostics.status === 'safe') return { kind: 'safe' };
  if (diagnostics.status === 'unknown') {
    const { error } = diagnostics;
    const why = 'message' in error ? `${error.kind}: ${error.message}` : error.kind;
    const reason = notARegex(source, diagnostics.flags) ?? `could not be shown to finish on every string (${why})`;
    return { kind: 'refused', reason: `the pattern ${pattern} ${reason}` };
  }
  const { complexity, attack } = diagnostics;
  if (complexity.type === 'polynomial') return { kind: 'polynomial', degree: complexity.degree };
  return {
    kind: 'refused',
    reason:
      `the pattern ${pattern} backtracks exponentially: a string of ${attack.string.length} characters ` +
      `(${attack.pattern}) would keep a run's check from finishing; rewrite it without nested or overlapping repetition`,
  };
}

/** Why JavaScript refuses the pattern, when it does: said as it says it, rather than as recheck could not parse it. */
function notARegex(source: string, flags: string): string | undefined {
  try {
    new RegExp(source, flags);
    return undefined;
  } catch (error) {
    return `is not a regular expression (${errorMessage(error)})`;
  }
}
