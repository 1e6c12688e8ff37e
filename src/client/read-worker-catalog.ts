import type { Client, WorkflowExecutionDescription } from '@temporalio/client';
import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { workerCatalogMemoKey, workerCatalogWorkflowId } from '../shared/worker-catalog.js';
import type { WorkerCatalog } from '../shared/worker-catalog.js';
import {
  publishWorkerCatalogSignal,
  withdrawWorkerCatalogSignal,
  legacyWorkerStaleAfterMs,
} from '../../workflows/worker-catalog.js';
import { isWorkflowNotFound } from './is-workflow-not-found.js';

/** History events read per page, newest first, while looking for withdrawals no workflow task has applied. */
const pageSize = 100;

/**
 * What the workers of `taskQueue` serve, from their catalog workflow's memo: `undefined` when none has announced
 * itself, or when every worker in the catalog has withdrawn or lapsed. Withdrawals and lapses are applied by the
 * catalog workflow in a workflow task, which only a worker runs: after the last worker stopped, its withdrawal waits
 * in history with no one to apply it, and a killed worker's announcement ages with no one to lapse it, so the reader
 * applies both here.
 */
export async function readWorkerCatalog(client: Client, taskQueue: string): Promise<WorkerCatalog | undefined> {
  const workflowId = workerCatalogWorkflowId(taskQueue);
  let description: WorkflowExecutionDescription;
  try {
    description = await client.workflow.getHandle(workflowId).describe();
  } catch (error) {
    if (isWorkflowNotFound(error)) return undefined;
    throw error;
  }
  const catalog = description.memo?.[workerCatalogMemoKey] as WorkerCatalog | undefined;
  if (description.status.name !== 'RUNNING' || catalog === undefined || catalog.workers === 0) return undefined;
  if (
    catalog.lastAnnouncedAt !== undefined &&
    Date.now() - Date.parse(catalog.lastAnnouncedAt) > (catalog.lapseAfterMs ?? legacyWorkerStaleAfterMs)
  ) {
    return undefined;
  }
  // Only signals a workflow task has not taken yet can differ from the memo; workers take them within moments.
  if (!description.raw.pendingWorkflowTask || catalog.workerIds === undefined) return catalog;
  const pending = await signalsNotYetApplied(client, workflowId);
  const everyWorkerWithdrew = catalog.workerIds.every((workerId) => pending.withdrawn.has(workerId));
  return everyWorkerWithdrew && !pending.announced ? undefined : catalog;
}

/** The catalog signals received since the last completed workflow task: who withdrew, and whether anyone announced. */
async function signalsNotYetApplied(
  client: Client,
  workflowId: string,
): Promise<{ withdrawn: Set<string>; announced: boolean }> {
  const pending = { withdrawn: new Set<string>(), announced: false };
  let nextPageToken: Uint8Array | undefined;
  do {
    const page = await client.workflowService.getWorkflowExecutionHistoryReverse({
      namespace: client.options.namespace,
      execution: { workflowId },
      maximumPageSize: pageSize,
      ...(nextPageToken ? { nextPageToken } : {}),
    });
    for (const event of page.history?.events ?? []) {
      if (event.workflowTaskCompletedEventAttributes) return pending;
      const signal = event.workflowExecutionSignaledEventAttributes;
      if (signal?.signalName === publishWorkerCatalogSignal.name) pending.announced = true;
      if (signal?.signalName === withdrawWorkerCatalogSignal.name) {
        const workerId = await decodeFromPayloadsAtIndex<unknown>(
          client.options.loadedDataConverter,
          0,
          signal.input?.payloads ?? [],
        );
        if (typeof workerId === 'string') pending.withdrawn.add(workerId);
      }
    }
    nextPageToken = page.nextPageToken ?? undefined;
  } while (nextPageToken && nextPageToken.length > 0);
  return pending;
}
