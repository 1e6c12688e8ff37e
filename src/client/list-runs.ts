import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import { RelayError } from '../shared/errors.js';
import type { RunStatus } from '../shared/run-types.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { executionInfosOf, listExecutionPage } from './visibility-pages.js';
import type { RawExecution } from './visibility-pages.js';

export interface ListRunsOptions {
  /** The tenant whose runs to list; required, so no caller ever sees another tenant's runs. */
  tenantId: string;
  /** Only runs with this status. */
  status?: RunStatus;
  /** `true`: only runs with a tool call waiting for a human; `false`: only runs without one. */
  pendingApprovals?: boolean;
  /**
   * Only runs started on this task queue (one project's, when projects share a namespace); `null` lists every task
   * queue's runs.
   * @default the client's task queue, the one its `startRun` starts runs on
   */
  taskQueue?: string | null;
  /** How many runs a page holds at most (1 to 1,000). @default 20 */
  limit?: number;
  /** The `nextCursor` of the previous page, as it was returned: Temporal retries a page token it did not issue. */
  cursor?: string;
}

/** One run as Temporal visibility lists it: what its search attributes and memo say, without asking the run. */
export interface RunListing {
  runId: string;
  status: RunStatus;
  /** How many tool calls wait for a human (0 once the run has ended). */
  pendingApprovalCount: number;
  userId?: string;
  model?: string;
  /** The start of the prompt, as the run's memo keeps it. */
  prompt?: string;
  startedAt: string;
  closedAt?: string;
}

/** One page of runs; `nextCursor` is absent on the last page. */
export interface RunPage {
  runs: RunListing[];
  nextCursor?: string;
}

/** The status each filter means, in Temporal's terms: a closed run's own status wins over its last published one. */
const statusConditions: Readonly<Record<RunStatus, string>> = {
  running: `ExecutionStatus = 'Running' AND ${relaySearchAttributes.status.name} = 'running'`,
  awaiting_approval: `ExecutionStatus = 'Running' AND ${relaySearchAttributes.status.name} = 'awaiting_approval'`,
  completed: `ExecutionStatus = 'Completed'`,
  failed: `ExecutionStatus IN ('Failed', 'Terminated', 'TimedOut')`,
  cancelled: `ExecutionStatus = 'Canceled'`,
};

/**
 * The bytes a listed run is planned at, when the listing may hold closed runs: a closed run's memo carries its record
 * (up to 256 KiB of events as JSON, deflated), so this must exceed what a record at that cap deflates to, or a page's
 * first request can be too large for gRPC's message limit (see listExecutionPage).
 */
export const closedRunListingBytes = 96 * 1024;

/** The bytes a listed open run is planned at: its memo carries its waiting calls (up to 16 KiB) and prompt's start. */
export const openRunListingBytes = 24 * 1024;

/**
 * Lists one tenant's runs from Temporal visibility, a page at a time, in visibility's order: open runs newest
 * started first, then closed runs newest closed first (SQL visibility takes no `ORDER BY`). Visibility lags a
 * run by a moment. A page is read in as many requests as gRPC's message limit needs (closed runs' memos are large).
 * Without a `taskQueue` it lists every task queue's runs: `RelayClient.listRuns` gives its own unless told otherwise.
 */
export async function listRuns(temporal: Client, options: ListRunsOptions): Promise<RunPage> {
  const { limit = 20 } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) {
    throw new RelayError('invalid_input', `limit must be an integer from 1 to 1000, not ${limit}`);
  }
  const tenant = tenantRuns(options.tenantId);
  const openOnly =
    options.status === 'running' || options.status === 'awaiting_approval' || options.pendingApprovals === true;
  const page = await listExecutionPage(temporal, {
    query: runListingQuery(tenant.query, options),
    limit,
    ...(options.cursor !== undefined ? { nextPageToken: Buffer.from(options.cursor, 'base64url') } : {}),
    assumedExecutionBytes: openOnly ? openRunListingBytes : closedRunListingBytes,
    ...(tenant.keep ? { keep: tenant.keep } : {}),
  });
  const executions = await executionInfosOf(temporal, page.executions);
  return {
    runs: executions.map(toRunListing),
    ...(page.nextPageToken ? { nextCursor: Buffer.from(page.nextPageToken).toString('base64url') } : {}),
  };
}

/** What a listing of runs keeps of the runs its query finds (see {@link ListRunsOptions}). */
export type RunFilters = Pick<ListRunsOptions, 'status' | 'pendingApprovals' | 'taskQueue'>;

/**
 * The visibility query for the runs that `runs` finds (a query such as {@link tenantRuns}' or {@link agentRunsQuery})
 * and the filters keep, each run once: the executions a run continued as new from are left out.
 */
export function runListingQuery(runs: string, filters: RunFilters): string {
  const conditions = [runs, `ExecutionStatus != 'ContinuedAsNew'`];
  if (typeof filters.taskQueue === 'string') {
    conditions.push(`TaskQueue = ${visibilityQueryString(filters.taskQueue)}`);
  }
  if (filters.status !== undefined) conditions.push(statusConditions[filters.status]);
  if (filters.pendingApprovals !== undefined) conditions.push(pendingCondition(filters.pendingApprovals));
  return conditions.map((condition) => `(${condition})`).join(' AND ');
}

/** Every agent run, of every tenant. */
export const agentRunsQuery = `WorkflowType = 'agentRun'`;

/**
 * The characters Temporal's SQL visibility stores (SQLite, as in the dev server, and PostgreSQL) never match in a
 * query: the server escapes a query's string values the MySQL way (a double quote as backslash and quote, a backslash
 * as two, a newline as backslash and n, and so on for tab, carriage return and backspace), and those databases read
 * the backslashes as they are. Elasticsearch and MySQL match them.
 */
const unmatchedBySqlVisibility = new Set(['"', '\\', '\t', '\n', '\r', '\b']);

/**
 * How a listing finds one tenant's agent runs: a visibility query, and for a tenant id that a query cannot match
 * exactly on every visibility store, the check that keeps its own runs of those the query lists.
 */
export interface TenantRuns {
  query: string;
  keep?: (execution: RawExecution) => boolean;
}

/**
 * One tenant's agent runs, for any tenant id a run may have (the run input takes any 1 to 128 characters): its id
 * quoted into the query; or, for an id with a double quote, backslash, tab, newline, carriage return or backspace
 * ({@link unmatchedBySqlVisibility}), the runs whose tenant starts with the part before it (every agent run when
 * that part is empty), each then checked for the whole id.
 */
export function tenantRuns(tenantId: string): TenantRuns {
  const tenant = relaySearchAttributes.tenant.name;
  // Each of those characters is one UTF-16 unit, never half of a surrogate pair.
  const unmatched = tenantId.split('').findIndex((char) => unmatchedBySqlVisibility.has(char));
  if (unmatched < 0) return { query: `${agentRunsQuery} AND ${tenant} = ${visibilityQueryString(tenantId)}` };
  const prefix = tenantId.slice(0, unmatched);
  return {
    query: prefix ? `${agentRunsQuery} AND ${tenant} STARTS_WITH ${visibilityQueryString(prefix)}` : agentRunsQuery,
    keep: (execution) => tenantOf(execution) === tenantId,
  };
}

/** The tenant a listed run's search attributes name (they are plain JSON, never encoded by a codec). */
function tenantOf(execution: RawExecution): unknown {
  const payload = execution.searchAttributes?.indexedFields?.[relaySearchAttributes.tenant.name];
  if (!payload) return undefined;
  try {
    return defaultPayloadConverter.fromPayload(payload);
  } catch {
    return undefined;
  }
}

/**
 * A string literal for a Temporal visibility query (which has no bind parameters): single-quoted, with each backslash
 * and single quote escaped by a backslash, as Temporal's query parser reads them; every other character stands as it
 * is.
 */
export function visibilityQueryString(value: string): string {
  return `'${value.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`;
}

function pendingCondition(pending: boolean): string {
  const name = relaySearchAttributes.pendingApprovals.name;
  return pending ? `ExecutionStatus = 'Running' AND ${name} > 0` : `ExecutionStatus != 'Running' OR ${name} = 0`;
}

/** A listed run as visibility shows it: a closed run's status is Temporal's, whatever it last published. */
export function toRunListing(execution: WorkflowExecutionInfo): RunListing {
  const attributes = execution.typedSearchAttributes;
  const open = execution.status.name === 'RUNNING';
  const memo = execution.memo ?? {};
  const userId = attributes.get(relaySearchAttributes.user);
  return {
    runId: execution.workflowId,
    status: open ? openStatus(attributes.get(relaySearchAttributes.status)) : closedStatus(execution.status.name),
    pendingApprovalCount: open ? (attributes.get(relaySearchAttributes.pendingApprovals) ?? 0) : 0,
    ...(userId !== undefined ? { userId } : {}),
    ...(typeof memo['model'] === 'string' ? { model: memo['model'] } : {}),
    ...(typeof memo['prompt'] === 'string' ? { prompt: memo['prompt'] } : {}),
    startedAt: execution.startTime.toISOString(),
    ...(execution.closeTime ? { closedAt: execution.closeTime.toISOString() } : {}),
  };
}

function openStatus(published: string | undefined): RunStatus {
  return published === 'awaiting_approval' ? 'awaiting_approval' : 'running';
}

/** A closed run's status from Temporal's: only a completed or cancelled workflow did not fail. */
export function closedStatus(status: WorkflowExecutionInfo['status']['name']): RunStatus {
  if (status === 'COMPLETED') return 'completed';
  if (status === 'CANCELLED') return 'cancelled';
  return 'failed';
}
