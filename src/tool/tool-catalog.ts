import { z } from 'zod';
import { RelayError } from '../shared/errors.js';
import type { JsonSchema, ToolCatalogEntry } from '../shared/tool-catalog.js';
import type { ToolDefinition } from './define-tool.js';

/**
 * Converts a tool's input schema to the JSON Schema models are shown (`z.toJSONSchema` with `io: 'input'`, so
 * defaults are optional and transforms show what they accept). Types JSON cannot carry, such as `z.date()`,
 * `z.bigint()` or a bare `z.transform()`, throw `RelayError('invalid_tool_definition')` instead of turning into
 * `{}`, which would let the model send anything; `toolName` names the tool in that error.
 */
export function toJsonSchema(schema: z.ZodType, toolName?: string): JsonSchema {
  try {
    return z.toJSONSchema(schema, { io: 'input' });
  } catch (error) {
    const subject = toolName === undefined ? 'An input schema' : `The input schema of tool '${toolName}'`;
    const reason = error instanceof Error ? error.message : String(error);
    throw new RelayError(
      'invalid_tool_definition',
      `${subject} cannot be represented in JSON Schema (${reason}); models send JSON, so use JSON types, e.g. z.iso.datetime() for a date`,
      { cause: error, details: { toolName } },
    );
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

/** Describes a tool the way a run records it in history and shows it to the model. */
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
  return entry;
}
