import { ApplicationFailure, CancelledFailure, Context, log } from '@temporalio/activity';
import type { ToolExecutor } from '../src/tool/tool-executor.js';
import type { ToolRegistry } from '../src/tool/tool-registry.js';
import type { ModelRegistry } from '../src/model/model-registry.js';
import { createModelTextStream } from './model-text-stream.js';
import { ModelProviderError } from '../src/model/model-provider.js';
import { RelayError } from '../src/shared/errors.js';
import { redactSecrets, resolveSecretReferences } from '../src/security/resolve-secret-references.js';
import type { SecretSource } from '../src/security/resolve-secret-references.js';
import { defaultMaxModelResponseBytes, toJsonText, utf8ByteLength } from '../src/shared/payload-limits.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { ModelRequest, ModelResponse } from '../src/shared/transcript.js';
import type { ToolResult } from '../src/shared/tool-result.js';

/** Everything a tool activity needs to build the tool's context. */
export interface ExecuteToolInput {
  toolName: string;
  toolCallId: string;
  input: unknown;
  /** `workflowId/toolCallId`: the same on every retry and replay of this call. */
  idempotencyKey: string;
  tenantId: string;
  userId?: string;
  sessionId?: string;
  runId: string;
  config: Record<string, unknown>;
}

export interface ActivityDependencies {
  registry: ToolRegistry;
  executor: ToolExecutor;
  models: ModelRegistry;
  /** The largest model response (as JSON) returned to a run. @default defaultMaxModelResponseBytes (1 MiB) */
  maxModelResponseBytes?: number;
  /** What `{ "$secret": "NAME" }` in a run's config resolves to; the values exist only inside `executeTool`. */
  secrets?: SecretSource;
}

/**
 * How often a running model call or tool heartbeats. The heartbeat is what carries a run's cancellation to the
 * activity, and its absence is how Temporal notices a dead worker within the heartbeat timeout instead of the
 * whole start-to-close timeout.
 */
const heartbeatIntervalMs = 1_000;

/** Runs `work` while the current activity heartbeats, with `details()` when given. */
async function whileHeartbeating<T>(work: (context: Context) => Promise<T>, details?: () => unknown): Promise<T> {
  const context = Context.current();
  const heartbeat = setInterval(() => context.heartbeat(details?.()), heartbeatIntervalMs);
  try {
    return await work(context);
  } finally {
    clearInterval(heartbeat);
  }
}

/** The activities of an agent run, bound to one worker's tools and model providers. */
export function createActivities({ registry, executor, models, secrets, ...limits }: ActivityDependencies) {
  const maxModelResponseBytes = limits.maxModelResponseBytes ?? defaultMaxModelResponseBytes;
  return {
    /** Records the tools a run may use (names, descriptions, JSON Schemas, approval flags) in its history. */
    async snapshotToolCatalog(input: { tools?: string[] }): Promise<ToolCatalogEntry[]> {
      try {
        return registry.catalog(input.tools);
      } catch (error) {
        throw toNonRetryableFailure(error);
      }
    },

    /** Asks the run's model for its next turn; transient provider failures are retried by Temporal. */
    async callModel(request: ModelRequest): Promise<ModelResponse> {
      const { provider, modelName } = resolveModel(models, request.model);
      // Streamed text travels in heartbeat details, which Temporal keeps on the pending activity, not in history.
      const stream = createModelTextStream(Context.current(), request.step);
      let response: ModelResponse;
      try {
        response = await whileHeartbeating(
          (context) =>
            provider.generate(
              { ...request, modelName },
              { signal: context.cancellationSignal, onTextDelta: (delta) => stream.push(delta) },
            ),
          () => stream.progress(),
        );
      } catch (error) {
        if (error instanceof ModelProviderError) {
          throw ApplicationFailure.create({
            type: 'model_error',
            message: error.message,
            nonRetryable: !error.retryable,
            ...(error.retryAfterMs !== undefined ? { nextRetryDelay: error.retryAfterMs } : {}),
          });
        }
        throw error;
      } finally {
        stream.stop();
      }
      return checkModelResponseSize(response, maxModelResponseBytes);
    },

    /**
     * Runs one validated tool call through the executor. Failures the tool could overcome on a retry
     * (it threw, or timed out) are thrown so the tool's retry policy applies; the rest are data for the model.
     */
    async executeTool(call: ExecuteToolInput): Promise<ToolResult> {
      return whileHeartbeating(async (context) => {
        const { config, values } = await resolveSecretReferences(call.config, secrets, {
          tenantId: call.tenantId,
          toolName: call.toolName,
        }).catch((error: unknown) => {
          throw toNonRetryableFailure(error);
        });
        const executed = await executor.executeCall(
          { id: call.toolCallId, name: call.toolName, arguments: call.input },
          {
            signal: context.cancellationSignal,
            context: {
              tenantId: call.tenantId,
              ...(call.userId !== undefined ? { userId: call.userId } : {}),
              ...(call.sessionId !== undefined ? { sessionId: call.sessionId } : {}),
              runId: call.runId,
              toolCallId: call.toolCallId,
              idempotencyKey: call.idempotencyKey,
              config,
              logger: log,
            },
          },
        );
        const result = redactSecrets(executed, values);
        if (result.success) return result;
        if (result.errorType === 'cancelled') throw new CancelledFailure(result.error);
        if (result.errorType === 'execution' || result.errorType === 'timeout') {
          throw ApplicationFailure.create({
            type: 'tool_execution_failed',
            message: result.error,
            details: [result.errorType],
          });
        }
        return result;
      });
    },
  };
}

export type RelayActivities = ReturnType<typeof createActivities>;

function resolveModel(models: ModelRegistry, modelId: string) {
  try {
    return models.resolve(modelId);
  } catch (error) {
    throw toNonRetryableFailure(error);
  }
}

/**
 * Stops a response Temporal would refuse (or one it cannot even encode) here, with a clear failure, instead of
 * letting the server reject the activity's result and the run retry a model call that will answer the same.
 */
function checkModelResponseSize(response: ModelResponse, maxBytes: number): ModelResponse {
  const json = toJsonText(response);
  if (json === undefined) {
    throw ApplicationFailure.create({
      type: 'model_error',
      message: 'The model response cannot be encoded as JSON (nested too deeply, or not plain data)',
      nonRetryable: true,
    });
  }
  const bytes = utf8ByteLength(json);
  if (bytes > maxBytes) {
    throw ApplicationFailure.create({
      type: 'payload_too_large',
      message: `The model response is ${bytes} bytes of JSON, over the limit of ${maxBytes} (maxModelResponseBytes)`,
      nonRetryable: true,
    });
  }
  return response;
}

/** Configuration mistakes do not heal on a retry: fail at once with the error's code as the failure type. */
function toNonRetryableFailure(error: unknown): unknown {
  if (!RelayError.isInstance(error)) return error;
  return ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true });
}
