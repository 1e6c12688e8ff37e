import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { isGrpcServiceError } from '@temporalio/client';
import { defaultMaxSteps } from '../shared/run-types.js';
import type { AgentRunInput, RunSnapshot } from '../shared/run-types.js';
import { closedStatus } from './list-runs.js';
import { readStartInput } from './read-history.js';

/** gRPC FAILED_PRECONDITION, as the server refuses a query to a run that closed before any workflow task. */
const failedPrecondition = 9;

/** Whether a query failed because the run closed before a workflow task ran: no worker will ever answer it. */
export function closedBeforeItRan(error: unknown): boolean {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  return [error, cause].some(
    (each) =>
      isGrpcServiceError(each) &&
      Number(each.code) === failedPrecondition &&
      /closed before WorkflowTaskStarted/i.test(each.message),
  );
}

/**
 * The snapshot of a closed run that left no record and that no worker answers for (it closed before a workflow task
 * ran, or none is up): its status as `listRuns` tells it, and its input from its history's first event. How far it
 * got cannot be told without a worker, so it shows no step and no usage, and its error says why.
 */
export async function snapshotFromDescription(
  temporal: Client,
  description: WorkflowExecutionDescription,
): Promise<RunSnapshot> {
  const input = await readStartInput<AgentRunInput>(temporal, description.workflowId);
  const status = closedStatus(description.status.name);
  return {
    runId: description.workflowId,
    tenantId: input.tenantId,
    ...(input.userId !== undefined ? { userId: input.userId } : {}),
    ...(input.sessionId !== undefined ? { sessionId: input.sessionId } : {}),
    model: input.model,
    status,
    ...(status === 'failed' ? { stopReason: 'error' as const } : {}),
    step: 0,
    maxSteps: input.maxSteps ?? defaultMaxSteps,
    pendingApprovals: [],
    usage: { inputTokens: 0, outputTokens: 0 },
    ...(status === 'failed' ? { error: whyItFailed(description) } : {}),
    startedAt: description.startTime.toISOString(),
    updatedAt: (description.closeTime ?? description.startTime).toISOString(),
    lastEventSeq: 0,
  };
}

function whyItFailed(description: WorkflowExecutionDescription): string {
  const how = { TERMINATED: 'terminated', TIMED_OUT: 'timed out' }[description.status.name as string] ?? 'failed';
  return `Temporal ${how} the run; no worker answered for it, so its steps and usage are not shown`;
}
