import {
  condition,
  continueAsNew,
  defineSignal,
  log,
  patched,
  setHandler,
  upsertMemo,
  workflowInfo,
} from '@temporalio/workflow';
import { mergeWorkerCatalogs, workerCatalogMemoKey } from '../src/shared/worker-catalog.js';
import type { WorkerCatalogPublication } from '../src/shared/worker-catalog.js';
import { describeFailure } from './describe-failure.js';

/** A worker announces (or refreshes) what it serves. */
export const publishWorkerCatalogSignal = defineSignal<[WorkerCatalogPublication]>('publishWorkerCatalog');

/** A worker that stops takes its announcement back. */
export const withdrawWorkerCatalogSignal = defineSignal<[workerId: string]>('withdrawWorkerCatalog');

/**
 * How many of its refresh periods an announcement may miss before it is taken for dead (a worker killed without
 * withdrawing), so its tools stop counting.
 */
const missedPeriodsToLapse = 3;

/**
 * How often workers announced before they said so themselves. Catalogs recorded before the lapse-by-announced-period
 * patch wake and lapse by it alone, and so does an announcement that names no period.
 */
const legacyWorkerRefreshMs = 10 * 60_000;
export const legacyWorkerStaleAfterMs = missedPeriodsToLapse * legacyWorkerRefreshMs;

/** How often today's workers announce themselves (`refreshMs` in each announcement). */
export const workerCatalogRefreshMs = 60_000;

/**
 * Each announcement lapses after three of the periods it says it refreshes in, and the workflow wakes as often as
 * the most frequent of them, so a killed worker's tools stop counting within minutes, not half an hour.
 */
const lapseByAnnouncedPeriodPatch = 'lapse-by-announced-period';

interface ReceivedPublication extends WorkerCatalogPublication {
  receivedAt: number;
}

/**
 * Keeps what the workers of one task queue serve in its memo, so clients and the API can refuse a run naming an
 * unknown tool or model before it starts, with a describe call that needs no worker. Ends once every worker has
 * withdrawn (or lapsed); the next worker to start begins it again.
 */
export async function relayWorkerCatalog(carried: ReceivedPublication[] = []): Promise<void> {
  const byAnnouncedPeriod = patched(lapseByAnnouncedPeriodPatch);
  const refreshOf = (publication: WorkerCatalogPublication) =>
    (byAnnouncedPeriod ? publication.refreshMs : undefined) ?? legacyWorkerRefreshMs;
  const publications = new Map(carried.map((publication) => [publication.workerId, publication]));
  let changed = true;
  setHandler(publishWorkerCatalogSignal, (publication) => {
    if (!canJoinCatalog(publication)) return;
    publications.set(publication.workerId, { ...publication, receivedAt: Date.now() });
    changed = true;
  });
  setHandler(withdrawWorkerCatalogSignal, (workerId) => {
    if (publications.delete(workerId)) changed = true;
  });
  for (;;) {
    for (const [workerId, publication] of publications) {
      if (Date.now() - publication.receivedAt > missedPeriodsToLapse * refreshOf(publication)) {
        publications.delete(workerId);
        changed = true;
      }
    }
    if (publications.size === 0) return;
    if (changed) {
      const lastAnnouncedAt = Math.max(...[...publications.values()].map((publication) => publication.receivedAt));
      const periods = [...publications.values()].map(refreshOf);
      upsertMemo({
        [workerCatalogMemoKey]: {
          ...mergeWorkerCatalogs([...publications.values()]),
          lastAnnouncedAt: new Date(lastAnnouncedAt).toISOString(),
          ...(byAnnouncedPeriod ? { lapseAfterMs: missedPeriodsToLapse * Math.max(...periods) } : {}),
        },
      });
      changed = false;
    }
    if (workflowInfo().continueAsNewSuggested) {
      await continueAsNew<typeof relayWorkerCatalog>([...publications.values()]);
    }
    const wakeEveryMs = byAnnouncedPeriod
      ? Math.min(...[...publications.values()].map(refreshOf))
      : legacyWorkerRefreshMs;
    await condition(() => changed, wakeEveryMs);
  }
}

/**
 * Whether an announcement can be merged into the catalog. One that cannot (a raw signal of `null`, a tool list that
 * is not one) would fail every workflow task after it, and the catalog would stop taking announcements and withdrawals:
 * it is left out, with a warning in the worker's log. Announcements that merge are taken as they always were.
 */
function canJoinCatalog(publication: WorkerCatalogPublication): boolean {
  try {
    mergeWorkerCatalogs([publication]);
    return true;
  } catch (error) {
    log.warn('Ignored a worker catalog announcement that cannot be read', { error: describeFailure(error) });
    return false;
  }
}
