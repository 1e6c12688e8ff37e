import { forEachPatternCheck } from './zod-patterns.js';
import type { PatternPayload } from './zod-patterns.js';

/**
 * The longest string each of a tool's patterns is tried on, by pattern source: set by the worker for a pattern whose
 * backtracking grows polynomially with the string (src/tool/pattern-risks.ts), so that no input a model sends keeps
 * a run's check from finishing.
 */
export type PatternLengthLimits = Readonly<Record<string, number>>;

/**
 * Makes every check of a Zod schema that tries a pattern named in `limits` refuse a longer string instead of trying
 * it, and returns the sources it bounded. The refusal is an issue like the pattern's own (the string's path, code
 * `too_big`), so the model is told to send a shorter string. Pure, so the workflow can call it.
 */
export function boundPatterns(schema: unknown, limits: PatternLengthLimits): Set<string> {
  const bounded = new Set<string>();
  forEachPatternCheck(schema, (check) => {
    const { source } = check._zod.def.pattern;
    const limit = limits[source];
    if (limit === undefined) return;
    const tryPattern = check._zod.check;
    check._zod.check = (payload: PatternPayload) => {
      if (typeof payload.value === 'string' && payload.value.length > limit) {
        payload.issues.push(tooLongIssue(check, source, limit, payload.value));
      } else {
        tryPattern(payload);
      }
    };
    bounded.add(source);
  });
  return bounded;
}

function tooLongIssue(inst: unknown, source: string, limit: number, input: string) {
  return {
    origin: 'string',
    code: 'too_big',
    maximum: limit,
    inclusive: true,
    input,
    inst,
    continue: true,
    message:
      `String is longer than ${limit} characters, the most a run tries the pattern /${source}/ on ` +
      '(it backtracks on longer strings)',
  };
}

/**
 * Makes every check of a Zod schema that tries a pattern in `sources` pass without trying it, and returns the sources
 * it reached: patterns a run leaves to the worker, which tries them with a time limit (src/tool/pattern-risks.ts).
 * Pure, so the workflow can call it.
 */
export function skipPatterns(schema: unknown, sources: ReadonlySet<string>): Set<string> {
  const skipped = new Set<string>();
  forEachPatternCheck(schema, (check) => {
    const { source } = check._zod.def.pattern;
    if (!sources.has(source)) return;
    check._zod.check = () => undefined;
    skipped.add(source);
  });
  return skipped;
}
