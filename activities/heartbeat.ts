import { Context } from '@temporalio/activity';

/**
 * How often a running model call or tool heartbeats. The heartbeat is what carries a run's cancellation to the
 * activity, and its absence is how Temporal notices a dead worker within the heartbeat timeout instead of the
 * whole start-to-close timeout.
 */
const heartbeatIntervalMs = 1_000;

/** Runs `work` while the current activity heartbeats, with `details()` when given. */
export async function whileHeartbeating<T>(
  work: (context: Context) => Promise<T>,
  details?: () => unknown,
): Promise<T> {
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(details?.()), heartbeatIntervalMs);
  try {
    return await work(context);
  } finally {
    clearInterval(heartbeat);
  }
}
