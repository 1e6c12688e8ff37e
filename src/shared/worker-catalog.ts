import type { ToolCatalogEntry } from './tool-catalog.js';

/** What one running worker serves, as it announces itself on its task queue. */
export interface WorkerCatalogPublication {
  /** Unique per worker run, so two workers in one process are told apart. */
  workerId: string;
  tools: ToolCatalogEntry[];
  /** The model id prefixes the worker has providers for (`openai`, `scripted`, …). */
  modelPrefixes: string[];
  /** How often the worker announces itself again; absent from workers before they said (every 10 minutes). */
  refreshMs?: number;
}

/** What the workers of one task queue serve together: the union of their publications. */
export interface WorkerCatalog {
  tools: ToolCatalogEntry[];
  modelPrefixes: string[];
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

/** Merges publications: a tool offered by several workers appears once, as the latest publication describes it. */
export function mergeWorkerCatalogs(publications: readonly WorkerCatalogPublication[]): WorkerCatalog {
  const tools = new Map<string, ToolCatalogEntry>();
  const modelPrefixes = new Set<string>();
  for (const publication of publications) {
    for (const tool of publication.tools) tools.set(tool.name, tool);
    for (const prefix of publication.modelPrefixes) modelPrefixes.add(prefix);
  }
  return {
    tools: [...tools.values()],
    modelPrefixes: [...modelPrefixes].sort(),
    workers: publications.length,
    workerIds: publications.map((publication) => publication.workerId),
  };
}
