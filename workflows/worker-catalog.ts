import {
  condition,
  continueAsNew,
  defineSignal,
  log,
  patched,
  setHandler,
  sleep,
  upsertMemo,
} from '@temporalio/workflow';
import { mergeWorkerCatalogs, workerCatalogMemoKey } from '../src/shared/worker-catalog.js';
import type { WorkerCatalogPublication } from '../src/shared/worker-catalog.js';
import { describeFailure } from './describe-failure.js';
import { suggestionAsRecorded, suggestionOfTheTask } from './continue-as-new-suggestion.js';

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
 * Each announcement lapses by a timer of its own, three of its periods after the task that took it, unless its worker
 * announces again; Temporal's suggestion to continue as new is read as the workflow read it live
 * ({@link suggestionAsRecorded}). Neither then depends on the clock or the suggestion of the task that applies a
 * signal or a timer, which a query answered by replay on a worker without the workflow cached could apply under the
 * previous task's (a lapse decided live by one clock and on replay by another, and replay failed); and each
 * announcement's commands are its handler's own (the memo written where each change is made, no timer cancelled), so
 * announcements such a query splits from the rest of their task replay as they ran. Catalogs recorded before it lapse announcements by the clock of the tasks that wake them.
 */
const lapseByTimerPatch = 'lapse-by-timer';

/**
 * Keeps what the workers of one task queue serve in its memo, so clients and the API can refuse a run naming an
 * unknown tool or model before it starts, with a describe call that needs no worker. Ends once every worker has
 * withdrawn (or lapsed); the next worker to start begins it again.
 */
export async function relayWorkerCatalog(carried: ReceivedPublication[] = []): Promise<void> {
  if (patched(lapseByTimerPatch)) return keepCatalogByTimers(carried);
  return keepCatalogByClock(carried, patched(lapseByAnnouncedPeriodPatch));
}

/** How long after it arrived an announcement lapses: three of the periods its worker said it announces in. */
function lapseOf(publication: WorkerCatalogPublication): number {
  return missedPeriodsToLapse * (publication.refreshMs ?? legacyWorkerRefreshMs);
}

/**
 * The catalog under {@link lapseByTimerPatch}: each announcement with the timer that lapses it. The memo is written
 * where each change is made, not once per wake, so a task's commands follow its events one by one whether a worker
 * applies them in one activation or, split by a query it answered, in two.
 */
async function keepCatalogByTimers(carried: readonly ReceivedPublication[]): Promise<void> {
  const catalog: LapsingPublications = new LapsingPublications(() => writeCatalogMemo(catalog));
  // The first task of an execution is never one a query's replay applies ahead, so its clock is replay's too.
  const startedAt = Date.now();
  for (const publication of carried) {
    const lapseInMs = publication.receivedAt + lapseOf(publication) - startedAt;
    if (lapseInMs > 0) catalog.take(publication, lapseInMs);
  }
  writeCatalogMemo(catalog);
  setHandler(publishWorkerCatalogSignal, (publication) => {
    if (!canJoinCatalog(publication, true)) return;
    // Its time of receipt dates the memo and, carried, the next execution's lapse; nothing in this execution reads it.
    catalog.take({ ...publication, receivedAt: Date.now() }, lapseOf(publication));
    writeCatalogMemo(catalog);
  });
  setHandler(withdrawWorkerCatalogSignal, (workerId) => {
    if (catalog.withdraw(workerId)) writeCatalogMemo(catalog);
  });
  for (;;) {
    await condition(() => catalog.changed);
    catalog.changed = false;
    if (catalog.list().length === 0) return;
    if (suggestionAsRecorded()) {
      await continueAsNew<typeof relayWorkerCatalog>(catalog.list());
    }
  }
}

/** Writes the catalog's memo, unless no announcement is left: the workflow then ends, and its memo is moot. */
function writeCatalogMemo(catalog: LapsingPublications): void {
  const publications = catalog.list();
  if (publications.length > 0) upsertMemo({ [workerCatalogMemoKey]: catalogMemo(publications, lapseOf) });
}

/**
 * The announcements in a catalog, each with the timer that lapses it unless its worker announces again. A timer is
 * never cancelled: a newer announcement or a withdrawal leaves it to fire for nothing. A cancellation's command comes
 * a microtask after the signal's own, so a task's commands would follow the order its signals were grouped in, which
 * a query answered by replay can change (see {@link lapseByTimerPatch}); a timer started is a command of the signal's.
 */
class LapsingPublications {
  /** Whether an announcement came, went or lapsed since the workflow last looked; true at first, to look. */
  changed = true;
  private readonly byWorker = new Map<string, ReceivedPublication>();
  /** The lapse each worker's newest announcement waits for; an older one that fires finds another here. */
  private readonly lapses = new Map<string, object>();

  /** `onLapse` runs as each announcement lapses, after it is removed. */
  constructor(private readonly onLapse: () => void) {}

  list(): ReceivedPublication[] {
    return [...this.byWorker.values()];
  }

  /** Takes an announcement, and lapses it `lapseInMs` from now unless its worker announces again or withdraws. */
  take(publication: ReceivedPublication, lapseInMs: number): void {
    const { workerId } = publication;
    this.byWorker.set(workerId, publication);
    const lapse = {};
    this.lapses.set(workerId, lapse);
    sleep(Math.ceil(lapseInMs)).then(
      () => {
        if (this.lapses.get(workerId) !== lapse) return;
        this.remove(workerId);
        this.onLapse();
      },
      () => undefined, // the catalog itself was cancelled
    );
    this.changed = true;
  }

  /** Removes a worker's announcement, whose lapse then fires for nothing; false when it holds none. */
  withdraw(workerId: string): boolean {
    if (!this.byWorker.has(workerId)) return false;
    this.remove(workerId);
    return true;
  }

  private remove(workerId: string): void {
    this.byWorker.delete(workerId);
    this.lapses.delete(workerId);
    this.changed = true;
  }
}

/** The memo of a catalog: the merged announcements, when the newest arrived, and when they all lapse after it. */
function catalogMemo(
  publications: readonly ReceivedPublication[],
  lapseAfterMsOf: ((publication: WorkerCatalogPublication) => number) | undefined,
) {
  const lastAnnouncedAt = Math.max(...publications.map((publication) => publication.receivedAt));
  return {
    ...mergeWorkerCatalogs(publications),
    lastAnnouncedAt: new Date(lastAnnouncedAt).toISOString(),
    ...(lapseAfterMsOf ? { lapseAfterMs: Math.max(...publications.map(lapseAfterMsOf)) } : {}),
  };
}

/**
 * The catalog recorded before {@link lapseByTimerPatch}: it wakes as often as its most frequent worker announces (or
 * every ten minutes, before {@link lapseByAnnouncedPeriodPatch}) and lapses announcements by the clock of the task.
 */
async function keepCatalogByClock(carried: readonly ReceivedPublication[], byAnnouncedPeriod: boolean): Promise<void> {
  const refreshOf = (publication: WorkerCatalogPublication) =>
    (byAnnouncedPeriod ? publication.refreshMs : undefined) ?? legacyWorkerRefreshMs;
  const publications = new Map(carried.map((publication) => [publication.workerId, publication]));
  let changed = true;
  setHandler(publishWorkerCatalogSignal, (publication) => {
    if (!canJoinCatalog(publication, byAnnouncedPeriod)) return;
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
      const lapseAfterMsOf = byAnnouncedPeriod
        ? (publication: WorkerCatalogPublication) => missedPeriodsToLapse * refreshOf(publication)
        : undefined;
      upsertMemo({ [workerCatalogMemoKey]: catalogMemo([...publications.values()], lapseAfterMsOf) });
      changed = false;
    }
    if (suggestionOfTheTask()) {
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
 * is not one) would fail every workflow task after it, and the catalog would stop taking announcements and withdrawals;
 * one whose period is not a positive number, where the catalog reads periods (`readsPeriod`), would do the same, or
 * under {@link lapseByTimerPatch} never lapse: it is left out, with a warning in the worker's log. Announcements that
 * merge are taken as they always were.
 */
function canJoinCatalog(publication: WorkerCatalogPublication, readsPeriod: boolean): boolean {
  try {
    mergeWorkerCatalogs([publication]);
    if (readsPeriod) refuseUnreadablePeriod(publication);
    return true;
  } catch (error) {
    log.warn('Ignored a worker catalog announcement that cannot be read', { error: describeFailure(error) });
    return false;
  }
}

/** Throws for a period that no timer can run: one that is given but is not a positive number of milliseconds. */
function refuseUnreadablePeriod({ refreshMs }: WorkerCatalogPublication): void {
  if (refreshMs === undefined || (typeof refreshMs === 'number' && Number.isFinite(refreshMs) && refreshMs > 0)) return;
  throw new TypeError(`refreshMs must be a positive number of milliseconds, not ${JSON.stringify(refreshMs)}`);
}
