import type { ModelRegistry } from '../src/model/model-registry.js';
import { RelayError } from '../src/shared/errors.js';
import { modelToolSpecs } from '../src/shared/tool-catalog.js';
import type { CatalogRequest, CatalogSnapshot, RunRefusal, ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { ModelContextRequest, ModelRequest } from '../src/shared/transcript.js';
import { tenantReminderMs } from '../src/notify/approval-webhook.js';
import type { ActivityDependencies } from './activity-types.js';
import { toNonRetryableFailure } from './failures.js';

/** What a catalog snapshot is read from: the worker's tools, limits and models, and whether it notifies approvers. */
export type CatalogSources = Pick<
  ActivityDependencies,
  'registry' | 'executor' | 'models' | 'approvalWebhooks' | 'approvalReminderMs'
>;

/**
 * Reads the tools a run may use from this worker's registry (names, descriptions, JSON Schemas, approval flags), each
 * with the time limit the executor will apply, so the activity's own timeout can agree with it, and marked
 * `notifiesApprovers` when it requires approval and this worker has an approval webhook (with the reminder's lead
 * time, the tool's own or else the worker's, when there is one); or refuses a run naming a tool or a model the worker
 * lacks. A worker without a webhook refuses, when it starts, a tool that asks for reminders (relay-plugin.ts).
 */
export function snapshotCatalog(
  { registry, executor, models, approvalWebhooks, approvalReminderMs }: CatalogSources,
  input: CatalogRequest & { model?: string },
): CatalogSnapshot {
  const at = new Date().toISOString();
  try {
    const refused = input.model === undefined ? undefined : refuseUnservedModel(models, input.model);
    if (refused) return { refused, at };
    // The lead time of the tenant's webhook, when it sets one, over the worker's; a tool's own over both.
    const tenantMs =
      approvalWebhooks && input.tenantId !== undefined ? tenantReminderMs(approvalWebhooks, input.tenantId) : undefined;
    // A tool's own reminder is kept only where this worker sends notices: without them a run must not wait to remind.
    const entries = registry.catalog(input.tools).map(({ remindApproversBeforeMs, ...entry }) => ({
      ...entry,
      timeoutMs: executor.timeoutFor(entry.name),
      ...(approvalWebhooks && entry.requiresApproval
        ? approverNotices(remindApproversBeforeMs ?? tenantMs ?? approvalReminderMs)
        : {}),
    }));
    return { entries, at };
  } catch (error) {
    if (RelayError.isInstance(error) && error.code === 'unknown_tool') {
      const details = error.details ? { details: error.details } : {};
      return { refused: { code: 'unknown_tool', message: error.message, ...details }, at };
    }
    throw toNonRetryableFailure(error);
  }
}

function approverNotices(
  reminderMs: number | undefined,
): Pick<ToolCatalogEntry, 'notifiesApprovers' | 'remindApproversBeforeMs'> {
  return { notifiesApprovers: true, ...(reminderMs !== undefined ? { remindApproversBeforeMs: reminderMs } : {}) };
}

/**
 * What a run's first model call asks of the catalog (rule `catalog-in-first-model-call`), with its model to check,
 * and the request it came in.
 */
export function catalogAskedBy(
  request: ModelRequest | ModelContextRequest,
): { catalog: CatalogRequest & { model: string }; request: ModelContextRequest } | undefined {
  if (!('context' in request) || !('tools' in request.context) || !('catalog' in request.context.tools))
    return undefined;
  const { model, tenantId } = request;
  return { catalog: { ...request.context.tools.catalog, model, tenantId }, request };
}

/** The request with the catalog's tools in place of the question, as if the run had sent them whole. */
export function withCatalogTools(
  request: ModelContextRequest,
  entries: readonly ToolCatalogEntry[],
): ModelContextRequest {
  return { ...request, context: { ...request.context, tools: { specs: modelToolSpecs(entries) } } };
}

function refuseUnservedModel(models: ModelRegistry, modelId: string): RunRefusal | undefined {
  try {
    models.resolve(modelId);
    return undefined;
  } catch (error) {
    if (RelayError.isInstance(error) && error.code === 'model_not_configured') {
      return { code: 'model_not_configured', message: error.message };
    }
    throw error;
  }
}
