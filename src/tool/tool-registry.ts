import { compileToolSchema } from '../shared/compile-tool-schema.js';
import { errorMessage } from '../shared/error-message.js';
import { RelayError } from '../shared/errors.js';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import type { ToolDefinition } from './define-tool.js';
import { toCatalogEntry } from './tool-catalog.js';

/** The tools a worker offers, by name, in the order they were registered. */
export class ToolRegistry {
  readonly #tools = new Map<string, ToolDefinition>();

  constructor(tools: Iterable<ToolDefinition> = []) {
    for (const tool of tools) this.register(tool);
  }

  /**
   * Adds a tool; a second tool with the same name throws `RelayError('duplicate_tool')` naming both origins, and one whose JSON Schema a
   * run could not check calls against throws `RelayError('invalid_tool_definition')`.
   */
  register(tool: ToolDefinition): this {
    const existing = this.#tools.get(tool.name);
    if (existing) {
      throw new RelayError(
        'duplicate_tool',
        `A tool named '${tool.name}' (${describeOrigin(tool)}) is already registered (${describeOrigin(existing)})`,
        { details: { toolName: tool.name } },
      );
    }
    checkRunsCanValidate(tool);
    this.#tools.set(tool.name, tool);
    return this;
  }

  /**
   * Swaps `previous` tools (by name) for `next` in one step, as a tool source does when its server's tool list
   * changes; a name clash throws `RelayError('duplicate_tool')` and leaves the registry as it was.
   */
  replace(previous: readonly string[], next: readonly ToolDefinition[]): this {
    const kept = new Map(this.#tools);
    for (const name of previous) kept.delete(name);
    const candidate = new ToolRegistry(kept.values());
    for (const tool of next) candidate.register(tool);
    this.#tools.clear();
    for (const tool of candidate.list()) this.#tools.set(tool.name, tool);
    return this;
  }

  /** Whether a tool with this name is registered. */
  has(name: string): boolean {
    return this.#tools.has(name);
  }

  /** The tool with this name, or `undefined`. */
  get(name: string): ToolDefinition | undefined {
    return this.#tools.get(name);
  }

  /** Every tool, in registration order. */
  list(): ToolDefinition[] {
    return [...this.#tools.values()];
  }

  /**
   * The catalog a run records: every tool, or only `names` in that order (repeats dropped). Unknown names
   * throw `RelayError('unknown_tool')` listing all of them, so a typo in a run's tool list fails at start.
   */
  catalog(names?: readonly string[]): ToolCatalogEntry[] {
    if (names === undefined) return this.list().map(toCatalogEntry);
    const entries: ToolCatalogEntry[] = [];
    const unknown: string[] = [];
    for (const name of new Set(names)) {
      const tool = this.#tools.get(name);
      if (tool) entries.push(toCatalogEntry(tool));
      else unknown.push(name);
    }
    if (unknown.length > 0) {
      throw new RelayError('unknown_tool', `Unknown tool(s): ${unknown.map((name) => `'${name}'`).join(', ')}`, {
        details: { names: unknown },
      });
    }
    return entries;
  }
}

function describeOrigin(tool: ToolDefinition): string {
  return tool.source ? `MCP server '${tool.source.server}', tool '${tool.source.tool}'` : 'a worker tool';
}

/** Creates a `ToolRegistry` holding `tools`. */
export function createToolRegistry(tools: Iterable<ToolDefinition> = []): ToolRegistry {
  return new ToolRegistry(tools);
}

/**
 * Runs check every call in the workflow against the catalog's JSON Schema: refuse a tool whose schema they cannot,
 * or whose patterns could keep that check from finishing (`toCatalogEntry` refuses those).
 */
function checkRunsCanValidate(tool: ToolDefinition): void {
  const entry = toCatalogEntry(tool);
  try {
    compileToolSchema(entry.inputSchema, entry);
  } catch (error) {
    throw new RelayError(
      'invalid_tool_definition',
      `The input schema of tool '${tool.name}' cannot be checked in a run: its JSON Schema does not compile (${errorMessage(error)})`,
      { cause: error, details: { toolName: tool.name } },
    );
  }
}
