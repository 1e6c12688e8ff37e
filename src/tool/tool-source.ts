import type { SecretSource } from '../security/resolve-secret-references.js';
import type { ToolDefinition } from './define-tool.js';
import type { Logger } from './tool-context.js';
import { defaultLogger } from './tool-context.js';
import { ToolRegistry } from './tool-registry.js';
import type { LeftOutCatalogTool } from '../shared/worker-catalog.js';

/** What a tool source is given when a worker opens it. */
export interface ToolSourceContext {
  /**
   * Called with the source's whole new tool list whenever it changes (an MCP server's `list_changed`), and the tools
   * it now leaves out.
   */
  onToolsChanged(tools: readonly ToolDefinition[], leftOut?: readonly LeftOutTool[]): void;
  /** What `{ "$secret": "NAME" }` in the source's own settings resolves to, per call and tenant. */
  secrets?: SecretSource;
  logger: Logger;
}

/** A source's tools while it is open. */
export interface OpenToolSource {
  tools: readonly ToolDefinition[];
  /** The tools it lists that it cannot offer (an MCP tool whose JSON Schema cannot be read), each with why. */
  leftOut?: readonly LeftOutTool[];
  /** Closes the source's connections; its tools must not be called afterwards. */
  close(): Promise<void>;
}

/** A tool a source lists but cannot offer: it is not in the registry, and the source's other tools are. */
export type LeftOutTool = Readonly<LeftOutCatalogTool>;

/** Tools that come from outside the worker's code (an MCP server): opened at worker start, closed at shutdown. */
export interface ToolSource {
  readonly kind: 'tool-source';
  /** Names the source in errors and logs. */
  readonly name: string;
  /**
   * Whether a tool of the source, now or once its list changes, may ask for its approvers to be reminded before a
   * call's wait expires: a worker without an approval webhook refuses such a source before opening it.
   * @default false
   */
  readonly remindsApprovers?: boolean;
  open(context: ToolSourceContext): Promise<OpenToolSource>;
}

/** What a worker's `tools` option holds: its own tools and tool sources, in any mix. */
export type ToolEntry = ToolDefinition | ToolSource;

/** Options of {@link loadToolSources}. */
export interface LoadToolSourcesOptions {
  /** Passed to every source for the secret references in its settings. */
  secrets?: SecretSource;
  /** @default the default logger (JSON lines on stderr) */
  logger?: Logger;
}

/** The registry a worker runs with, kept current as sources' tool lists change, and what closes the sources. */
export interface LoadedTools {
  registry: ToolRegistry;
  /** Calls `listener` after a source's tools changed in the registry; returns what stops it. */
  onChange(listener: () => void): () => void;
  /** The tools the sources list now but cannot offer, each with why. */
  leftOut(): LeftOutTool[];
  close(): Promise<void>;
}

/** True for a tool source (as opposed to a `defineTool` tool). */
export function isToolSource(entry: ToolEntry): entry is ToolSource {
  return (entry as Partial<ToolSource>).kind === 'tool-source';
}

/**
 * Turns a tools list (tools and tool sources mixed) into one registry: opens every source, registers its tools
 * beside the others, and swaps a source's tools when it announces a change. A name clash at start throws
 * `RelayError('duplicate_tool')` after closing what was opened; a clash on a later change keeps the source's
 * previous tools and logs an error.
 */
export async function loadToolSources(
  tools: readonly ToolEntry[],
  options: LoadToolSourcesOptions = {},
): Promise<LoadedTools> {
  const logger = options.logger ?? defaultLogger;
  const registry = new ToolRegistry(tools.filter((entry): entry is ToolDefinition => !isToolSource(entry)));
  const opened: OpenedSource[] = [];
  const listeners = new Set<() => void>();
  const close = () => closeSources(opened, logger);
  const changed = () => {
    for (const listener of listeners) listener();
  };
  try {
    for (const source of tools.filter(isToolSource)) {
      opened.push({ name: source.name, ...(await openSource(source, registry, { ...options, logger }, changed)) });
    }
  } catch (error) {
    await close();
    throw error;
  }
  const onChange = (listener: () => void) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
  return { registry, onChange, leftOut: () => opened.flatMap((source) => source.leftOut?.() ?? []), close };
}

interface OpenedSource {
  name: string;
  open: OpenToolSource;
  /** What the source leaves out now. */
  leftOut?: () => LeftOutTool[];
}

/**
 * Opens one source and registers its tools. Each later change replaces them in the registry and calls `changed`; a
 * list that clashes with another tool keeps the previous one and is logged.
 */
async function openSource(
  source: ToolSource,
  registry: ToolRegistry,
  { logger, secrets }: LoadToolSourcesOptions & { logger: Logger },
  changed: () => void,
): Promise<{ open: OpenToolSource; leftOut: () => LeftOutTool[] }> {
  let current: readonly string[] = [];
  let leftOut: readonly LeftOutTool[] = [];
  let started = false;
  let early: Parameters<ToolSourceContext['onToolsChanged']> | undefined;
  const onToolsChanged = (next: readonly ToolDefinition[], nextLeftOut: readonly LeftOutTool[] = []) => {
    if (!started) {
      early = [next, nextLeftOut];
      return;
    }
    try {
      registry.replace(current, next);
      current = next.map((tool) => tool.name);
      leftOut = nextLeftOut;
      logger.info('Tool source changed its tools', { source: source.name, tools: current });
      changed();
    } catch (error) {
      logger.error('Kept the previous tools of a tool source: its new list clashes', { source: source.name, error });
    }
  };
  const open = await source.open({ onToolsChanged, logger, ...(secrets ? { secrets } : {}) });
  await registerOrClose(source.name, open, registry, logger);
  current = open.tools.map((tool) => tool.name);
  leftOut = open.leftOut ?? [];
  started = true;
  // A change announced while the source was still opening is applied now rather than lost.
  if (early) onToolsChanged(...early);
  return { open, leftOut: () => [...leftOut] };
}

/**
 * Registers the tools of a source just opened. A list that clashes closes the source before the error is thrown: the
 * caller never gets its handle to close, and its server (a child process) would keep the worker's start from exiting.
 */
async function registerOrClose(
  name: string,
  open: OpenToolSource,
  registry: ToolRegistry,
  logger: Logger,
): Promise<void> {
  try {
    registry.replace([], open.tools);
  } catch (error) {
    await closeSources([{ name, open }], logger);
    throw error;
  }
}

/** Closes every source even when one fails to close; a failure is logged, not kept from the operator. */
async function closeSources(opened: readonly OpenedSource[], logger: Logger): Promise<void> {
  const closings = await Promise.allSettled(opened.map(({ open }) => open.close()));
  closings.forEach((closing, index) => {
    if (closing.status === 'fulfilled') return;
    logger.error('Could not close a tool source', { source: opened[index]?.name, error: closing.reason });
  });
}
