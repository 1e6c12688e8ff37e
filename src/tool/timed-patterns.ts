import { AsyncLocalStorage } from 'node:async_hooks';
import vm from 'node:vm';
import { checkToolInputAsync, maxToolInputDepth } from '../shared/tool-input.js';
import type { CheckToolInputOptions, ToolInputCheck } from '../shared/tool-input.js';
import { forEachPatternCheck } from '../shared/zod-patterns.js';
import type { PatternCheck, PatternPayload } from '../shared/zod-patterns.js';
import type { ToolDefinition } from './define-tool.js';

/**
 * How long the worker lets one pattern run on one string: far longer than a pattern takes on a string it can decide,
 * short enough that the thread it blocks (the worker's main one) goes on soon.
 */
export const patternTimeLimitMs = 500;

/**
 * How long the worker lets all the timed patterns of one call run, summed: a call of many strings each just under
 * {@link patternTimeLimitMs} would otherwise hold the worker's main thread for their sum.
 */
export const callPatternTimeLimitMs = 1_000;

/** What is left of the call's {@link callPatternTimeLimitMs}, for the check it is running. */
const callBudgets = new AsyncLocalStorage<{ remainingMs: number }>();

/**
 * Checks a call's input with the tool's own schema, as the worker does before a human is asked and before the tool
 * runs: its timed patterns get {@link callPatternTimeLimitMs} for the whole call besides their limit per string.
 */
export function checkCallInput(
  tool: ToolDefinition,
  input: unknown,
  options: CheckToolInputOptions = {},
): Promise<ToolInputCheck<unknown>> {
  const check = () => checkToolInputAsync(tool.inputSchema, input, { maxDepth: maxToolInputDepth, ...options });
  // Most tools time no pattern: their calls, every one of which comes here, need no budget.
  if (!triesPatternsWithTimeLimit(tool.inputSchema)) return check();
  return callBudgets.run({ remainingMs: callPatternTimeLimitMs }, check);
}

/** A context of its own, so that a time limit can stop the regex: Node stops a script running in a context. */
const context = vm.createContext({});
const runCheck = new vm.Script('check()');

/**
 * Makes every check of a Zod schema that tries a pattern named in `sources` stop after {@link patternTimeLimitMs}
 * (or what is left of the call's limit, in {@link checkCallInput}) and refuse the string it could not decide (code
 * `pattern_timed_out`), and returns the sources it reached. For the tool's own schema, on the worker: a run does not
 * try these patterns (pattern-risks.ts).
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
  const budget = callBudgets.getStore();
  const leftOfCallMs = Math.floor(budget?.remainingMs ?? Infinity);
  const limitMs = Math.min(patternTimeLimitMs, leftOfCallMs);
  const pattern = `The pattern /${check._zod.def.pattern.source}/`;
  const callLimit = `the ${callPatternTimeLimitMs} ms the worker gives all the patterns of one call`;
  if (limitMs < 1) {
    refuse(check, payload, `${pattern} was not tried on this string: the call's strings took ${callLimit}`);
    return;
  }
  context['check'] = tryPattern;
  const started = performance.now();
  // What is left of the call bounds this string, alone or as much as the string's own limit does.
  const ofCall = leftOfCallMs <= patternTimeLimitMs;
  let timedOut = false;
  try {
    runCheck.runInContext(context, { timeout: limitMs });
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw error;
    timedOut = true;
    const within = ofCall ? `what was left of ${callLimit}` : `${patternTimeLimitMs} ms`;
    refuse(
      check,
      payload,
      `${pattern} could not decide this string within ${within} (it backtracks on strings like it)`,
    );
  } finally {
    context['check'] = undefined;
    // Node's timer can stop the script a little early: a string stopped at its limit spent all of it, so the call's
    // time is spent when that limit was what was left of it.
    const spentMs = timedOut ? Math.max(limitMs, performance.now() - started) : performance.now() - started;
    if (budget) budget.remainingMs = timedOut && ofCall ? 0 : budget.remainingMs - spentMs;
  }
}

/** Refuses the string a pattern could not decide in time: the model is told, and can send one it can decide. */
function refuse(check: PatternCheck, payload: PatternPayload, why: string): void {
  payload.issues.push({
    origin: 'string',
    code: 'pattern_timed_out',
    input: payload.value,
    inst: check,
    continue: true,
    message: `${why}: send a string it can decide`,
  });
}
