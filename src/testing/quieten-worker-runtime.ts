import { DefaultLogger, IllegalStateError, Runtime } from '@temporalio/worker';

/**
 * Keeps Temporal's worker logs at WARN, so test output shows failures rather than every state change. A process
 * that installed its own Runtime first keeps it; safe to call repeatedly.
 */
export function quietenWorkerRuntime(): void {
  try {
    Runtime.install({ logger: new DefaultLogger('WARN') });
  } catch (error) {
    // Already installed or instantiated in this process (by the test or another helper): keep that one.
    if (!(error instanceof IllegalStateError)) throw error;
  }
}
