import { setTimeout as sleep } from 'node:timers/promises';
import { RelayError } from '../shared/errors.js';
import type { RunEvent } from '../shared/run-types.js';
import { modelDeltaBatchMs } from '../shared/run-types.js';
import { ModelDeltaTracker, readModelProgress } from './read-model-progress.js';
import { describedEvents } from './read-run.js';
import type { TenantScope, WatchOptions } from './relay-client.js';
import type { RunAccess } from './run-access.js';
import { explainUnavailable } from './workflow-task-failure.js';
import type { WorkflowTaskFailure } from './workflow-task-failure.js';

const terminalEventTypes = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled']);

/** How long a follower waits before asking a run that could not answer again. */
const unavailablePollMs = 1_000;

/**
 * Follows the run's events for `RelayClient.watch`, until the run ends or `signal` aborts. `readFailure` reads why
 * its workflow task fails (`RelayClient.workflowTaskFailure`), to say why it cannot answer.
 */
export async function* watchRun(
  access: RunAccess,
  runId: string,
  options: WatchOptions,
  readFailure: () => Promise<WorkflowTaskFailure | undefined>,
): AsyncGenerator<RunEvent> {
  let after = options.after ?? 0;
  const interval = options.pollIntervalMs ?? 250;
  const scope: TenantScope = options.tenantId !== undefined ? { tenantId: options.tenantId } : {};
  const deltas = options.deltas === false ? undefined : new ModelDeltaTracker();
  const unavailability = tellUnavailability(runId, options, readFailure);
  let firstLook = true;
  while (!options.signal?.aborted) {
    // One description a look serves both the events (a closed run's come from its record) and the streamed text. A
    // run waiting for a worker to recover it cannot answer (`run_unavailable`); the follower waits, as the run does.
    const look = await describedEvents(access, runId, { ...scope, after }).catch((error: unknown) =>
      waitOutUnavailable(error, unavailability, options.signal),
    );
    if (look === undefined) continue;
    unavailability.answered();
    for (const event of look.events) {
      after = event.seq;
      yield event;
      if (terminalEventTypes.has(event.type)) return;
    }
    // Described closed before its events were read, so they were its last.
    if (look.description.status.name !== 'RUNNING') return;
    let streaming = false;
    if (deltas) {
      const delta = deltas.next(await readModelProgress(access.temporal, look.description), after, firstLook);
      firstLook = false;
      if (delta) {
        streaming = true;
        yield delta;
      }
    }
    try {
      const wait = streaming ? Math.min(interval, modelDeltaBatchMs) : interval;
      await sleep(wait, undefined, options.signal ? { signal: options.signal } : undefined);
    } catch {
      return;
    }
  }
}

/** Lets a follower wait out `run_unavailable` (resolving to nothing read); anything else is a real failure. */
async function waitOutUnavailable(
  error: unknown,
  unavailability: UnavailabilityTelling,
  signal: AbortSignal | undefined,
): Promise<undefined> {
  if (!RelayError.hasCode(error, 'run_unavailable')) throw error;
  unavailability.refused(error);
  await sleep(unavailablePollMs, undefined, signal ? { signal } : undefined).catch(() => undefined);
  return undefined;
}

/** What a follower's looks tell its caller of whether the run answers. */
export interface UnavailabilityTelling {
  /** A look could not be answered (`run_unavailable`). */
  refused(error: RelayError): void;
  /** A look was answered. */
  answered(): void;
}

/**
 * Tells `onUnavailable` why the run cannot answer once each stretch without an answer ({@link explainUnavailable}:
 * one history read, none for a caller that does not ask), and `onAvailable` when it answers after that, or at its
 * first answer when the caller found it unable to answer before watching. A reason read after the run answered again
 * belongs to a stretch that ended, and is not told.
 */
export function tellUnavailability(
  runId: string,
  {
    onUnavailable,
    onAvailable,
    unavailableAtStart,
  }: Pick<WatchOptions, 'onUnavailable' | 'onAvailable' | 'unavailableAtStart'>,
  readFailure: () => Promise<WorkflowTaskFailure | undefined>,
): UnavailabilityTelling {
  /** Counts the stretches that ended, so a reason read in one of them is not told. */
  let stretch = 0;
  let explainedIn: number | undefined;
  let told = false;
  let owesAvailable = unavailableAtStart !== undefined && unavailableAtStart !== false;
  let refused = owesAvailable;
  const telling = {
    refused(error: RelayError) {
      refused = true;
      if (onUnavailable === undefined || explainedIn === stretch) return;
      const asked = (explainedIn = stretch);
      void explainUnavailable(error, runId, readFailure).then((explained) => {
        if (asked !== stretch) return;
        told = true;
        onUnavailable(explained);
      });
    },
    answered() {
      if (!refused) return;
      if (told || owesAvailable) onAvailable?.();
      stretch += 1;
      refused = told = owesAvailable = false;
    },
  };
  if (RelayError.isInstance(unavailableAtStart)) telling.refused(unavailableAtStart);
  return telling;
}
