import { z } from 'zod';
import { RelayError } from '../shared/errors.js';
import type { PatternRulesOfRun } from '../shared/compile-tool-schema.js';
import type { JsonSchema, ToolCatalogEntry } from '../shared/tool-catalog.js';
import type { ToolDefinition } from './define-tool.js';
import { errorMessage } from '../shared/error-message.js';
import { readsAsUnicode } from '../shared/unicode-patterns.js';
import { patternRules } from './pattern-risks.js';
import { triesPatternsWithTimeLimit } from './timed-patterns.js';

/**
 * Converts a tool's input schema to the JSON Schema models are shown (`z.toJSONSchema` with `io: 'input'`, so
 * defaults are optional and transforms show what they accept). An object that drops the keys it does not name (Zod's
 * default) is closed (`additionalProperties: false`), so a run refuses a call with such a key and the model is told,
 * instead of recording and approving a field the tool never sees. Types JSON cannot carry, such as `z.date()`,
 * `z.bigint()` or a bare `z.transform()`, throw `RelayError('invalid_tool_definition')` instead of turning into
 * `{}`, which would let the model send anything; `toolName` names the tool in that error.
 */
export function toJsonSchema(schema: z.ZodType, toolName?: string): JsonSchema {
  const subject = toolName === undefined ? 'An input schema' : `The input schema of tool '${toolName}'`;
  const flagged: string[] = [];
  let converted: JsonSchema;
  try {
    converted = convert(schema, flagged, { closeIntersections: true });
    // Zod folds an intersection of objects into one object, closed when each was; one it cannot fold stays an
    // `allOf`, whose closed members would refuse each other's keys, so such a schema leaves intersections open.
    if (hasAllOf(converted)) {
      flagged.length = 0;
      converted = convert(schema, flagged, { closeIntersections: false });
    }
  } catch (error) {
    const reason = errorMessage(error);
    throw new RelayError(
      'invalid_tool_definition',
      `${subject} cannot be represented in JSON Schema (${reason}); models send JSON, so use JSON types, e.g. z.iso.datetime() for a date`,
      { cause: error, details: { toolName } },
    );
  }
  if (flagged.length > 0) {
    throw new RelayError(
      'invalid_tool_definition',
      `${subject} has regular expressions a run would check otherwise: ${flagged.join(', ')}. JSON Schema carries ` +
        'no flags, and a run reads each pattern without them, or with u where it holds \\p{…}, \\P{…} or \\u{…}; ' +
        'write the pattern so (e.g. [A-Za-z] instead of the i flag, the u flag with a Unicode escape)',
      { details: { toolName, patterns: flagged } },
    );
  }
  return converted;
}

function convert(schema: z.ZodType, flagged: string[], options: { closeIntersections: boolean }): JsonSchema {
  return z.toJSONSchema(schema, {
    io: 'input',
    override: ({ zodSchema, jsonSchema, path }) => {
      flagged.push(...patternsCheckedOtherwise(zodSchema, path));
      const inIntersection = path.includes('allOf');
      if (dropsUnnamedKeys(zodSchema) && (options.closeIntersections || !inIntersection)) {
        jsonSchema.additionalProperties = false;
      }
    },
  });
}

/** A `z.object` without a catchall: neither strict (`never`) nor loose (`unknown`), it strips what it does not name. */
function dropsUnnamedKeys(zodSchema: unknown): boolean {
  const { def } = (zodSchema as { _zod: { def: { type: string; catchall?: unknown } } })._zod;
  return def.type === 'object' && def.catchall === undefined;
}

function hasAllOf(value: unknown): boolean {
  if (typeof value !== 'object' || value === null) return false;
  if (!Array.isArray(value) && Object.hasOwn(value, 'allOf')) return true;
  return Object.values(value).some(hasAllOf);
}

/** Where a schema keeps its regular expressions: a string format's own pattern, and its checks'. */
interface PatternHolder {
  _zod: { def: { pattern?: unknown; checks?: Array<{ _zod: { def: { pattern?: unknown } } }> } };
}

/**
 * The regexes of one schema node that a run would check otherwise than the tool does: JSON Schema's `pattern` has no
 * flags, and the run compiles it without them, or in Unicode mode where it needs it (compile-tool-schema.ts). Each is
 * named with its place.
 */
function patternsCheckedOtherwise(zodSchema: unknown, path: ReadonlyArray<string | number>): string[] {
  const { pattern, checks = [] } = (zodSchema as PatternHolder)._zod.def;
  const patterns = [pattern, ...checks.map((check) => check._zod.def.pattern)];
  const at = path.length === 0 ? 'the top' : `/${path.join('/')}`;
  return patterns
    .filter((regex): regex is RegExp => regex instanceof RegExp && !checkedAlikeByRuns(regex))
    .map((regex) => `${String(regex)} at ${at}`);
}

/**
 * Whether a run tests as a regex does: a run reads its source in Unicode mode when that holds a Unicode-only escape
 * and compiles there (readsAsUnicode), else without flags. `g` and `d` change no test's answer; a `u` regex without
 * such an escape tests alike without it when its source compiles so. (Left alike: `.` and negated classes count a
 * character beyond U+FFFF as two without `u`.)
 */
function checkedAlikeByRuns(regex: RegExp): boolean {
  const flags = regex.flags.replace(/[gd]/g, '');
  if (flags === '') return !readsAsUnicode(regex.source);
  if (flags !== 'u') return false;
  if (readsAsUnicode(regex.source)) return true;
  try {
    new RegExp(regex.source);
    return true;
  } catch {
    return false;
  }
}

/**
 * Zod's conversion is most of what a catalog entry costs, and every run's first model call asks for the catalog, so
 * each input schema is converted once. The result is frozen, as it is shared by every entry made from it.
 */
const convertedSchemas = new WeakMap<z.ZodType, JsonSchema>();

function convertedInputSchema(tool: ToolDefinition): JsonSchema {
  let converted = convertedSchemas.get(tool.inputSchema);
  if (converted === undefined) {
    converted = deepFreeze(toJsonSchema(tool.inputSchema, tool.name));
    convertedSchemas.set(tool.inputSchema, converted);
  }
  return converted;
}

function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Describes a tool the way a run records it in history and shows it to the model. A pattern that backtracks too much
 * for a run to try (pattern-risks.ts) throws `RelayError('invalid_tool_definition')`: a registry refuses such a tool.
 */
export function toCatalogEntry(tool: ToolDefinition): ToolCatalogEntry {
  const entry: ToolCatalogEntry = {
    name: tool.name,
    description: tool.description,
    inputSchema: tool.inputJsonSchema ?? convertedInputSchema(tool),
    requiresApproval: tool.requiresApproval !== undefined && tool.requiresApproval !== false,
  };
  if (typeof tool.requiresApproval === 'function') entry.approvalByRule = true;
  if (tool.approvalTimeoutMs !== undefined) entry.approvalTimeoutMs = tool.approvalTimeoutMs;
  if (tool.approvers !== undefined) entry.approvers = [...tool.approvers];
  // The tool's own reminder; the worker's catalog snapshot keeps it only where it has an approval webhook.
  if (tool.remindApproversBeforeExpiryMs !== undefined) {
    entry.remindApproversBeforeMs = tool.remindApproversBeforeExpiryMs;
  }
  // One approval is what every call needs: the catalog records only a count above it.
  if (tool.approvalsRequired !== undefined && tool.approvalsRequired > 1) {
    entry.approvalsRequired = tool.approvalsRequired;
  }
  if (tool.timeoutMs !== undefined) entry.timeoutMs = tool.timeoutMs;
  if (tool.retry !== undefined) entry.retry = { ...tool.retry };
  if (tool.source !== undefined) entry.source = { ...tool.source };
  if (tool.annotations !== undefined) entry.annotations = { ...tool.annotations };
  if (takesInputAsGiven(tool)) entry.inputAsGiven = true;
  const { patternLengthLimits, patternsTriedByWorker } = patternRulesOf(tool, entry.inputSchema);
  if (patternLengthLimits !== undefined) entry.patternLengthLimits = { ...patternLengthLimits };
  if (patternsTriedByWorker !== undefined) entry.patternsTriedByWorker = [...patternsTriedByWorker];
  return entry;
}

function patternRulesOf(tool: ToolDefinition, inputSchema: JsonSchema): PatternRulesOfRun {
  const toolName = tool.name;
  try {
    return patternRules(inputSchema, { workerTries: triesPatternsWithTimeLimit(tool.inputSchema) });
  } catch (error) {
    throw new RelayError(
      'invalid_tool_definition',
      `The input schema of tool '${toolName}' cannot be checked in a run: ${errorMessage(error)}`,
      { cause: error, details: { toolName } },
    );
  }
}

/**
 * Whether a tool gets its input as the call gave it rather than as its check parsed it (an MCP server's tool: see
 * {@link ToolCatalogEntry.inputAsGiven}).
 */
export function takesInputAsGiven(tool: Pick<ToolDefinition, 'source'>): boolean {
  return tool.source?.kind === 'mcp';
}
