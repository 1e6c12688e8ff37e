import type { Client, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import type { agentRun } from '../../workflows/agent-run.js';
import { RelayError } from '../shared/errors.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { isNoRecentPoller, noWorkerPollsWhy } from './ask-while-workers-poll.js';
import { grpcMessageOf } from './grpc-message.js';
import { isWorkflowNotFound } from './is-workflow-not-found.js';
import type { TenantScope } from './relay-client.js';

/** What the client's modules reach a run through: the Temporal client and the task queue its workers poll. */
export interface RunAccess {
  readonly temporal: Client;
  readonly taskQueue: string;
}

/** The run's workflow handle, typed by the workflow it runs. */
export function runHandle(access: RunAccess, runId: string): WorkflowHandle<typeof agentRun> {
  return access.temporal.workflow.getHandle<typeof agentRun>(runId);
}

/**
 * Runs a Temporal call, turning "no such workflow" into `run_not_found` and a run whose workflow task is
 * failing into `run_unavailable` (after the tenant check, so another tenant still sees `run_not_found`).
 */
export async function callRun<T>(
  access: RunAccess,
  runId: string,
  call: () => Promise<T>,
  scope: TenantScope = {},
): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (isWorkflowNotFound(error)) throw runNotFound(runId, error);
    const why = whyRunCannotAnswer(error, access.taskQueue);
    if (why !== undefined) {
      await checkTenant(access, runId, scope);
      throw new RelayError('run_unavailable', `Run '${runId}' cannot answer right now: ${why}`, { cause: error });
    }
    throw error;
  }
}

/** Refuses a run of another tenant as `run_not_found` (see {@link describeInScope}). */
export async function checkTenant(access: RunAccess, runId: string, scope: TenantScope): Promise<void> {
  if (scope.tenantId !== undefined) await describeInScope(access, runId, scope);
}

/**
 * The run's description from the server, or `run_not_found` when it belongs to another tenant than the scope's.
 * The tenant comes from its search attribute rather than from the run, which may be waiting for a worker.
 */
export async function describeInScope(
  access: RunAccess,
  runId: string,
  scope: TenantScope,
): Promise<WorkflowExecutionDescription> {
  const description = await callRun(access, runId, () => runHandle(access, runId).describe());
  const tenant = description.typedSearchAttributes.get(relaySearchAttributes.tenant);
  if (scope.tenantId !== undefined && tenant !== scope.tenantId) throw runNotFound(runId);
  return description;
}

/** The error a missing run, and another tenant's, is reported with. */
export function runNotFound(runId: string, cause?: unknown): RelayError {
  return new RelayError('run_not_found', `Run '${runId}' not found`, cause === undefined ? undefined : { cause });
}

/** Whether Temporal refused a call because the run's last workflow task failed or timed out. */
export function isWorkflowTaskFailing(error: unknown): boolean {
  return /Workflow Task in failed state/i.test(grpcMessageOf(error));
}

/**
 * Why Temporal could not get an answer from the run, when the reason is that no worker could give one: its
 * workflow task is failing (a worker died holding it, or the code fails), or no worker took the query at all.
 */
function whyRunCannotAnswer(error: unknown, taskQueue: string): string | undefined {
  if (isWorkflowTaskFailing(error)) {
    return (
      'its last workflow task failed or timed out (a worker died or is failing it) and no worker has completed ' +
      "one since. Try again shortly; if this lasts, the workflow task failures in the run's history say why."
    );
  }
  if (/query timed out before a worker could process it/i.test(grpcMessageOf(error))) {
    return `no worker answered in time. Is a Relay-E worker running on task queue '${taskQueue}'?`;
  }
  if (isNoRecentPoller(error)) return noWorkerPollsWhy(taskQueue);
  return undefined;
}
