import type { ToolDefinition } from '../tool/define-tool.js';
import { ToolRegistry } from '../tool/tool-registry.js';

/** Where a worker's tools come from: `defineTool` definitions, or a ready registry. */
export interface ToolSourceOptions {
  /** The tools runs on this worker may call; give this or `registry`. */
  tools?: readonly ToolDefinition[];
  registry?: ToolRegistry;
}

/** A worker's tools, ready to serve, and how to release what they hold once the worker stops. */
export interface ResolvedToolRegistry {
  registry: ToolRegistry;
  close(): Promise<void>;
}

/**
 * Turns a worker's tool list into the registry its activities serve: the one place that does it, for `createWorker`
 * and the plugin alike, so a tool source that must connect first (and close after) is handled once.
 */
export async function resolveToolRegistry(options: ToolSourceOptions): Promise<ResolvedToolRegistry> {
  const registry = options.registry ?? new ToolRegistry(options.tools ?? []);
  return { registry, close: async () => {} };
}
