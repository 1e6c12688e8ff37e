import type { Client, WorkflowExecutionInfo } from '@temporalio/client';
import { executionInfoFromRaw } from '@temporalio/client/lib/helpers.js';
import { RelayError } from '../shared/errors.js';
import { tenantIdPattern } from '../shared/run-ids.js';
import type { RunStatus } from '../shared/run-types.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';

export interface ListRunsOptions {
  /** The tenant whose runs to list; required, so no caller ever sees another tenant's runs. */
  tenantId: string;
  /** Only runs with this status. */
  status?: RunStatus;
  /** `true`: only runs with a tool call waiting for a human; `false`: only runs without one. */
  pendingApprovals?: boolean;
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
 * Lists one tenant's runs from Temporal visibility, a page at a time, in visibility's order: open runs newest
 * started first, then closed runs newest closed first (SQL visibility takes no `ORDER BY`). Visibility lags a
 * run by a moment.
 */
export async function listRuns(temporal: Client, options: ListRunsOptions): Promise<RunPage> {
  const { limit = 20 } = options;
  if (!Number.isInteger(limit) || limit < 1 || limit > 1_000) {
    throw new RelayError('invalid_input', `limit must be an integer from 1 to 1000, not ${limit}`);
  }
  const conditions = [tenantRunsQuery(options.tenantId), `ExecutionStatus != 'ContinuedAsNew'`];
  if (options.status !== undefined) conditions.push(statusConditions[options.status]);
  if (options.pendingApprovals !== undefined) conditions.push(pendingCondition(options.pendingApprovals));
  const namespace = temporal.options.namespace;
  const response = await temporal.workflowService.listWorkflowExecutions({
    namespace,
    query: conditions.map((condition) => `(${condition})`).join(' AND '),
    pageSize: limit,
    nextPageToken: options.cursor !== undefined ? Buffer.from(options.cursor, 'base64url') : null,
  });
  const executions = await Promise.all(
    response.executions.map((raw) => executionInfoFromRaw(raw, temporal.options.loadedDataConverter, raw, namespace)),
  );
  const token = response.nextPageToken;
  return {
    runs: executions.map(toRunListing),
    ...(token && token.length > 0 ? { nextCursor: Buffer.from(token).toString('base64url') } : {}),
  };
}

/** The visibility query for one tenant's agent runs; tenant ids outside a quote-free alphabet are refused. */
export function tenantRunsQuery(tenantId: string): string {
  // Visibility queries have no bind parameters; a tenant id that could close the string literal is refused.
  if (!tenantIdPattern.test(tenantId)) {
    throw new RelayError('invalid_input', `Tenant id '${tenantId}' cannot be used in a visibility query`);
  }
  return `WorkflowType = 'agentRun' AND ${relaySearchAttributes.tenant.name} = '${tenantId}'`;
}

function pendingCondition(pending: boolean): string {
  const name = relaySearchAttributes.pendingApprovals.name;
  return pending ? `ExecutionStatus = 'Running' AND ${name} > 0` : `ExecutionStatus != 'Running' OR ${name} = 0`;
}

function toRunListing(execution: WorkflowExecutionInfo): RunListing {
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

function closedStatus(status: WorkflowExecutionInfo['status']['name']): RunStatus {
  if (status === 'COMPLETED') return 'completed';
  if (status === 'CANCELLED') return 'cancelled';
  return 'failed';
}
