import { setTimeout as sleep } from 'node:timers/promises';
import { RelayError } from '../shared/errors.js';
import type { RunEvent } from '../shared/run-types.js';
import { modelDeltaBatchMs } from '../shared/run-types.js';
import { ModelDeltaTracker, readModelProgress } from './read-model-progress.js';
import { describedEvents } from './read-run.js';
import type { TenantScope, WatchOptions } from './relay-client.js';
import type { RunAccess } from './run-access.js';

const terminalEventTypes = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled']);

/** How long a follower waits before asking a run that could not answer again. */
const unavailablePollMs = 1_000;

/** Follows the run's events for `RelayClient.watch`, until the run ends or `signal` aborts. */
export async function* watchRun(access: RunAccess, runId: string, options: WatchOptions): AsyncGenerator<RunEvent> {
  let after = options.after ?? 0;
  const interval = options.pollIntervalMs ?? 250;
  const scope: TenantScope = options.tenantId !== undefined ? { tenantId: options.tenantId } : {};
  const deltas = options.deltas === false ? undefined : new ModelDeltaTracker();
  let firstLook = true;
  let unavailable = options.unavailableAtStart ?? false;
  while (!options.signal?.aborted) {
    // One description a look serves both the events (a closed run's come from its record) and the streamed text. A
    // run waiting for a worker to recover it cannot answer (`run_unavailable`); the follower waits, as the run does.
    const look = await describedEvents(access, runId, { ...scope, after }).catch((error: unknown) => {
      unavailable = true;
      return waitOutUnavailable(error, options);
    });
    if (look === undefined) continue;
    if (unavailable) options.onAvailable?.();
    unavailable = false;
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
  { onUnavailable, signal }: Pick<WatchOptions, 'onUnavailable' | 'signal'>,
): Promise<undefined> {
  if (!RelayError.isInstance(error) || error.code !== 'run_unavailable') throw error;
  onUnavailable?.(error);
  await sleep(unavailablePollMs, undefined, signal ? { signal } : undefined).catch(() => undefined);
  return undefined;
}
