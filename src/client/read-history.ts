import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import type { Client, WorkflowService } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { grpcPageBudgetBytes, isMessageTooLarge } from './visibility-pages.js';

type HistoryEvent = temporal.api.history.v1.IHistoryEvent;

/** The most history events one page asks for. */
const maxHistoryPageSize = 1_000;

/** How many times the average event a page's largest events may be, when its size is planned from the average. */
const eventSizeSpread = 4;

/** What reads a history: a `Client`, or a handle's `client`. */
export interface HistorySource {
  workflowService: WorkflowService;
  options: { namespace: string };
}

/** Which history to read. */
export interface ReadHistoryOptions {
  /** One execution of the run; @default the newest */
  executionRunId?: string;
  /** The most events a page asks for, for a reader that needs only the first few. @default maxHistoryPageSize */
  maxPageSize?: number;
}

/**
 * A run's history events, page by page, in pages small enough for gRPC's message limit. The page size comes from the
 * history's size and length (a run at the payload limits has events of 1 MiB and more, which the server's default
 * page of 1,000 events cannot carry); a page refused for its size all the same (its large events bunched together)
 * is asked for again with half as many events, down to one, after the client's own retries of it, which take tens
 * of seconds. The client's `fetchHistory()` asks for the server's default page size.
 */
export async function* readHistoryPages(
  client: HistorySource,
  runId: string,
  options: ReadHistoryOptions = {},
): AsyncGenerator<HistoryEvent[]> {
  const execution = { workflowId: runId, ...(options.executionRunId ? { runId: options.executionRunId } : {}) };
  let pageSize = Math.min(options.maxPageSize ?? maxHistoryPageSize, await plannedPageSize(client, execution));
  let nextPageToken: Uint8Array | undefined;
  for (;;) {
    let page: temporal.api.workflowservice.v1.IGetWorkflowExecutionHistoryResponse;
    try {
      page = await client.workflowService.getWorkflowExecutionHistory({
        namespace: client.options.namespace,
        execution,
        maximumPageSize: pageSize,
        ...(nextPageToken ? { nextPageToken } : {}),
      });
    } catch (error) {
      if (!isMessageTooLarge(error) || pageSize === 1) throw error;
      pageSize = Math.max(1, Math.floor(pageSize / 2));
      continue;
    }
    yield page.history?.events ?? [];
    if (!page.nextPageToken?.length) return;
    nextPageToken = page.nextPageToken;
  }
}

/** A page size whose pages stay within the budget even when their events are a few times the average. */
async function plannedPageSize(
  client: HistorySource,
  execution: temporal.api.common.v1.IWorkflowExecution,
): Promise<number> {
  const { workflowExecutionInfo: info } = await client.workflowService.describeWorkflowExecution({
    namespace: client.options.namespace,
    execution,
  });
  const bytes = Number(info?.historySizeBytes ?? 0);
  const length = Number(info?.historyLength ?? 0);
  if (bytes <= grpcPageBudgetBytes || length === 0) return maxHistoryPageSize;
  const planned = Math.floor((grpcPageBudgetBytes * length) / (bytes * eventSizeSpread));
  return Math.min(maxHistoryPageSize, Math.max(1, planned));
}

/** A run's whole history (the events `handle.fetchHistory()` gives), read with {@link readHistoryPages}. */
export async function readHistory(
  client: HistorySource,
  runId: string,
  options: ReadHistoryOptions = {},
): Promise<temporal.api.history.v1.IHistory> {
  const events: HistoryEvent[] = [];
  for await (const page of readHistoryPages(client, runId, options)) events.push(...page);
  return { events };
}

/** The first argument a workflow was started with, from its history's first event, decoded with the client's converter. */
export async function readStartInput<T>(client: Client, workflowId: string): Promise<T> {
  for await (const page of readHistoryPages(client, workflowId, { maxPageSize: 1 })) {
    const payloads = page[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
    return decodeFromPayloadsAtIndex<T>(client.options.loadedDataConverter, 0, payloads);
  }
  throw new Error(`Workflow '${workflowId}' has no history`);
}
