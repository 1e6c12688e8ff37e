import { isGrpcServiceError } from '@temporalio/client';
import type { Client, WorkflowExecutionInfo, WorkflowService } from '@temporalio/client';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers.js';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';

/** One execution as visibility lists it, its memo and search attributes not yet decoded. */
export type RawExecution = temporal.api.workflow.v1.IWorkflowExecutionInfo;

/** gRPC status RESOURCE_EXHAUSTED: what gRPC answers for a message over its size limit (4 MiB by default). */
const grpcResourceExhausted = 8;

/**
 * The bytes one page read from Temporal aims at, well under gRPC's 4 MiB message limit, which `@temporalio/client`'s
 * connections keep (their 128 MB setting uses a channel argument name gRPC ignores).
 */
export const grpcPageBudgetBytes = 3 * 1024 * 1024;

/** The most executions one visibility request asks for (the server's own cap on a page). */
const maxVisibilityPageSize = 1_000;

/** True for gRPC's refusal of a message over its size limit (not for a server's rate limit, the same status). */
export function isMessageTooLarge(error: unknown): boolean {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return [error, cause].some(
    (candidate) =>
      isGrpcServiceError(candidate) &&
      Number(candidate.code) === grpcResourceExhausted &&
      /larger than max/i.test(candidate.message),
  );
}

/** What lists executions: a `Client`. */
export interface VisibilitySource {
  workflowService: WorkflowService;
  options: { namespace: string };
}

/** Which executions {@link listExecutionPage} reads. */
export interface ListExecutionPageOptions {
  /** A visibility query. */
  query: string;
  /** The most executions the page holds. */
  limit: number;
  /** Where the page starts: the `nextPageToken` of the page before it. */
  nextPageToken?: Uint8Array;
  /** The bytes planned for each execution before any is seen: the largest the listed executions are expected to be. */
  assumedExecutionBytes: number;
  /** Which of the executions the query lists the page holds (all when absent), for what a query cannot say. */
  keep?: (execution: RawExecution) => boolean;
}

/** Up to `limit` executions in visibility's order; `nextPageToken` is absent on the last page. */
export interface ExecutionPage {
  executions: RawExecution[];
  nextPageToken?: Uint8Array;
}

/**
 * One page of executions, read in requests small enough for gRPC's message limit: each execution carries its memo
 * (a closed run's record among it), so a page of 1,000 executions can be far over 4 MiB. Each request asks for as
 * many executions as the budget holds at the largest execution size assumed or seen so far, and continues where the
 * request before it ended (visibility's page tokens name the last execution read, not a page size), so the page holds
 * the same executions in the same order as one request for all of them would. A request refused for its size all the
 * same is asked again with half as many executions, down to one, after the client's own retries of it, which take
 * tens of seconds. With `keep`, a request that finds more executions to keep than the page has room for is asked
 * again to end at the last one it needs, so that the page's token resumes right after it.
 */
export async function listExecutionPage(
  temporal: VisibilitySource,
  options: ListExecutionPageOptions,
): Promise<ExecutionPage> {
  const { query, limit, keep } = options;
  const executions: RawExecution[] = [];
  let nextPageToken = options.nextPageToken;
  let executionBytes = Math.max(1, options.assumedExecutionBytes);
  let maxPageSize = maxVisibilityPageSize;
  /** The size of a request asked again to end at the last execution the page needs. */
  let exactPageSize: number | undefined;
  while (executions.length < limit) {
    const remaining = limit - executions.length;
    const planned = Math.floor(grpcPageBudgetBytes / executionBytes);
    // Without `keep` every execution listed is kept, so a request asks for no more than the page still needs.
    const pageSize = exactPageSize ?? Math.max(1, Math.min(keep ? maxPageSize : remaining, maxPageSize, planned));
    let response: temporal.api.workflowservice.v1.IListWorkflowExecutionsResponse;
    try {
      response = await temporal.workflowService.listWorkflowExecutions({
        namespace: temporal.options.namespace,
        query,
        pageSize,
        nextPageToken: nextPageToken ?? null,
      });
    } catch (error) {
      if (!isMessageTooLarge(error) || pageSize === 1) throw error;
      maxPageSize = Math.floor(pageSize / 2);
      exactPageSize = undefined;
      continue;
    }
    const received = response.executions ?? [];
    for (const execution of received) executionBytes = Math.max(executionBytes, encodedBytes(execution));
    const kept = keep ? received.filter(keep) : received;
    const lastNeeded = kept[remaining - 1];
    if (kept.length > remaining && lastNeeded !== undefined && exactPageSize === undefined) {
      exactPageSize = received.indexOf(lastNeeded) + 1;
      continue;
    }
    exactPageSize = undefined;
    executions.push(...kept.slice(0, remaining));
    nextPageToken = response.nextPageToken?.length ? response.nextPageToken : undefined;
    if (nextPageToken === undefined || received.length === 0) break;
  }
  return { executions, ...(nextPageToken !== undefined ? { nextPageToken } : {}) };
}

/** Listed executions as the SDK describes them, their memos decoded with the client's data converter. */
export function executionInfosOf(temporal: Client, executions: RawExecution[]): Promise<WorkflowExecutionInfo[]> {
  const { loadedDataConverter, namespace } = temporal.options;
  return Promise.all(executions.map((raw) => executionInfoFromRaw(raw, loadedDataConverter, raw, namespace)));
}

function encodedBytes(execution: RawExecution): number {
  return proto.temporal.api.workflow.v1.WorkflowExecutionInfo.encode(execution).finish().byteLength;
}
