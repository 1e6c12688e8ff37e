import { ApplicationFailure, Context, log } from '@temporalio/activity';
import type { ModelCall, ModelProvider } from '../src/model/model-provider.js';
import { ModelProviderError } from '../src/model/model-provider.js';
import type { ModelRegistry } from '../src/model/model-registry.js';
import { RelayError } from '../src/shared/errors.js';
import { cutBelow, nestedDeeperThan } from '../src/shared/nesting-depth.js';
import { maxToolInputDepth } from '../src/shared/tool-input.js';
import {
  defaultMaxModelResponseBytes,
  maxAllowedModelResponseBytes,
  toJsonText,
  utf8ByteLength,
} from '../src/shared/payload-limits.js';
import type {
  ModelCallResult,
  ModelContextRequest,
  ModelRequest,
  ModelResponse,
  StoredModelContext,
} from '../src/shared/transcript.js';
import type { PayloadStore } from '../src/store/payload-store.js';
import type { OwnModelCallQueue, Recorded } from './activity-types.js';
import { catalogAskedBy, snapshotCatalog, withCatalogTools } from './catalog-snapshot.js';
import type { CatalogSources } from './catalog-snapshot.js';
import { isStoredPayloadMissing, toNonRetryableFailure } from './failures.js';
import { whileHeartbeating } from './heartbeat.js';
import { assembleModelCall, ModelContextCache, withAnswer } from './model-context.js';
import type { AssembledModelCall } from './model-context.js';
import { createModelTextStream } from './model-text-stream.js';
import type { ModelTextStream } from './model-text-stream.js';
import { storeLongText } from './stored-payloads.js';

/** What the model activity is built from: the worker's catalog sources and store, as createActivities settled them. */
export interface CallModelDependencies {
  catalogSources: CatalogSources;
  payloadStore: PayloadStore;
  /** Whether texts beside tool calls over 4 KiB go to the store, for runs that ask (keepLargePayloadsInStore). */
  keepsLargePayloads: boolean;
  /** Whether the store is this worker's own memory, whose misses the worker warns of. */
  privateStore: boolean;
  /** See ActivityDependencies.maxModelResponseBytes; checked here, when the worker is created. */
  maxModelResponseBytes: number | undefined;
  modelCallQueue: (() => OwnModelCallQueue | undefined) | undefined;
}

/** The model activity, bound to one worker's models, store and own model-call queue. */
export function createCallModel(dependencies: CallModelDependencies) {
  const { catalogSources, payloadStore, keepsLargePayloads, modelCallQueue } = dependencies;
  const maxModelResponseBytes = checkMaxModelResponseBytes(dependencies.maxModelResponseBytes);
  const modelContexts = new ModelContextCache();
  const warnOfPrivateStore = dependencies.privateStore ? createPrivateStoreWarning() : undefined;

  /** The call's request as the provider takes it, and how to store its context, read from the store when by reference. */
  function assemble(request: ModelRequest | ModelContextRequest, context: Context): Promise<AssembledModelCall> {
    if (!('context' in request)) return Promise.resolve({ request, store: () => Promise.resolve(undefined) });
    return assembleModelCall(payloadStore, modelContexts, request).catch((error: unknown) => {
      if (isStoredPayloadMissing(error)) warnOfPrivateStore?.(context.info.taskQueue);
      throw toNonRetryableFailure(error);
    });
  }

  /** The model's answer, with what this worker stored of the call and where the run's next call goes. */
  async function answer(
    request: ModelRequest | ModelContextRequest,
    provider: ModelProvider,
    modelName: string,
    context: Context,
    stream: ModelTextStream,
  ): Promise<ModelCallResult> {
    const assembled = await assemble(request, context);
    const turn = await generateModelTurn(provider, { ...assembled.request, modelName }, context, stream);
    const response = checkModelResponseSize(withTooDeepInputsCut(turn), maxModelResponseBytes);
    const ownQueue = modelCallQueue?.();
    const workerQueue = nextCallQueue(context.info.taskQueue, ownQueue);
    const stored = withWorkerQueue(await assembled.store(response), workerQueue, ownQueue?.startTimeoutMs);
    // Only a run that stores its answers with its context (the lean-history rules) knows a stored text.
    const textByReference = keepsLargePayloads && 'context' in request && withAnswer(request.context);
    const returned = textByReference ? await storeLongText(payloadStore, request, response) : response;
    return { ...returned, ...(stored ? { stored } : {}) };
  }

  /**
   * Asks the run's model for its next turn; transient provider failures are retried by Temporal. A call that
   * refers to stored context fails with `payload_not_found`, not retried, when this worker's store lost it: the
   * run then sends the whole context (a lost stored output or text is `stored_output_not_found`, which fails it). A run's first call asks for the catalog too: it is read here and returned with
   * the answer, or alone when the worker refuses the run (the model is not called).
   */
  return async function callModel(request: ModelRequest | ModelContextRequest): Promise<Recorded<ModelCallResult>> {
    const asked = catalogAskedBy(request);
    const catalog = asked ? snapshotCatalog(catalogSources, asked.catalog) : undefined;
    if (catalog?.refused) return { catalog, at: catalog.at };
    const withTools = asked && catalog ? withCatalogTools(asked.request, catalog.entries) : request;
    const { provider, modelName } = resolveModel(catalogSources.models, request.model);
    // Streamed text travels in heartbeat details, which Temporal keeps on the pending activity, not in history.
    const stream = createModelTextStream(Context.current(), request.step);
    try {
      // Reading the stored context heartbeats too, so a slow store is not taken for a dead worker.
      const result = await whileHeartbeating(
        (context) => answer(withTools, provider, modelName, context, stream),
        () => stream.progress(),
      );
      return { ...result, ...(catalog ? { catalog } : {}), at: new Date().toISOString() };
    } finally {
      stream.stop();
    }
  };
}

/**
 * What a call's result says of the queue for the run's next call: this worker's own queue when the call came by the
 * shared one; nothing when it came by the own queue, where the run sends its calls already (a few bytes saved in
 * every step's history), or when the worker has none; `null` when it came by the own queue but the worker is
 * shutting down, so the run goes back to the shared queue at once.
 */
function nextCallQueue(arrivedOn: string, own: OwnModelCallQueue | undefined): string | null | undefined {
  if (own === undefined) return undefined;
  if (arrivedOn === own.name) return own.open ? undefined : null;
  return own.open ? own.name : undefined;
}

/**
 * What a call stored, with what it says of the queue for the run's next call (see nextCallQueue) and, beside a queue
 * it names, how long a call may wait to start there when the worker sets another wait than the default.
 */
function withWorkerQueue(
  stored: StoredModelContext | undefined,
  workerQueue: string | null | undefined,
  startTimeoutMs: number | undefined,
): StoredModelContext | undefined {
  if (!stored || workerQueue === undefined) return stored;
  const wait =
    typeof workerQueue === 'string' && startTimeoutMs !== undefined ? { workerQueueStartMs: startTimeoutMs } : {};
  return { ...stored, workerQueue, ...wait };
}

/** Calls the provider, its streamed text going to `stream`; a provider's failure becomes a `model_error`. */
async function generateModelTurn(
  provider: ModelProvider,
  call: ModelCall,
  context: Context,
  stream: ModelTextStream,
): Promise<ModelResponse> {
  try {
    return await provider.generate(call, {
      signal: context.cancellationSignal,
      onTextDelta: (delta) => stream.push(delta),
    });
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
  }
}

function resolveModel(models: ModelRegistry, modelId: string) {
  try {
    return models.resolve(modelId);
  } catch (error) {
    throw toNonRetryableFailure(error);
  }
}

/** The configured limit on model responses, refused when the worker is created if it is one no run could live with. */
function checkMaxModelResponseBytes(configured: number | undefined): number {
  const limit = configured ?? defaultMaxModelResponseBytes;
  if (!Number.isInteger(limit) || limit < 1 || limit > maxAllowedModelResponseBytes) {
    throw new RelayError(
      'invalid_input',
      `maxModelResponseBytes must be a whole number from 1 to ${maxAllowedModelResponseBytes}, not ${limit}`,
    );
  }
  return limit;
}

/**
 * The response with each tool call's input nested deeper than a run checks cut below that depth (nesting-depth.ts):
 * the run refuses it as `input_too_deep` and tells the model, where the whole, nested past what JSON encoding
 * reaches, could not even be returned.
 */
function withTooDeepInputsCut(response: ModelResponse): ModelResponse {
  if (!response.toolCalls?.some((call) => nestedDeeperThan(call.input, maxToolInputDepth))) return response;
  const toolCalls = response.toolCalls.map((call) =>
    nestedDeeperThan(call.input, maxToolInputDepth)
      ? { ...call, input: cutBelow(call.input, maxToolInputDepth) }
      : call,
  );
  return { ...response, toolCalls };
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

/** How often, at most, a worker whose store is its own memory says so when a model call misses its context. */
const privateStoreWarningIntervalMs = 10 * 60 * 1000;

/**
 * A worker with the default store (its own memory) cannot serve a call whose context another worker stored: the run
 * sends the whole context again, which is correct but costs a failed attempt and history on every such call. Each run
 * logs its own resends; this tells the operator, at most once per {@link privateStoreWarningIntervalMs}, what fixes it.
 */
function createPrivateStoreWarning(): (taskQueue: string) => void {
  let lastWarnedAt: number | undefined;
  return (taskQueue) => {
    if (lastWarnedAt !== undefined && Date.now() - lastWarnedAt < privateStoreWarningIntervalMs) return;
    lastWarnedAt = Date.now();
    log.warn(
      `A model call referred to a context this worker does not hold: its payload store is its own memory ` +
        `(createWorker's default), so a call that lands on another worker of task queue '${taskQueue}', or on this ` +
        `one after a restart, sends the whole context again. Give every worker of the task queue the same ` +
        `payloadStore (docs/runs-and-approvals.md#model-context-by-reference).`,
    );
  };
}
