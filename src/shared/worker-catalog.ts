import type { ToolCatalogEntry } from './tool-catalog.js';

/** A tool a source lists that the worker cannot offer (its schema cannot be checked in a run), and why. */
export interface LeftOutCatalogTool {
  /** The name runs would call it by, had it been offered (`<prefix>_<tool>` for an MCP server's). */
  name: string;
  /** The source's name (an MCP server's `name`). */
  source: string;
  /** The tool's name as the source lists it. */
  tool: string;
  /** Why it cannot be offered. */
  reason: string;
}

/** What one running worker serves, as it announces itself on its task queue. */
export interface WorkerCatalogPublication {
  /** Unique per worker run, so two workers in one process are told apart. */
  workerId: string;
  tools: ToolCatalogEntry[];
  /** Tools its sources list that it left out; absent when none, and from workers before this field. */
  leftOut?: LeftOutCatalogTool[];
  /** The model id prefixes the worker has providers for (`openai`, `scripted`, …). */
  modelPrefixes: string[];
  /** How often the worker announces itself again; absent from workers before they said (every 10 minutes). */
  refreshMs?: number;
}

/** What the workers of one task queue serve together: the union of their publications. */
export interface WorkerCatalog {
  tools: ToolCatalogEntry[];
  modelPrefixes: string[];
  /** Tools a worker left out that no worker serves under their name; absent when none. */
  leftOut?: LeftOutCatalogTool[];
  /** How many workers the catalog was merged from. */
  workers: number;
  /**
   * The ids of those workers, so a reader can tell when every one of them has withdrawn; absent in catalogs written
   * by workers before this field.
   */
  workerIds?: string[];
  /**
   * When the newest of those announcements arrived; once it is older than the lapse (three refresh periods), every
   * worker in the catalog has lapsed, whether or not a worker was left to apply it. Absent in catalogs written by
   * workers before this field.
   */
  lastAnnouncedAt?: string;
  /**
   * How long after `lastAnnouncedAt` every worker in the catalog has lapsed: three of the longest refresh period
   * among them. Absent in catalogs written before workers said how often they announce (30 minutes then).
   */
  lapseAfterMs?: number;
}

/** The memo key under which the catalog workflow keeps the merged catalog, readable without a worker. */
export const workerCatalogMemoKey = 'relayWorkerCatalog';

/** The id of the workflow that keeps a task queue's catalog: one per task queue and namespace. */
export function workerCatalogWorkflowId(taskQueue: string): string {
  return `relay-e-worker-catalog:${taskQueue}`;
}

/**
 * Merges publications: a tool offered by several workers appears once, as the latest publication describes it, and a
 * tool left out appears only where no worker serves it. A catalog without left-out tools is as it always was.
 */
export function mergeWorkerCatalogs(publications: readonly WorkerCatalogPublication[]): WorkerCatalog {
  const tools = new Map<string, ToolCatalogEntry>();
  const leftOut = new Map<string, LeftOutCatalogTool>();
  const modelPrefixes = new Set<string>();
  for (const publication of publications) {
    for (const tool of publication.tools) tools.set(tool.name, tool);
    for (const tool of publication.leftOut ?? []) leftOut.set(tool.name, tool);
    for (const prefix of publication.modelPrefixes) modelPrefixes.add(prefix);
  }
  const unserved = [...leftOut.values()].filter((tool) => !tools.has(tool.name));
  return {
    tools: [...tools.values()],
    ...(unserved.length > 0 ? { leftOut: unserved } : {}),
    modelPrefixes: [...modelPrefixes].sort(),
    workers: publications.length,
    workerIds: publications.map((publication) => publication.workerId),
  };
}
