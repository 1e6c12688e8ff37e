/**
 * A JavaScript regex backtracks: tried on the wrong string, a pattern with overlapping repetition (`^(a+)+$`, the
 * popular `^\S+@\S+\.\S+$`) can take seconds or years, and a run's check runs in its workflow task, which has 5
 * seconds. So before a worker offers a tool, each pattern of its input schema is analysed with recheck (on the
 * worker, never in a run). One whose cost grows polynomially is tried by runs only on strings short enough to stay
 * within the budget below. One whose cost grows exponentially, or that recheck cannot judge, is not tried by runs at
 * all: the worker tries it with a time limit (timed-patterns.ts) where it checks calls with the tool's own schema,
 * which it compiles itself for a JSON Schema tool; a Zod tool's own schema is its author's, so such a pattern refuses
 * it (the author can rewrite it).
 */

import { check, checkSync } from 'recheck';
import type { Diagnostics, UnknownDiagnostics } from 'recheck';
import type { PatternRulesOfRun } from '../shared/compile-tool-schema.js';
import { errorMessage } from '../shared/error-message.js';
import { within } from '../shared/within.js';
import type { JsonSchema } from '../shared/tool-catalog.js';
import { withRefsZodFollows, zodRefTarget } from '../shared/schema-refs.js';
import { patternsIn, readsAsUnicode } from '../shared/unicode-patterns.js';

/** About how many backtracking steps a run's check may spend trying one pattern on one string, as a power of 2. */
const backtrackingBudgetBits = 24;

/**
 * How trying a pattern grows with the string: within the budget at any length (recheck's `safe`), as a power of its
 * length, or beyond any bound a length could set (exponentially, or not judged); or not a regex at all. With why, for
 * a refusal.
 */
type PatternGrowth =
  | { kind: 'safe' }
  | { kind: 'polynomial'; degree: number; reason: string }
  | { kind: 'unbounded'; reason: string }
  | { kind: 'invalid'; reason: string };

/** Analyses by flags and source: recheck takes up to its 10 s limit on a hard pattern, and workers list tools often. */
const analysed = new Map<string, PatternGrowth>();
const analysedLimit = 10_000;

/**
 * The rules for the patterns of a tool's input schema, or a throw naming the patterns that refuse the tool and why.
 * `workerTries` says whether the tool's own check tries patterns with a time limit (timed-patterns.ts): without it
 * a pattern that backtracks exponentially, or that could not be judged, refuses the tool; so does a pattern that
 * backtracks where a run can neither bound nor skip it.
 */
export function patternRules(inputSchema: JsonSchema, { workerTries }: { workerTries: boolean }): PatternRulesOfRun {
  let judged = judgedSchemas.get(inputSchema);
  if (judged === undefined) {
    judged = judge(inputSchema);
    judgedSchemas.set(inputSchema, judged);
  }
  const limits: Record<string, number> = {};
  const triedByWorker: string[] = [];
  const refusals: string[] = [];
  for (const [source, growth] of judged.growths) {
    const rule = ruleFor(growth, judged.unreachable.has(source), workerTries);
    if ('limit' in rule) limits[source] = rule.limit;
    else if ('refusal' in rule) refusals.push(rule.refusal);
    else triedByWorker.push(source);
  }
  if (refusals.length > 0) throw new Error(refusals.join('; '));
  return {
    ...(Object.keys(limits).length > 0 ? { patternLengthLimits: limits } : {}),
    ...(triedByWorker.length > 0 ? { patternsTriedByWorker: triedByWorker } : {}),
  };
}

/** What a run does with one pattern that backtracks: bound its strings, leave it to the worker, or refuse the tool. */
function ruleFor(
  growth: Exclude<PatternGrowth, { kind: 'safe' }>,
  unreachable: boolean,
  workerTries: boolean,
): { limit: number } | { triedByWorker: true } | { refusal: string } {
  if (growth.kind === 'invalid') return { refusal: growth.reason };
  if (unreachable) {
    return {
      refusal:
        `${growth.reason}, where a run can neither bound nor skip it: as a patternProperties key (a key counted as ` +
        'not matching would leave its value unchecked), or inside propertyNames or contains',
    };
  }
  if (growth.kind === 'polynomial' && (limitFor(growth.degree) >= shortestUsefulLimit || !workerTries)) {
    return { limit: limitFor(growth.degree) };
  }
  return workerTries ? { triedByWorker: true } : { refusal: growth.reason };
}

/**
 * A length limit below this (a pattern of the fourth power or more: 64 characters and fewer) would refuse ordinary
 * strings (a URL, an ARN); where the tool's own check can try the pattern with a time limit, it does instead.
 */
const shortestUsefulLimit = 256;

/** The longest string on which a pattern of this degree stays within the budget. */
function limitFor(degree: number): number {
  return Math.floor(2 ** (backtrackingBudgetBits / degree));
}

/** What was found of a schema's patterns, by schema: a catalog entry is built for every run that asks for its tool. */
const judgedSchemas = new WeakMap<JsonSchema, Judgement>();

interface Judgement {
  /** Each pattern that backtracks, by source. */
  growths: Map<string, Exclude<PatternGrowth, { kind: 'safe' }>>;
  /** Those a run can neither bound nor skip: `patternProperties` keys, and patterns inside closures. */
  unreachable: Set<string>;
}

function judge(inputSchema: JsonSchema): Judgement {
  const { values, keys } = patternsIn(inputSchema);
  const growths: Judgement['growths'] = new Map();
  for (const source of new Set([...values, ...keys])) {
    const growth = growthOf(source);
    if (growth.kind !== 'safe') growths.set(source, growth);
  }
  const unreachable =
    growths.size > 0 ? new Set([...keys, ...patternsTriedInClosures(inputSchema)]) : new Set<string>();
  return { growths, unreachable };
}

/**
 * The patterns of the subschemas Zod checks inside closures of its own (`propertyNames`, `contains`), where a run
 * cannot reach them to bound or skip them, `$ref`s followed: the same pattern bounded elsewhere would still be tried
 * there on any string.
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
  return readingsOf(source)
    .map((flags) => analyse(source, flags))
    .reduce(worse);
}

function readingsOf(source: string): string[] {
  return readsAsUnicode(source) ? ['', 'u'] : [''];
}

function worse(a: PatternGrowth, b: PatternGrowth): PatternGrowth {
  const rank = (growth: PatternGrowth) =>
    growth.kind === 'invalid' || growth.kind === 'unbounded'
      ? Infinity
      : growth.kind === 'polynomial'
        ? growth.degree
        : 1;
  return rank(b) > rank(a) ? b : a;
}

/**
 * `\u{` not itself escaped. Without flags it is the letter `u` and a brace (`\u{3}` is `uuu`), which recheck's parser
 * refuses to read; written as `u{` it means the same to both.
 */
const flaglessCodePointEscape = /(?<!\\)((?:\\\\)*)\\u\{/g;

function analyse(source: string, flags: string): PatternGrowth {
  const key = analysisKey(source, flags);
  let growth = analysed.get(key);
  if (growth === undefined) {
    growth = growthFrom(source, checkSync(readable(source, flags), flags));
    remember(key, growth);
  }
  return growth;
}

/** Longer than recheck's own 10 s limit: an analysis not answered by then will not be. */
const aheadDeadlineMs = 30_000;

/**
 * Judges the patterns of these schemas that this process has not judged before, without holding its thread
 * (recheck's asynchronous check, one pattern at a time as the synchronous one goes), so that defining their tools
 * finds every verdict ready. For tools listed while the worker serves, such as an MCP server's after it announces a
 * change: a new pattern can take recheck seconds, which would stop everything else the worker does meanwhile.
 */
export async function judgePatternsAhead(inputSchemas: readonly JsonSchema[]): Promise<void> {
  const sources = new Set<string>();
  for (const schema of inputSchemas) {
    const { values, keys } = patternsIn(schema);
    for (const source of [...values, ...keys]) sources.add(source);
  }
  for (const source of sources) {
    for (const flags of readingsOf(source)) {
      const key = analysisKey(source, flags);
      if (analysed.has(key)) continue;
      // A check that fails, or never answers (its recheck process died), leaves the pattern to the synchronous one,
      // which judges it on the worker's thread as before, in a recheck process of its own.
      const judging = within(check(readable(source, flags), flags), aheadDeadlineMs, 'recheck did not answer');
      const diagnostics = await judging.catch(() => undefined);
      if (diagnostics) remember(key, growthFrom(source, diagnostics));
    }
  }
}

const analysisKey = (source: string, flags: string) => `${flags}/${source}`;

/** The pattern as recheck reads it with the same meaning (see {@link flaglessCodePointEscape}). */
function readable(source: string, flags: string): string {
  return flags === '' ? source.replace(flaglessCodePointEscape, '$1u{') : source;
}

function remember(key: string, growth: PatternGrowth): void {
  if (analysed.size >= analysedLimit) analysed.clear();
  analysed.set(key, growth);
}

function growthFrom(source: string, diagnostics: Diagnostics): PatternGrowth {
  const pattern = `/${source}/${diagnostics.flags}`;
  if (diagnostics.status === 'safe') return { kind: 'safe' };
  if (diagnostics.status === 'unknown') {
    const invalid = notARegex(source, diagnostics.flags);
    if (invalid !== undefined) return { kind: 'invalid', reason: `the pattern ${pattern} ${invalid}` };
    return {
      kind: 'unbounded',
      reason: `the pattern ${pattern} could not be shown to finish on every string: ${whyUnjudged(diagnostics.error)}`,
    };
  }
  const { complexity, attack } = diagnostics;
  if (complexity.type === 'polynomial') {
    const reason = `the pattern ${pattern} backtracks (its cost grows with the power ${complexity.degree} of a string's length)`;
    return { kind: 'polynomial', degree: complexity.degree, reason };
  }
  return {
    kind: 'unbounded',
    reason:
      `the pattern ${pattern} backtracks exponentially: a string of ${attack.string.length} characters ` +
      `(${attack.pattern}) would keep a check from finishing; rewrite it without nested or overlapping repetition`,
  };
}

/**
 * Why recheck gave no verdict on a pattern JavaScript accepts, said so that an author knows what to do: syntax it
 * cannot read (newer syntax, such as `(?i:…)`), or time, whose limits make the verdict depend on the machine's load.
 */
function whyUnjudged(error: UnknownDiagnostics['error']): string {
  const detail = 'message' in error ? `${error.kind}: ${error.message}` : error.kind;
  if (error.kind === 'invalid' || error.kind === 'unsupported') return `the analyser cannot read it (${detail})`;
  if (error.kind === 'timeout') {
    return `the analyser could not judge it within its time limits (${detail}), which a busier machine reaches sooner`;
  }
  return `the analyser gave no verdict (${detail})`;
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
