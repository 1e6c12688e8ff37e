import { condition, continueAsNew, defineSignal, setHandler, upsertMemo, workflowInfo } from '@temporalio/workflow';
import { mergeWorkerCatalogs, workerCatalogMemoKey } from '../src/shared/worker-catalog.js';
import type { WorkerCatalogPublication } from '../src/shared/worker-catalog.js';

/** A worker announces (or refreshes) what it serves. */
export const publishWorkerCatalogSignal = defineSignal<[WorkerCatalogPublication]>('publishWorkerCatalog');

/** A worker that stops takes its announcement back. */
export const withdrawWorkerCatalogSignal = defineSignal<[workerId: string]>('withdrawWorkerCatalog');

/**
 * Workers refresh their announcement this often; one not refreshed for three periods is taken for dead
 * (killed without withdrawing), so its tools stop counting.
 */
export const workerCatalogRefreshMs = 10 * 60_000;
export const workerCatalogStaleAfterMs = 3 * workerCatalogRefreshMs;

interface ReceivedPublication extends WorkerCatalogPublication {
  receivedAt: number;
}

/**
 * Keeps what the workers of one task queue serve in its memo, so clients and the API can refuse a run naming an
 * unknown tool or model before it starts, with a describe call that needs no worker. Ends once every worker has
 * withdrawn (or lapsed); the next worker to start begins it again.
 */
export async function relayWorkerCatalog(carried: ReceivedPublication[] = []): Promise<void> {
  const publications = new Map(carried.map((publication) => [publication.workerId, publication]));
  let changed = true;
  setHandler(publishWorkerCatalogSignal, (publication) => {
    publications.set(publication.workerId, { ...publication, receivedAt: Date.now() });
    changed = true;
  });
  setHandler(withdrawWorkerCatalogSignal, (workerId) => {
    if (publications.delete(workerId)) changed = true;
  });
  for (;;) {
    for (const [workerId, publication] of publications) {
      if (Date.now() - publication.receivedAt > workerCatalogStaleAfterMs) {
        publications.delete(workerId);
        changed = true;
      }
    }
    if (publications.size === 0) return;
    if (changed) {
      const lastAnnouncedAt = Math.max(...[...publications.values()].map((publication) => publication.receivedAt));
      upsertMemo({
        [workerCatalogMemoKey]: {
          ...mergeWorkerCatalogs([...publications.values()]),
          lastAnnouncedAt: new Date(lastAnnouncedAt).toISOString(),
        },
      });
      changed = false;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof relayWorkerCatalog>([...publications.values()]);
    }
    await condition(() => changed, workerCatalogRefreshMs);
  }
}
