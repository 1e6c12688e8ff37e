import vm from 'node:vm';
import { forEachPatternCheck } from '../shared/zod-patterns.js';
import type { PatternCheck, PatternPayload } from '../shared/zod-patterns.js';

/**
 * How long the worker lets one pattern run on one string: far longer than a pattern takes on a string it can decide,
 * short enough that the thread it blocks (the worker's main one) goes on soon.
 */
export const patternTimeLimitMs = 500;

/** A context of its own, so that a time limit can stop the regex: Node stops a script running in a context. */
const context = vm.createContext({});
const runCheck = new vm.Script('check()');

/**
 * Makes every check of a Zod schema that tries a pattern named in `sources` stop after {@link patternTimeLimitMs}
 * and refuse the string it could not decide (code `pattern_timed_out`), and returns the sources it reached. For the
 * tool's own schema, on the worker: a run does not try these patterns (pattern-risks.ts).
 */
export function tryPatternsWithTimeLimit(schema: object, sources: ReadonlySet<string>): Set<string> {
  timingSchemas.add(schema);
  const reached = new Set<string>();
  forEachPatternCheck(schema, (check) => {
    const { source } = check._zod.def.pattern;
    if (!sources.has(source)) return;
    const tryPattern = check._zod.check;
    check._zod.check = (payload) => tryWithinLimit(check, payload, () => tryPattern(payload));
    reached.add(source);
  });
  return reached;
}

/** The schemas {@link tryPatternsWithTimeLimit} was given: tools whose own check a run may leave patterns to. */
const timingSchemas = new WeakSet<object>();

/** Whether a tool's own schema tries the patterns a run leaves to it with a time limit (a JSON Schema tool's does). */
export function triesPatternsWithTimeLimit(schema: object): boolean {
  return timingSchemas.has(schema);
}

function tryWithinLimit(check: PatternCheck, payload: PatternPayload, tryPattern: () => void): void {
  context['check'] = tryPattern;
  try {
    runCheck.runInContext(context, { timeout: patternTimeLimitMs });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
    const { source } = check._zod.def.pattern;
    payload.issues.push({
      origin: 'string',
      code: 'pattern_timed_out',
      input: payload.value,
      inst: check,
      continue: true,
      message:
        `The pattern /${source}/ could not decide this string within ${patternTimeLimitMs} ms (it backtracks on ` +
        'strings like it): send a string it can decide',
    });
  } finally {
    context['check'] = undefined;
  }
}
