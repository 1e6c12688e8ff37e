import { z } from 'zod';
import { checkToolInput } from '../src/shared/tool-input.js';
import type { ToolInputIssue } from '../src/shared/tool-input.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';

export type ToolCallCheck =
  | { valid: true; entry: ToolCatalogEntry; input: unknown }
  | { valid: false; errorType: 'validation' | 'not_found'; error: string; issues: ToolInputIssue[] };

/**
 * Checks proposed tool calls against the run's catalog snapshot, deterministically, inside the workflow.
 * Schemas are rebuilt from JSON Schema once per run and tool, on first use, so a run that never calls a tool
 * never pays for its schema.
 */
export class ToolCallValidator {
  private readonly entries: ReadonlyMap<string, ToolCatalogEntry>;
  private readonly schemas = new Map<string, z.ZodType>();

  constructor(catalog: readonly ToolCatalogEntry[]) {
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
    const result = checkToolInput(this.schemaFor(entry), rawInput);
    if (!result.success) return { valid: false, errorType: 'validation', error: result.message, issues: result.issues };
    return { valid: true, entry, input: result.data };
  }

  private schemaFor(entry: ToolCatalogEntry): z.ZodType {
    let schema = this.schemas.get(entry.name);
    if (!schema) {
      schema = buildSchema(entry);
      this.schemas.set(entry.name, schema);
    }
    return schema;
  }
}

/**
 * A JSON Schema the converter cannot read is accepted as-is here: the executor validates again with the
 * tool's own Zod schema before `execute`, so nothing unchecked reaches a tool.
 */
function buildSchema(entry: ToolCatalogEntry): z.ZodType {
  try {
    return z.fromJSONSchema(entry.inputSchema);
  } catch {
    return z.unknown();
  }
}
