import type { Context } from '@temporalio/activity';

/**
 * Whether Temporal will attempt this activity again after a retryable failure. On the last attempt a failure that
 * the run should see as data (a remote tool's transport error, an approval notice not delivered) is returned, not
 * thrown.
 */
export function hasAttemptsLeft(context: Context): boolean {
  const maximumAttempts = context.info.retryPolicy?.maximumAttempts ?? 0;
  return maximumAttempts === 0 || context.info.attempt < maximumAttempts;
}
