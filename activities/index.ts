import { createMemoryPayloadStore } from '../src/store/memory-payload-store.js';
import type { ActivityDependencies } from './activity-types.js';
import { createCallModel } from './call-model.js';
import { snapshotCatalog } from './catalog-snapshot.js';
import type { CatalogSources } from './catalog-snapshot.js';
import type { CatalogRequest, CatalogSnapshot } from '../src/shared/tool-catalog.js';
import { createCheckToolCallInput } from './check-tool-call-input.js';
import { createExecuteTool } from './execute-tool.js';
import { createNotifyApprovers } from './notify-approvers.js';

export type {
  ActivityDependencies,
  ExecuteToolInput,
  OwnModelCallQueue,
  Recorded,
  ToolCallInputCheck,
  ToolInputVerdict,
} from './activity-types.js';

/**
 * The activities of an agent run, bound to one worker's tools and model providers: each is built in a module of its
 * own (call-model.ts, execute-tool.ts, check-tool-call-input.ts, notify-approvers.ts, catalog-snapshot.ts).
 */
export function createActivities({
  registry,
  executor,
  models,
  secrets,
  approvalWebhooks,
  approvalReminderMs,
  modelCallQueue,
  ...options
}: ActivityDependencies) {
  const payloadStore = options.payloadStore ?? createMemoryPayloadStore();
  // A model context lost with a private store is sent again; a tool output would be lost.
  const keepsLargePayloads = options.keepLargePayloadsInStore ?? options.payloadStore !== undefined;
  const catalogSources: CatalogSources = { registry, executor, models, approvalWebhooks, approvalReminderMs };
  return {
    /**
     * Records the run's tool catalog ({@link snapshotCatalog}) in its history. Runs recorded before the rule
     * `catalog-in-first-model-call` ask it in an activity of their own; later runs get it with their first model call.
     */
    async snapshotToolCatalog(input: CatalogRequest & { model?: string }): Promise<CatalogSnapshot> {
      return snapshotCatalog(catalogSources, input);
    },

    checkToolCallInput: createCheckToolCallInput(registry),

    /** Tells the tenant's approvers that a call waits for them (see createNotifyApprovers). */
    notifyApprovers: createNotifyApprovers(approvalWebhooks),

    /** The worker's clock, recorded in the run's history: an event stamped with it reads the same on every replay. */
    async readClock(): Promise<{ at: string }> {
      return { at: new Date().toISOString() };
    },

    callModel: createCallModel({
      catalogSources,
      payloadStore,
      keepsLargePayloads,
      privateStore: options.payloadStore === undefined,
      maxModelResponseBytes: options.maxModelResponseBytes,
      modelCallQueue,
    }),

    executeTool: createExecuteTool({ executor, secrets, payloadStore, keepsLargePayloads }),
  };
}

export type RelayActivities = ReturnType<typeof createActivities>;
