import type { Client } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type { temporal } from '@temporalio/proto';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import { readHistoryPages } from './read-history.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

const catalogActivityType = 'snapshotToolCatalog';
/** Runs under the rule `catalog-in-first-model-call` record the catalog in their first model call's result. */
const modelActivityType = 'callModel';

/** History events read per page while looking for the catalog, which a run records within its first few events. */
const pageSize = 50;

/**
 * The tool catalog a run snapshotted (names, descriptions, JSON Schemas), read from its history with the client's
 * data converter, so no worker is needed: the carried state of a run that continued as new, else the result of
 * its catalog activity (local or regular) or of its first model call. Empty when the run has not recorded one yet.
 */
export async function readToolCatalog(client: Client, runId: string): Promise<ToolCatalogEntry[]> {
  const converter = client.options.loadedDataConverter;
  const catalogActivities = new Map<string, boolean>();
  for await (const page of readHistoryPages(client, runId, { maxPageSize: pageSize })) {
    for (const event of page) {
      const payloads = catalogPayloads(event, catalogActivities) ?? (await localCatalogPayloads(client, event));
      if (payloads === undefined) continue;
      const decoded = await decodeFromPayloadsAtIndex<unknown>(converter, payloads.index, payloads.payloads);
      // The carried state and a model call's result hold it as `catalog`; a catalog activity's result is it.
      const catalog = payloads.catalogField ? (decoded as { catalog?: unknown } | undefined)?.catalog : decoded;
      // Workers record `{ entries, at }`; workers before that recorded the bare list.
      const entries = Array.isArray(catalog) ? catalog : (catalog as { entries?: unknown } | undefined)?.entries;
      if (Array.isArray(entries)) return entries as ToolCatalogEntry[];
    }
  }
  return [];
}

interface CatalogPayloads {
  payloads: temporal.api.common.v1.IPayload[];
  index: number;
  /** The decoded payload holds the catalog in its `catalog` field rather than being it. */
  catalogField: boolean;
}

/**
 * Where in this event the catalog may be, if anywhere; remembers the activities it sees scheduled that may record it
 * (by scheduled event id: whether each is a model call).
 */
function catalogPayloads(event: HistoryEvent, catalogActivities: Map<string, boolean>): CatalogPayloads | undefined {
  const started = event.workflowExecutionStartedEventAttributes;
  if (started && (started.input?.payloads?.length ?? 0) > 1) {
    return { payloads: started.input?.payloads ?? [], index: 1, catalogField: true };
  }
  const type = event.activityTaskScheduledEventAttributes?.activityType?.name;
  if (type === catalogActivityType || type === modelActivityType) {
    catalogActivities.set(String(event.eventId), type === modelActivityType);
  }
  const completed = event.activityTaskCompletedEventAttributes;
  const isModelCall = completed ? catalogActivities.get(String(completed.scheduledEventId)) : undefined;
  if (completed && isModelCall !== undefined) {
    return { payloads: completed.result?.payloads ?? [], index: 0, catalogField: isModelCall };
  }
  return undefined;
}

/** The result of a local catalog activity, recorded as a marker whose data (decoded like any payload) names it. */
async function localCatalogPayloads(client: Client, event: HistoryEvent): Promise<CatalogPayloads | undefined> {
  const details = event.markerRecordedEventAttributes?.details;
  const data = details?.['data']?.payloads;
  if (!data?.length) return undefined;
  const marker = await decodeFromPayloadsAtIndex<unknown>(client.options.loadedDataConverter, 0, data).catch(
    () => undefined,
  );
  if ((marker as { activity_type?: unknown } | undefined)?.activity_type !== catalogActivityType) return undefined;
  return { payloads: details?.['result']?.payloads ?? [], index: 0, catalogField: false };
}
