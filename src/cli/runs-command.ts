import type { WorkflowExecutionInfo } from '@temporalio/client';
import {
  agentRunsQuery,
  closedRunListingBytes,
  runListingQuery,
  tenantRuns,
  toRunListing,
} from '../client/list-runs.js';
import type { RunListing, TenantRuns } from '../client/list-runs.js';
import { grpcPageBudgetBytes } from '../client/visibility-pages.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import type { RunStatus } from '../shared/run-types.js';
import { exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { runConnectionOptions, parseCommandFlags, scopedConnectionOptionsHelp } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { formatTable } from './format-table.js';
import { readPositiveInteger } from './run-command.js';
import { connectRelayClient, readRunCommandSettings } from './temporal-settings.js';

const runStatuses: readonly RunStatus[] = ['running', 'awaiting_approval', 'completed', 'failed', 'cancelled'];

const runsOptions = {
  ...runConnectionOptions,
  status: { type: 'string' },
  limit: { type: 'string' },
} as const;

/** One line of `relay-e runs`: a run as `GET /v1/runs` lists it, with its tenant, since it lists every tenant's. */
export interface TenantRunListing extends RunListing {
  tenantId?: string;
}

const defaultLimit = 20;
const cli = cliInvocation();

export const runsCommand: Command = {
  name: 'runs',
  summary: commandSummaries.runs,
  help: `Usage: ${cli} runs [--status STATUS] [--tenant ID] [--limit N] [--json]

Lists the newest runs first (by start time) of the project's task queue (--task-queue, else the config's),
read from Temporal visibility. Without --tenant (or RELAY_E_TENANT), runs of every tenant are listed.
A run Temporal ended without its code running (terminated, timed out) is listed as failed.
With --json: the runs as GET /v1/runs lists them, each with its tenantId.

Options:
  --status STATUS        ${runStatuses.join(' | ')}
  --limit N              at most N runs (default ${defaultLimit})

${scopedConnectionOptionsHelp}`,
  async run(argv) {
    const { values } = parseCommandFlags('runs', argv, runsOptions);
    const status = values.status === undefined ? undefined : readStatus(values.status);
    const limit = values.limit === undefined ? defaultLimit : readPositiveInteger('--limit', values.limit);
    const settings = await readRunCommandSettings(values);
    const tenant = settings.tenantGiven ? tenantRuns(settings.tenantId) : undefined;
    const query = runListingQuery(tenant?.query ?? agentRunsQuery, { status, taskQueue: settings.taskQueue });
    const client = await connectRelayClient(settings);
    try {
      // Pages sized for gRPC's message limit: a closed run's memo carries its record.
      const pageSize = Math.floor(grpcPageBudgetBytes / closedRunListingBytes);
      const listed = client.temporal.workflow.list({ query, pageSize });
      const runs = (await newestStarted(ofTenant(listed, tenant), limit)).map(withTenant);
      process.stdout.write(values.json ? `${JSON.stringify(runs)}\n` : formatRuns(runs));
      return exitCodes.ok;
    } finally {
      await client.close();
    }
  },
};

function readStatus(text: string): RunStatus {
  const status = runStatuses.find((candidate) => candidate === text);
  if (status === undefined) throw usageError(`--status must be one of ${runStatuses.join(', ')}`);
  return status;
}

/**
 * The `limit` executions started last. Visibility lists open executions first, then closed ones by close time,
 * newest first; an execution closes after it starts, so once a closed one closed before the `limit`-th newest
 * start seen so far, no later one can have started after it and the listing stops there.
 */
export async function newestStarted(
  executions: AsyncIterable<WorkflowExecutionInfo>,
  limit: number,
): Promise<WorkflowExecutionInfo[]> {
  const newest: WorkflowExecutionInfo[] = [];
  for await (const execution of executions) {
    const cutoff = newest.length >= limit ? newest[limit - 1]?.startTime : undefined;
    if (cutoff !== undefined && execution.closeTime !== undefined && execution.closeTime < cutoff) break;
    newest.push(execution);
    newest.sort((a, b) => b.startTime.getTime() - a.startTime.getTime());
    newest.length = Math.min(newest.length, limit);
  }
  return newest;
}

function withTenant(execution: WorkflowExecutionInfo): TenantRunListing {
  const tenantId = execution.typedSearchAttributes.get(relaySearchAttributes.tenant);
  return { ...toRunListing(execution), ...(tenantId !== undefined ? { tenantId } : {}) };
}

/** The listed executions the tenant's check keeps, for a tenant id a query cannot match exactly (see tenantRuns). */
async function* ofTenant(
  executions: AsyncIterable<WorkflowExecutionInfo>,
  tenant: TenantRuns | undefined,
): AsyncIterable<WorkflowExecutionInfo> {
  for await (const execution of executions) if (!tenant?.keep || tenant.keep(execution.raw)) yield execution;
}

/** The table `relay-e runs` prints. */
function formatRuns(runs: readonly TenantRunListing[]): string {
  if (runs.length === 0) return 'No runs.\n';
  const rows = runs.map((run) => [
    run.runId,
    run.status,
    String(run.pendingApprovalCount),
    run.tenantId ?? '',
    run.startedAt.replace('T', ' ').slice(0, 19),
    run.prompt ?? '',
  ]);
  return formatTable(['RUN', 'STATUS', 'PENDING', 'TENANT', 'STARTED (UTC)', 'PROMPT'], rows);
}
