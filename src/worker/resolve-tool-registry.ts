import type { SecretSource } from '../security/resolve-secret-references.js';
import { RelayError } from '../shared/errors.js';
import type { ToolRegistry } from '../tool/tool-registry.js';
import { loadToolSources } from '../tool/tool-source.js';
import type { LoadedTools, ToolEntry } from '../tool/tool-source.js';

/** Where a worker's tools come from: `defineTool` tools and tool sources (`mcpTools(…)`), or a ready registry. */
export interface ToolSourceOptions {
  /**
   * The tools runs on this worker may call: `defineTool` tools and tool sources in any mix. Sources are opened (MCP
   * servers connected and listed) before the worker starts and closed when it stops. Give this or `registry`, not
   * both (both are refused with `RelayError('invalid_input')`).
   */
  tools?: readonly ToolEntry[];
  registry?: ToolRegistry;
  /** What `{ "$secret": NAME }` resolves to; tool sources use it for the secret references in their settings. */
  secrets?: SecretSource;
}

/**
 * Turns a worker's tool list into the registry its activities serve: the one place that does it, for `createWorker`
 * and the plugin alike, so a tool source that must connect first (and close after) is handled once.
 */
export async function resolveToolRegistry(options: ToolSourceOptions): Promise<LoadedTools> {
  refuseRegistryWithTools(options);
  // A registry given whole has no sources that could change it.
  if (options.registry) {
    return {
      registry: options.registry,
      onChange: () => () => undefined,
      leftOut: () => [],
      close: async () => undefined,
    };
  }
  return loadToolSources(options.tools ?? [], options.secrets ? { secrets: options.secrets } : {});
}

/** A worker serves one of the two: the tools (and MCP servers) of a list given beside a registry would go unserved. */
function refuseRegistryWithTools({ registry, tools }: ToolSourceOptions): void {
  if (registry === undefined || tools === undefined) return;
  throw new RelayError(
    'invalid_input',
    'Give a worker either `registry` or `tools`, not both: a registry is served as it is, so the `tools` list (and any tool source in it) would be ignored',
  );
}
