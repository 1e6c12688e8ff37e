import { ApplicationFailure, CancelledFailure, Context, log } from '@temporalio/activity';
import type { ToolProgress } from '../src/tool/tool-context.js';
import type { ToolExecutor } from '../src/tool/tool-executor.js';
import type { ToolRegistry } from '../src/tool/tool-registry.js';
import type { ModelRegistry } from '../src/model/model-registry.js';
import { createModelTextStream } from './model-text-stream.js';
import type { ModelTextStream } from './model-text-stream.js';
import { ModelProviderError } from '../src/model/model-provider.js';
import type { ModelCall, ModelProvider } from '../src/model/model-provider.js';
import { RelayError } from '../src/shared/errors.js';
import { redactSecrets, resolveSecretReferences } from '../src/security/resolve-secret-references.js';
import type { SecretSource } from '../src/security/resolve-secret-references.js';
import {
  defaultMaxModelResponseBytes,
  maxAllowedModelResponseBytes,
  toJsonText,
  utf8ByteLength,
} from '../src/shared/payload-limits.js';
import { modelToolSpecs } from '../src/shared/tool-catalog.js';
import type { CatalogRequest, CatalogSnapshot, RunRefusal, ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type {
  ModelCallResult,
  ModelContextRequest,
  ModelRequest,
  ModelResponse,
  StoredModelContext,
} from '../src/shared/transcript.js';
import type { PayloadRef, PayloadStore } from '../src/store/payload-store.js';
import { createMemoryPayloadStore } from '../src/store/memory-payload-store.js';
import { assembleModelCall, ModelContextCache, withAnswer } from './model-context.js';
import type { ToolResult, ToolSuccess } from '../src/shared/tool-result.js';
import { outputByReferenceBytes, storedOutputPreviewLength } from '../src/shared/stored-output.js';
import type { StoredModelText, StoredToolOutput } from '../src/shared/stored-output.js';
import { boundIssues } from '../src/shared/payload-limits.js';
import { checkToolInputAsync } from '../src/shared/tool-input.js';
import { hasAttemptsLeft } from './attempts.js';
import { createNotifyApprovers } from './notify-approvers.js';
import { askApprovalRule } from './approval-rule.js';
import type { ApprovalRuleContext } from '../src/tool/define-tool.js';
import { tenantReminderMs } from '../src/notify/approval-webhook.js';
import type { ApprovalWebhooks } from '../src/notify/approval-webhook.js';
import type { ToolInputIssue } from '../src/shared/tool-input.js';

/** Everything a tool activity needs to build the tool's context. */
export interface ExecuteToolInput {
  toolName: string;
  toolCallId: string;
  input: unknown;
  /** Unique to this call of this run (see the workflow's `idempotencyKeyFor`): the same on every retry and replay. */
  idempotencyKey: string;
  tenantId: string;
  userId?: string;
  sessionId?: string;
  runId: string;
  /**
   * The run's config, for the tool's context.
   * @default {} (runs under the lean-history rules leave an empty one out)
   */
  config?: Record<string, unknown>;
  /**
   * Retry a call that ran past its timeout. Only tools that set their own retry policy opt in: the attempt that
   * timed out may still be running, so a blind retry could run the effect twice at once.
   * @default false
   */
  retryTimeouts?: boolean;
  /**
   * Keep an output over `outputByReferenceBytes` in the payload store and return a `StoredToolOutput` in its place
   * (runs under the lean-history rules ask for it).
   * @default false
   */
  outputByReference?: boolean;
}

/**
 * An activity's result with the time the worker finished it: the run stamps the events that follow with it, a time
 * in history that every replay reads the same. Results recorded before it have no `at`.
 */
export type Recorded<T> = T & { at?: string };

/** What the run asks of a call's input before a human is asked (checkToolCallInput). */
export interface ToolCallInputCheck {
  toolName: string;
  input: unknown;
  /** Sent for a tool whose catalog entry has `approvalByRule`: who asks, for the rule. */
  approvalRuleContext?: ApprovalRuleContext;
}

/**
 * A call's input checked against the tool's own schema, as the executor will check it; for a tool whose approval is
 * a rule, with the rule's answer (`approvalNeeded: false` lets the call run without a human).
 */
export type ToolInputVerdict =
  | { valid: true; at: string; approvalNeeded?: boolean }
  | { valid: false; errorType: 'validation' | 'not_found'; error: string; issues: ToolInputIssue[]; at: string };

export interface ActivityDependencies {
  registry: ToolRegistry;
  executor: ToolExecutor;
  models: ModelRegistry;
  /**
   * The largest model response (as JSON) returned to a run, at most `maxAllowedModelResponseBytes` (1.5 MiB).
   * @default defaultMaxModelResponseBytes (1 MiB)
   */
  maxModelResponseBytes?: number;
  /** What `{ "$secret": "NAME" }` in a run's config resolves to; the values exist only inside `executeTool`. */
  secrets?: SecretSource;
  /**
   * Where model calls store the transcript and tools they refer to instead of carrying them.
   * @default a store in this process's memory (see `createMemoryPayloadStore`)
   */
  payloadStore?: PayloadStore;
  /**
   * Whether tools keep outputs, and the model activity texts beside tool calls, over `outputByReferenceBytes` in
   * `payloadStore` for runs that ask (the lean-history rules), with only a ref in history. Only for a store every
   * worker of the task queue reads: a stored output has no copy elsewhere to send again, so a worker that cannot read
   * it fails the run.
   * @default true when `payloadStore` is given (a store the deployment chose), false for the private default
   */
  keepLargePayloadsInStore?: boolean;
  /**
   * Where approvers are told that a call waits for them: tools that require approval are recorded in a run's catalog
   * with `notifiesApprovers`, and the run posts a notice for each of their calls.
   * @default undefined (no notices)
   */
  approvalWebhooks?: ApprovalWebhooks;
  /** How long before a waiting call expires its approvers are reminded (recorded in the catalog); needs webhooks. */
  approvalReminderMs?: number;
  /**
   * The task queue only this worker polls for model calls, once it runs (see `keepModelCallsOnWorker`), and whether
   * it still takes calls (not while the worker shuts down): named with what a call stored, so the run's next call
   * comes back to this worker and its store.
   * @default undefined (the run's next call goes to the shared task queue)
   */
  modelCallQueue?: () => OwnModelCallQueue | undefined;
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
export function createActivities({
  registry,
  executor,
  models,
  secrets,
  approvalWebhooks,
  approvalReminderMs,
  modelCallQueue,
  ...options
}: ActivityDependencies) {
  const maxModelResponseBytes = checkMaxModelResponseBytes(options.maxModelResponseBytes);
  const payloadStore = options.payloadStore ?? createMemoryPayloadStore();
  // A model context lost with a private store is sent again; a tool output would be lost.
  const keepsLargePayloads = options.keepLargePayloadsInStore ?? options.payloadStore !== undefined;
  const modelContexts = new ModelContextCache();
  const warnOfPrivateStore = options.payloadStore === undefined ? createPrivateStoreWarning() : undefined;
  const catalogSources = { registry, executor, models, approvalWebhooks, approvalReminderMs };
  return {
    /**
     * Records the run's tool catalog ({@link snapshotCatalog}) in its history. Runs recorded before the rule
     * `catalog-in-first-model-call` ask it in an activity of their own; later runs get it with their first model call.
     */
    async snapshotToolCatalog(input: CatalogRequest & { model?: string }): Promise<CatalogSnapshot> {
      return snapshotCatalog(catalogSources, input);
    },

    /**
     * Checks a call's input with the tool's own Zod schema (refinements included) before a human is asked to
     * approve it: what the run checked in the workflow is only the JSON Schema.
     */
    async checkToolCallInput(call: ToolCallInputCheck): Promise<ToolInputVerdict> {
      const tool = registry.get(call.toolName);
      const at = new Date().toISOString();
      if (!tool) {
        const error = `Tool '${call.toolName}' is no longer offered by this worker`;
        return {
          valid: false,
          errorType: 'not_found',
          error,
          issues: [{ path: '', message: error, code: 'unknown_tool' }],
          at,
        };
      }
      const check = await checkToolInputAsync(tool.inputSchema, call.input);
      if (check.success && call.approvalRuleContext) {
        const approvalNeeded = await askApprovalRule(tool, check.data, call.approvalRuleContext);
        return { valid: true, approvalNeeded, at: new Date().toISOString() };
      }
      if (check.success) return { valid: true, at };
      return { valid: false, errorType: 'validation', error: check.message, issues: boundIssues(check.issues), at };
    },

    /** Tells the tenant's approvers that a call waits for them (see createNotifyApprovers). */
    notifyApprovers: createNotifyApprovers(approvalWebhooks),

    /** The worker's clock, recorded in the run's history: an event stamped with it reads the same on every replay. */
    async readClock(): Promise<{ at: string }> {
      return { at: new Date().toISOString() };
    },

    /**
     * Asks the run's model for its next turn; transient provider failures are retried by Temporal. A call that
     * refers to stored context fails with `payload_not_found`, not retried, when this worker's store lost it: the
     * run then sends the whole context. A run's first call asks for the catalog too: it is read here and returned with
     * the answer, or alone when the worker refuses the run (the model is not called).
     */
    async callModel(request: ModelRequest | ModelContextRequest): Promise<Recorded<ModelCallResult>> {
      const asked = catalogAskedBy(request);
      const catalog = asked ? snapshotCatalog(catalogSources, asked.catalog) : undefined;
      if (catalog?.refused) return { catalog, at: catalog.at };
      const withTools = asked && catalog ? withCatalogTools(asked.request, catalog.entries) : request;
      const { provider, modelName } = resolveModel(models, request.model);
      // Streamed text travels in heartbeat details, which Temporal keeps on the pending activity, not in history.
      const stream = createModelTextStream(Context.current(), request.step);
      // Reading the stored context heartbeats too, so a slow store is not taken for a dead worker.
      const callWithContext = async (context: Context): Promise<ModelCallResult> => {
        const assembled =
          'context' in withTools
            ? await assembleModelCall(payloadStore, modelContexts, withTools).catch((error: unknown) => {
                if (isPayloadNotFound(error)) warnOfPrivateStore?.(context.info.taskQueue);
                throw toNonRetryableFailure(error);
              })
            : { request: withTools, store: () => Promise.resolve(undefined) };
        const response = await generateModelTurn(provider, { ...assembled.request, modelName }, context, stream);
        checkModelResponseSize(response, maxModelResponseBytes);
        const ownQueue = modelCallQueue?.();
        const workerQueue = nextCallQueue(context.info.taskQueue, ownQueue);
        const stored = withWorkerQueue(await assembled.store(response), workerQueue, ownQueue?.startTimeoutMs);
        // Only a run that stores its answers with its context (the lean-history rules) knows a stored text.
        const textByReference = keepsLargePayloads && 'context' in withTools && withAnswer(withTools.context);
        const returned = textByReference ? await storeLongText(payloadStore, withTools, response) : response;
        return { ...returned, ...(stored ? { stored } : {}), ...(catalog ? { catalog } : {}) };
      };
      try {
        const result = await whileHeartbeating(callWithContext, () => stream.progress());
        return { ...result, at: new Date().toISOString() };
      } finally {
        stream.stop();
      }
    },

    /**
     * Runs one validated tool call through the executor. Failures the tool could overcome on a retry (it threw, or
     * it timed out and opted into retries) are thrown so the tool's retry policy applies; the rest are data for the
     * model.
     */
    async executeTool(call: ExecuteToolInput): Promise<Recorded<ToolResult>> {
      // The periodic heartbeat repeats the latest progress, so Temporal keeps the newest whichever heartbeat goes last.
      let latestProgress: ToolProgress | undefined;
      const runTool = async (context: Context): Promise<ToolResult> => {
        const { config, values } = await resolveSecretReferences(call.config ?? {}, secrets, {
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
              // Progress from a long call (an MCP server's notifications) shows in the activity's heartbeat details.
              reportProgress: (progress) => {
                latestProgress = progress;
                context.heartbeat(progress);
              },
            },
          },
        );
        const result = redactSecrets(executed, values);
        if (result.success) {
          return call.outputByReference && keepsLargePayloads
            ? await storeLargeOutput(payloadStore, call, result)
            : result;
        }
        if (result.errorType === 'cancelled') throw new CancelledFailure(result.error);
        if (result.errorType === 'timeout' && !call.retryTimeouts) {
          return {
            ...result,
            error: `${result.error}. It may still have had an effect: it was not retried, so check before calling it again.`,
          };
        }
        if (result.errorType === 'execution' || result.errorType === 'timeout') {
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
      };
      return { ...(await whileHeartbeating(runTool, () => latestProgress)), at: new Date().toISOString() };
    },
  };
}

export type RelayActivities = ReturnType<typeof createActivities>;

/** This worker's own queue for model calls, and whether it still takes them. */
export interface OwnModelCallQueue {
  name: string;
  open: boolean;
  /** How long a call sent there may wait to start, when not the run's default (see StoredModelContext). */
  startTimeoutMs?: number;
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

/**
 * The answer with a text over `outputByReferenceBytes` beside tool calls put in the payload store, its ref and preview
 * in its place. A final answer keeps its text: it is the run's output.
 */
async function storeLongText(
  store: PayloadStore,
  request: ModelContextRequest,
  response: ModelResponse,
): Promise<ModelResponse> {
  const { text, ...rest } = response;
  if (text === undefined || (response.toolCalls ?? []).length === 0) return response;
  const stored = await storeIfLarge(store, request, text);
  if (!stored) return response;
  return { ...rest, storedText: { storedText: stored.ref, ...stored.summary } satisfies StoredModelText };
}

/** The result with an output over `outputByReferenceBytes` put in the payload store, its ref and preview in its place. */
async function storeLargeOutput(
  store: PayloadStore,
  call: ExecuteToolInput,
  result: ToolSuccess,
): Promise<ToolSuccess> {
  const json = toJsonText(result.data);
  const stored = json === undefined ? undefined : await storeIfLarge(store, call, json);
  if (!stored) return result;
  return { ...result, data: { storedOutput: stored.ref, ...stored.summary } satisfies StoredToolOutput };
}

/**
 * Puts a text over `outputByReferenceBytes` in the run's scope of the store: its ref, with the size and preview that
 * history keeps in its place. Undefined for a shorter text, which stays where it is.
 */
async function storeIfLarge(
  store: PayloadStore,
  { tenantId, runId }: { tenantId: string; runId: string },
  text: string,
): Promise<{ ref: PayloadRef; summary: Omit<StoredModelText, 'storedText'> } | undefined> {
  const bytes = utf8ByteLength(text);
  if (bytes <= outputByReferenceBytes) return undefined;
  const ref = await store.put({ tenantId, runId }, new TextEncoder().encode(text));
  return { ref, summary: { bytes, preview: text.slice(0, storedOutputPreviewLength) } };
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

/** What a catalog snapshot is read from: the worker's tools, limits and models, and whether it notifies approvers. */
type CatalogSources = Pick<
  ActivityDependencies,
  'registry' | 'executor' | 'models' | 'approvalWebhooks' | 'approvalReminderMs'
>;

/**
 * Reads the tools a run may use from this worker's registry (names, descriptions, JSON Schemas, approval flags), each
 * with the time limit the executor will apply, so the activity's own timeout can agree with it, and marked
 * `notifiesApprovers` when it requires approval and this worker has an approval webhook (with the reminder's lead
 * time, the tool's own or else the worker's, when there is one); or refuses a run naming a tool or a model the worker
 * lacks. A worker without a webhook refuses, when it starts, a tool that asks for reminders (relay-plugin.ts).
 */
function snapshotCatalog(
  { registry, executor, models, approvalWebhooks, approvalReminderMs }: CatalogSources,
  input: CatalogRequest & { model?: string },
): CatalogSnapshot {
  const at = new Date().toISOString();
  try {
    const refused = input.model === undefined ? undefined : refuseUnservedModel(models, input.model);
    if (refused) return { refused, at };
    // The lead time of the tenant's webhook, when it sets one, over the worker's; a tool's own over both.
    const tenantMs =
      approvalWebhooks && input.tenantId !== undefined ? tenantReminderMs(approvalWebhooks, input.tenantId) : undefined;
    // A tool's own reminder is kept only where this worker sends notices: without them a run must not wait to remind.
    const entries = registry.catalog(input.tools).map(({ remindApproversBeforeMs, ...entry }) => ({
      ...entry,
      timeoutMs: executor.timeoutFor(entry.name),
      ...(approvalWebhooks && entry.requiresApproval
        ? approverNotices(remindApproversBeforeMs ?? tenantMs ?? approvalReminderMs)
        : {}),
    }));
    return { entries, at };
  } catch (error) {
    if (RelayError.isInstance(error) && error.code === 'tool_not_found') {
      const details = error.details ? { details: error.details } : {};
      return { refused: { code: 'unknown_tool', message: error.message, ...details }, at };
    }
    throw toNonRetryableFailure(error);
  }
}

function approverNotices(
  reminderMs: number | undefined,
): Pick<ToolCatalogEntry, 'notifiesApprovers' | 'remindApproversBeforeMs'> {
  return { notifiesApprovers: true, ...(reminderMs !== undefined ? { remindApproversBeforeMs: reminderMs } : {}) };
}

/**
 * What a run's first model call asks of the catalog (rule `catalog-in-first-model-call`), with its model to check,
 * and the request it came in.
 */
function catalogAskedBy(
  request: ModelRequest | ModelContextRequest,
): { catalog: CatalogRequest & { model: string }; request: ModelContextRequest } | undefined {
  if (!('context' in request) || !('tools' in request.context) || !('catalog' in request.context.tools))
    return undefined;
  const { model, tenantId } = request;
  return { catalog: { ...request.context.tools.catalog, model, tenantId }, request };
}

/** The request with the catalog's tools in place of the question, as if the run had sent them whole. */
function withCatalogTools(request: ModelContextRequest, entries: readonly ToolCatalogEntry[]): ModelContextRequest {
  return { ...request, context: { ...request.context, tools: { specs: modelToolSpecs(entries) } } };
}

function refuseUnservedModel(models: ModelRegistry, modelId: string): RunRefusal | undefined {
  try {
    models.resolve(modelId);
    return undefined;
  } catch (error) {
    if (RelayError.isInstance(error) && error.code === 'model_not_configured') {
      return { code: 'model_not_configured', message: error.message };
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

function isPayloadNotFound(error: unknown): boolean {
  return RelayError.isInstance(error) && error.code === 'payload_not_found';
}

/** Configuration mistakes do not heal on a retry: fail at once with the error's code as the failure type. */
function toNonRetryableFailure(error: unknown): unknown {
  if (!RelayError.isInstance(error)) return error;
  return ApplicationFailure.create({ type: error.code, message: error.message, nonRetryable: true });
}
