import { ApplicationFailure } from '@temporalio/workflow';
import { z } from 'zod';
import { compileToolSchemaBothWays } from '../src/shared/compile-tool-schema.js';
import { endlessRef } from '../src/shared/endless-refs.js';
import { withRefsZodFollows } from '../src/shared/schema-refs.js';
import { errorMessage } from '../src/shared/error-message.js';
import { boundIssues } from '../src/shared/payload-limits.js';
import { argumentsAsGiven, checkToolInput, describeIssues, tooDeepCheck } from '../src/shared/tool-input.js';
import type { ToolInputCheck, ToolInputIssue } from '../src/shared/tool-input.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { RunPatches } from './run-patches.js';
import { undeclaredFields } from '../src/shared/undeclared-fields.js';

export type ToolCallCheck =
  | { valid: true; entry: ToolCatalogEntry; input: unknown }
  | { valid: false; errorType: 'validation' | 'not_found'; error: string; issues: ToolInputIssue[] };

/**
 * Validators built from JSON Schema, shared by every run in this workflow context (the worker reuses one V8
 * context for all cached runs). Building is a pure function of the schema text and its pattern rules, so sharing
 * cannot change an outcome; it saves each cached run from holding its own copy of every tool's validator (measured in
 * bench/memory-per-run.ts). Bounded so a worker serving many distinct catalogs cannot grow without limit.
 */
const sharedSchemas = new Map<string, ToolSchemas>();

/** A tool's schema as runs recorded before Unicode-mode patterns read it, and as they read it now where that differs. */
type ToolSchemas = ReturnType<typeof compileToolSchemaBothWays>;
const sharedSchemaLimit = 1_000;

// The worker preloads this module (and Zod with it) once per workflow thread, then freezes it. Zod fills in its
// global config (default locale, memoizer) on the first schemas it builds and parses: do that now, before the
// freeze, so no run ever writes to the frozen config. The workflow tests fail at once if a Zod upgrade adds more.
z.fromJSONSchema({ type: 'object', properties: { warm: { type: 'array', items: { type: 'string' } } } }).safeParse({
  warm: [1],
});

/**
 * The run's rules a check follows (run-patches.ts), each asked only at a call where it changes the outcome: patterns
 * read in Unicode mode where that differs, and an input nested too deeply refused before its schema is followed.
 */
export type CheckRules = Pick<RunPatches, 'patternsInUnicodeMode' | 'inputDepthBounded'>;

/** Outside a run: patterns read as JSON Schema means them, and no input checked deeper than it may nest. */
const currentRules: CheckRules = { patternsInUnicodeMode: () => true, inputDepthBounded: () => true };

/**
 * Checks proposed tool calls against the run's catalog snapshot, deterministically, inside the workflow.
 * A tool's validator is built on first use, so a run that never calls a tool never pays for its schema.
 */
export class ToolCallValidator {
  private readonly entries: ReadonlyMap<string, ToolCatalogEntry>;
  private readonly schemas = new Map<string, ToolSchemas>();

  constructor(
    catalog: readonly ToolCatalogEntry[],
    private readonly rules: CheckRules = currentRules,
  ) {
    this.entries = new Map(catalog.map((entry) => [entry.name, entry]));
  }

  check(toolName: string, rawInput: unknown): ToolCallCheck {
    const entry = this.entries.get(toolName);
    if (!entry) {
      const available = [...this.entries.keys()].join(', ') || 'none';
      const error = `Unknown tool '${toolName}'. Available tools: ${available}`;
      return {
        valid: false,
        errorType: 'not_found',
        error,
        issues: [{ path: '', message: error, code: 'unknown_tool' }],
      };
    }
    const result = this.refusedAsTooDeep(rawInput) ?? this.checkInput(entry, rawInput);
    if (!result.success) {
      // A wrong input can carry thousands of issues; the model needs the first few, and history needs them small.
      const issues = boundIssues(result.issues);
      return { valid: false, errorType: 'validation', error: describeIssues(issues), issues };
    }
    return { valid: true, entry, input: entry.inputAsGiven ? argumentsAsGiven(rawInput) : result.data };
  }

  /**
   * Checks an approver's edited input as a proposed call's, and refuses a field the tool's schema does not name
   * (undeclaredFields): what an approver adds must reach the tool, or the approval records what never ran.
   */
  checkEdit(toolName: string, rawInput: unknown): ToolCallCheck {
    const check = this.check(toolName, rawInput);
    if (!check.valid) return check;
    const issues = boundIssues(undeclaredFields(check.entry.inputSchema, rawInput));
    if (issues.length === 0) return check;
    return { valid: false, errorType: 'validation', error: describeIssues(issues), issues };
  }

  /** The refusal of an input nested too deeply to be checked, where the run's rule refuses it. */
  private refusedAsTooDeep(rawInput: unknown): ToolInputCheck<never> | undefined {
    const tooDeep = tooDeepCheck(rawInput);
    return tooDeep && this.rules.inputDepthBounded() ? tooDeep : undefined;
  }

  /** The check of a call, its patterns read in Unicode mode where that changes the outcome and the run's rule says so. */
  private checkInput(entry: ToolCatalogEntry, rawInput: unknown): ToolInputCheck<unknown> {
    const { flagless, unicode } = this.schemasFor(entry);
    const check = (schema: z.ZodType) => {
      try {
        return checkToolInput(schema, rawInput, { onInternalError: 'throw' });
      } catch (error) {
        return failIfEndless(entry, error);
      }
    };
    const asRecorded = check(flagless);
    if (!unicode) return asRecorded;
    const asMeant = check(unicode);
    if (JSON.stringify(asMeant) === JSON.stringify(asRecorded) || !this.rules.patternsInUnicodeMode()) {
      return asRecorded;
    }
    return asMeant;
  }

  private schemasFor(entry: ToolCatalogEntry): ToolSchemas {
    let schemas = this.schemas.get(entry.name);
    if (schemas) return schemas;
    const key = JSON.stringify([entry.inputSchema, entry.patternLengthLimits, entry.patternsTriedByWorker]);
    schemas = sharedSchemas.get(key);
    if (!schemas) {
      schemas = buildSchemas(entry);
      if (sharedSchemas.size >= sharedSchemaLimit) sharedSchemas.clear();
      sharedSchemas.set(key, schemas);
    }
    this.schemas.set(entry.name, schemas);
    return schemas;
  }
}

/**
 * Workers refuse a tool whose `$ref`s loop on one value (endless-refs.ts), so a check that threw against one came from
 * a catalog recorded before that: the run fails with the tool named, instead of failing its workflow task (the stack
 * exhausted) on every attempt. Any other throw is a fault in the check, left to fail the task until a fix is deployed.
 */
function failIfEndless(entry: ToolCatalogEntry, error: unknown): never {
  const endless = endlessRef(withRefsZodFollows(entry.inputSchema));
  if (endless === undefined) throw error;
  throw ApplicationFailure.create({
    type: 'invalid_tool_definition',
    message:
      `The recorded JSON Schema of tool '${entry.name}' cannot be checked: its $ref '${endless}' leads back to ` +
      'itself without reading into the input',
    nonRetryable: true,
  });
}

/**
 * Workers refuse a tool whose schema does not compile, so one that fails here came from a catalog recorded by a
 * worker without that check: the run fails with the tool named, instead of checking its calls against nothing.
 */
function buildSchemas(entry: ToolCatalogEntry): ToolSchemas {
  try {
    return compileToolSchemaBothWays(entry.inputSchema, entry);
  } catch (error) {
    throw ApplicationFailure.create({
      type: 'invalid_tool_definition',
      message: `The recorded JSON Schema of tool '${entry.name}' does not compile: ${errorMessage(error)}`,
      nonRetryable: true,
    });
  }
}
