import { ApplicationFailure, proxyActivities, proxyLocalActivities } from '@temporalio/workflow';
import type { RelayActivities } from '../activities/index.js';
import { modelToolSpecs } from '../src/shared/tool-catalog.js';
import type { CatalogSnapshot, RunRefusal, ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { ModelContextTools } from '../src/shared/transcript.js';
import { defaultMaxTranscriptBytes, transcriptBytes } from '../src/shared/transcript-budget.js';
import type { RunContext } from './run-context.js';
import { publishRunState, publishStartedRunState } from './run-visibility.js';
import { ToolCallValidator } from './tool-call-validator.js';

// Both activities are short, so a worker that dies holding one costs seconds, not a long timeout.
const catalogActivityOptions = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 5 } } as const;
const { snapshotToolCatalog } = proxyActivities<RelayActivities>(catalogActivityOptions);
// The worker's own registry answers, so a local activity on the worker running the workflow does the job without a
// round trip through the task queue.
const { snapshotToolCatalog: snapshotToolCatalogLocally } =
  proxyLocalActivities<RelayActivities>(catalogActivityOptions);

/**
 * Starts a new run (not a continuation): under the rule `catalog-in-first-model-call` only publishes its state, and
 * its first model call brings the catalog ({@link receiveCatalog}), which saves the run a workflow activation. Runs
 * recorded before it, and a run whose input transcript is over its budget (so that its compaction is recorded after
 * `run_started`, as the run's every other event), snapshot the catalog in an activity of its own first.
 */
export async function startRun(context: RunContext): Promise<void> {
  const { run } = context;
  const maxBytes = run.input.maxTranscriptBytes ?? defaultMaxTranscriptBytes;
  if (context.patches.catalogInFirstModelCall() && transcriptBytes(run.transcript) <= maxBytes) {
    context.awaitsCatalog = true;
    publishStartedRunState(context);
    return;
  }
  const { tools, model, tenantId } = run.input;
  const catalogRequest = { ...(tools ? { tools } : {}), model, tenantId };
  const snapshot = readCatalogSnapshot(
    await (context.patches.catalogAsLocalActivity()
      ? snapshotToolCatalogLocally(catalogRequest)
      : snapshotToolCatalog(catalogRequest)),
  );
  if (snapshot.refused) throw new RunRefused(snapshot.refused, snapshot.at);
  recordStart(context, snapshot.entries, snapshot.at);
  publishStartedRunState(context);
}

/** Workers before the snapshot carried its time returned the bare list; their recorded results replay as such. */
function readCatalogSnapshot(
  result: CatalogSnapshot | ToolCatalogEntry[],
): { entries: ToolCatalogEntry[]; at?: string; refused?: undefined } | { refused: RunRefusal; at: string } {
  return Array.isArray(result) ? { entries: result } : result;
}

/** The tools a model call sends with a whole context: the run's catalog, or the question for it on its first call. */
export function modelContextTools(context: RunContext): ModelContextTools {
  const { run } = context;
  if (context.awaitsCatalog) return { catalog: run.input.tools ? { tools: run.input.tools } : {} };
  return { specs: modelToolSpecs(run.catalog) };
}

/**
 * Takes the catalog from the answer to the run's first model call, and records `run_started` (stamped with the time
 * the worker read the catalog, before the model answered) ahead of the answer; a refusal ends the run.
 */
export function receiveCatalog<T extends { catalog?: CatalogSnapshot }>(
  context: RunContext,
  turn: T,
): Omit<T, 'catalog'> {
  // Every step passes here: only the first answer carries a catalog, so the others are not copied.
  if (!turn.catalog) return turn;
  const { catalog, ...response } = turn;
  if (catalog.refused) throw new RunRefused(catalog.refused, catalog.at);
  context.awaitsCatalog = false;
  recordStart(context, catalog.entries, catalog.at);
  return response;
}

function recordStart(context: RunContext, catalog: ToolCatalogEntry[], at: string | undefined): void {
  const { run } = context;
  run.catalog = catalog;
  context.validator = new ToolCallValidator(catalog, context.patches);
  const tools = catalog.map((tool) => tool.name);
  run.emit({ type: 'run_started', model: run.input.model, maxSteps: run.maxSteps, tools }, { at, step: 0 });
}

/** The worker lacks a tool or the model the run names: the run ends before it starts, with one event. */
export class RunRefused extends Error {
  constructor(
    readonly refusal: RunRefusal,
    readonly at: string,
  ) {
    super(refusal.message);
  }
}

/** Records a refused run's end (at the time the worker refused it) and returns the failure that ends the workflow. */
export function recordRefusal(context: RunContext, { refusal, at }: RunRefused): ApplicationFailure {
  const { run } = context;
  run.finish('failed', 'error', { error: refusal.message });
  run.emit({ type: 'run_failed', error: refusal.message, code: refusal.code }, { at });
  publishRunState(context);
  return ApplicationFailure.create({
    type: refusal.code,
    message: refusal.message,
    nonRetryable: true,
    ...(refusal.details ? { details: [refusal.details] } : {}),
  });
}
