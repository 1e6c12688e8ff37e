import type { Context } from '@temporalio/activity';
import { ApplicationFailure, CancelledFailure, log } from '@temporalio/activity';
import { redactSecrets, resolveSecretReferences, withoutCutSecret } from '../src/security/resolve-secret-references.js';
import type { SecretSource } from '../src/security/resolve-secret-references.js';
import { withEffectWarning } from '../src/shared/tool-result.js';
import type { ToolFailure, ToolResult, ToolSuccess } from '../src/shared/tool-result.js';
import { errorMessage } from '../src/shared/error-message.js';
import type { ToolProgress } from '../src/tool/tool-context.js';
import type { Redact, ToolExecutor } from '../src/tool/tool-executor.js';
import { mapKeptText } from '../src/tool/truncate-output.js';
import type { PayloadStore } from '../src/store/payload-store.js';
import type { ExecuteToolInput, Recorded } from './activity-types.js';
import { hasAttemptsLeft } from './attempts.js';
import { toNonRetryableFailure } from './failures.js';
import { whileHeartbeating } from './heartbeat.js';
import { within } from '../src/shared/within.js';
import { storeLargeOutput } from './stored-payloads.js';

/** What the tool activity is built from: the worker's executor, secrets and store, as createActivities settled them. */
export interface ExecuteToolDependencies {
  executor: ToolExecutor;
  secrets: SecretSource | undefined;
  payloadStore: PayloadStore;
  /** Whether outputs over 4 KiB go to the store, for runs that ask (keepLargePayloadsInStore). */
  keepsLargePayloads: boolean;
}

/** The tool activity, bound to one worker's executor, secrets and store. */
export function createExecuteTool({ executor, secrets, payloadStore, keepsLargePayloads }: ExecuteToolDependencies) {
  /** Runs the call with its secrets resolved, reporting the tool's progress in the activity's heartbeats. */
  async function runTool(
    call: ExecuteToolInput,
    context: Context,
    onProgress: (progress: ToolProgress) => void,
  ): Promise<ToolResult> {
    const startedAt = Date.now();
    const resolving = resolveSecretReferences(call.config ?? {}, secrets, {
      tenantId: call.tenantId,
      toolName: call.toolName,
    });
    const tooSlow = `The call's secrets did not resolve within ${secretResolutionTimeoutMs} ms; the tool has not run`;
    const { config, values } = await within(resolving, secretResolutionTimeoutMs, tooSlow).catch((error: unknown) => {
      throw toNonRetryableFailure(error);
    });
    const redact: Redact = (value) => redactSecrets(value, values);
    const executed = await executor.executeCall(
      { id: call.toolCallId, name: call.toolName, arguments: call.input },
      {
        signal: context.cancellationSignal,
        redact,
        context: {
          tenantId: call.tenantId,
          ...(call.userId !== undefined ? { userId: call.userId } : {}),
          ...(call.sessionId !== undefined ? { sessionId: call.sessionId } : {}),
          runId: call.runId,
          toolCallId: call.toolCallId,
          idempotencyKey: call.idempotencyKey,
          config,
          logger: log,
          // Progress goes into heartbeat details, which Temporal shows and may keep in history: no secret in it.
          reportProgress: (progress) => onProgress(redact(progress)),
        },
      },
    );
    const result = hideSecrets(executed, values);
    if (result.success && call.outputByReference && keepsLargePayloads) {
      return keepLargeOutput(payloadStore, call, result, storeDeadline(context, startedAt));
    }
    return result.success ? result : failureOrRetry(call, result, context);
  }

  /**
   * Runs one validated tool call through the executor. Failures the tool could overcome on a retry (it threw, or
   * it timed out and opted into retries) are thrown so the tool's retry policy applies; the rest are data for the
   * model.
   */
  return async function executeTool(call: ExecuteToolInput): Promise<Recorded<ToolResult>> {
    // The periodic heartbeat repeats the latest progress, so Temporal keeps the newest whichever heartbeat goes last.
    let latestProgress: ToolProgress | undefined;
    const run = (context: Context) =>
      runTool(call, context, (progress) => {
        // Progress from a long call (an MCP server's notifications) shows in the activity's heartbeat details.
        latestProgress = progress;
        context.heartbeat(progress);
      });
    return { ...(await whileHeartbeating(run, () => latestProgress)), at: new Date().toISOString() };
  };
}

/**
 * The result with the call's secrets hidden. The executor hid them before it cut the output and error message to
 * size; this is the backstop should one be left: escaped in a cut output's JSON text, or cut in two at its end.
 */
function hideSecrets(result: ToolResult, secrets: readonly string[]): ToolResult {
  const hidden = redactSecrets(result, secrets);
  const dropCutSecret = (text: string) => withoutCutSecret(text, secrets);
  if (!hidden.success) return { ...hidden, error: mapKeptText(hidden.error, dropCutSecret) };
  return hidden.truncated && typeof hidden.data === 'string' ? { ...hidden, data: dropCutSecret(hidden.data) } : hidden;
}

/**
 * How long a call's secrets may take to resolve. The activity has 5 s beyond the tool's own timeout; a resolver slower
 * than that would time the activity out while the tool runs, and Temporal would run it again.
 */
export const secretResolutionTimeoutMs = 4_000;

/**
 * The result with a large output kept in the store, or whole when the store fails. The tool has run by now: failing
 * the activity would make Temporal run it again, or tell the model that a call which took effect failed. So the output
 * stays in history, and the worker's log says why.
 */
async function keepLargeOutput(
  store: PayloadStore,
  call: ExecuteToolInput,
  result: ToolSuccess,
  deadline: number,
): Promise<ToolSuccess> {
  // A put still going at the activity's own timeout would have Temporal run the tool again: it is given up first.
  const waitMs = deadline - Date.now();
  try {
    return await within(storeLargeOutput(store, call, result), waitMs, `the store did not answer within ${waitMs} ms`);
  } catch (error) {
    log.warn('Could not keep a tool output in the payload store: it stays whole in the run history', {
      toolName: call.toolName,
      toolCallId: call.toolCallId,
      error: errorMessage(error),
    });
    return result;
  }
}

/**
 * When a put after the tool must have ended: a second before the attempt's start-to-close timeout (the tool's own
 * timeout and 5 s), so the completion still reaches Temporal in time.
 */
function storeDeadline(context: Context, attemptStartedAt: number): number {
  return attemptStartedAt + context.info.startToCloseTimeoutMs - 1_000;
}

/**
 * A failed call's result for the model, or the failure that makes Temporal retry it: a cancellation (but a worker
 * shutting down on the last attempt), a throw, a timeout the tool opted to retry while attempts are left, and a
 * retryable transport or protocol error likewise.
 */
function failureOrRetry(call: ExecuteToolInput, result: ToolFailure, context: Context): ToolResult {
  if (result.errorType === 'cancelled') return cutShortOrCancelled(result, context);
  if (result.errorType === 'timeout' && !call.retryTimeouts) return mayHaveHadEffect(result, 'it was not retried');
  // Thrown on the last attempt, the run would only see an activity failure: the model would lose the warning.
  if (result.errorType === 'timeout' && !hasAttemptsLeft(context)) {
    return mayHaveHadEffect(result, 'it was its last attempt');
  }
  if ((result.errorType === 'execution' || result.errorType === 'timeout') && result.retryable !== false) {
    throw ApplicationFailure.create({
      type: 'tool_execution_failed',
      message: result.error,
      details: [result.errorType],
    });
  }
  if (result.retryable === true && hasAttemptsLeft(context)) {
    throw ApplicationFailure.create({
      type: result.errorType === 'transport' ? 'tool_transport_failed' : 'tool_protocol_error',
      message: result.error,
      details: [result.errorType],
    });
  }
  return result;
}

/**
 * A call cut short by its worker shutting down, on its last attempt, for the model; any other cancellation is thrown.
 * Thrown, Temporal would retry it on another worker while attempts are left, and on the last the run would see only a
 * `WorkerShutdown` activity failure: the model would not learn that the tool was stopped mid-work. Returned, the
 * attempt completes with this result.
 */
function cutShortOrCancelled(result: ToolFailure, context: Context): ToolFailure {
  if (!isCancelledByShutdown(context) || hasAttemptsLeft(context)) throw new CancelledFailure(result.error);
  const cutShort = `Tool '${result.toolName}' was cut short because its worker shut down`;
  return mayHaveHadEffect({ ...result, errorType: 'execution', error: cutShort }, 'it was its last attempt');
}

/**
 * Whether the activity was cancelled because its worker is shutting down (its grace ended), not by the run. The SDK
 * aborts the signal with a CancelledFailure whose message is the reason, `WORKER_SHUTDOWN` on every path that cancels
 * for a shutdown; `cancellationDetails`, the other way to tell, is experimental in the SDK.
 */
function isCancelledByShutdown(context: Context): boolean {
  const reason: unknown = context.cancellationSignal.reason;
  return reason instanceof CancelledFailure && reason.message === 'WORKER_SHUTDOWN';
}

/** A failure for the model that may still have had an effect: told why it was not attempted again, and to check. */
function mayHaveHadEffect(result: ToolFailure, why: string): ToolFailure {
  return {
    ...result,
    error: withEffectWarning(result.error, why),
  };
}
