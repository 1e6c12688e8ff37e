import { ActivityFailure, ApplicationFailure, CancelledFailure, RetryState } from '@temporalio/common';
import type { Logger as TemporalLogger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { ExecuteToolInput, Recorded } from '../../activities/index.js';
import { ModelRegistry } from '../model/model-registry.js';
import type { SecretSource } from '../security/resolve-secret-references.js';
import { describeFailure } from '../../workflows/describe-failure.js';
import { ToolCallValidator } from '../../workflows/tool-call-validator.js';
import type { ToolCallCheck } from '../../workflows/tool-call-validator.js';
import { boundEchoedInput } from '../shared/payload-limits.js';
import type { ToolFailure, ToolResult } from '../shared/tool-result.js';
import { maximumAttemptsOf, retriesTimeouts } from '../shared/tool-catalog.js';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import { toCatalogEntry } from '../tool/tool-catalog.js';
import type { ToolDefinition } from '../tool/define-tool.js';
import { ToolExecutor } from '../tool/tool-executor.js';
import type { ToolExecutorOptions } from '../tool/tool-executor.js';
import { ToolRegistry } from '../tool/tool-registry.js';

/** Who calls the tool and with what: the `ToolContext` fields a run would give it. */
export interface ToolCallOptions {
  /** @default 'test-tenant' */
  tenantId?: string;
  userId?: string;
  sessionId?: string;
  /** @default 'run_test' */
  runId?: string;
  /** @default 'call_1_0' */
  toolCallId?: string;
  /**
   * The idempotency key `ctx.idempotencyKey` carries.
   * @default `${runId}/<first execution id>/${toolCallId}` with `first-execution` standing for the id, as a run makes it
   */
  idempotencyKey?: string;
  /**
   * The run's `config`; `{ "$secret": "NAME" }` references resolve from `secrets`.
   * @default {}
   */
  config?: Record<string, unknown>;
  /** What secret references resolve to, as `createWorker({ secrets })` takes it. */
  secrets?: SecretSource;
  /** The worker's executor options: guardrails, size limit, default timeout. */
  executor?: ToolExecutorOptions;
  /**
   * Receives what the tool logs through `ctx.logger` (and the activity's own records).
   * @default records at WARN and above, on the console
   */
  logger?: TemporalLogger;
}

/** One tool call as a run makes it: the run's input check, then the activity in a mock environment; no server. */
export interface ToolExecution {
  /**
   * The result of the call's first attempt as the run would record it: the run's own input check first (the tool's
   * JSON Schema, as its catalog holds it), then the activity. Rejects as the activity does where Temporal would act:
   * an `ApplicationFailure` of type `tool_execution_failed` (the tool threw, or timed out with a `retry` policy of its
   * own, while attempts are left: a run retries the call), or a `CancelledFailure` (the call was cancelled). A call
   * Temporal does not retry (its policy allows one attempt, or the failure is non-retryable) resolves to the
   * `execution` failure a run records, as does a timeout of a tool without `retry`.
   */
  readonly result: Promise<ToolResult>;
  /** How many heartbeats the activity has sent so far (one a second while the tool runs). */
  readonly heartbeats: number;
  /** Cancels the call, as cancelling its run does: the tool's `ctx.signal` aborts. */
  cancel(): void;
}

/** Starts one call of `tool` as a run makes it: the run's input check, then the worker's tool activity. */
export function startTool(tool: ToolDefinition, input: unknown, options: ToolCallOptions = {}): ToolExecution {
  const registry = new ToolRegistry([tool]);
  const entry = toCatalogEntry(tool);
  const call = toolCallInput(tool, input, options);
  const check = new ToolCallValidator([entry]).check(tool.name, input);
  if (!check.valid) return { result: Promise.resolve(refusal(call, check)), heartbeats: 0, cancel: () => {} };
  // The activity gets the input the run's check passed on (parsed; an MCP server's tool's as given).
  return executeInActivity(registry, entry, { ...call, input: check.input }, options);
}

/** Runs the call through the tool activity in a mock activity environment, as a worker runs its first attempt. */
function executeInActivity(
  registry: ToolRegistry,
  entry: ToolCatalogEntry,
  call: ExecuteToolInput,
  options: ToolCallOptions,
): ToolExecution {
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry, options.executor),
    models: new ModelRegistry({}),
    ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
  });
  const environment = new MockActivityEnvironment(
    {
      activityType: 'executeTool',
      workflowType: 'agentRun',
      workflowExecution: { workflowId: call.runId, runId: '00000000-0000-0000-0000-000000000000' },
      // The first of the attempts a run would make: on a tool's last, a timeout is returned rather than retried.
      retryPolicy: { maximumAttempts: maximumAttemptsOf(entry) },
    },
    { logger: options.logger ?? new DefaultLogger('WARN') },
  );
  let heartbeats = 0;
  environment.on('heartbeat', () => (heartbeats += 1));
  return {
    result: environment
      .run((toolCall: ExecuteToolInput) => activities.executeTool(toolCall), call)
      .then(
        (recorded) => toolResultOf(recorded as Recorded<ToolResult>),
        (error: unknown) => recordedFailure(error, call, entry),
      ),
    get heartbeats() {
      return heartbeats;
    },
    cancel: () => environment.cancel(),
  };
}

/** Runs one call of `tool` as a worker would and returns its result; see {@link ToolExecution.result}. */
export function runTool(tool: ToolDefinition, input: unknown, options: ToolCallOptions = {}): Promise<ToolResult> {
  return startTool(tool, input, options).result;
}

/** The tool's result without the time the activity adds for the run's event log. */
function toolResultOf({ at, ...result }: Recorded<ToolResult>): ToolResult {
  void at;
  return result;
}

/** The message Temporal gives the `ActivityFailure` a workflow sees, with the activity's own failure as its cause. */
const activityFailedMessage = 'Activity task failed';

/**
 * The `execution` failure a run records (recordToolActivityFailure in workflows/tool-calls.ts) when Temporal attempts
 * the call no more; rethrows a failure it would retry, and a cancellation, which ends the run instead.
 */
function recordedFailure(error: unknown, call: ExecuteToolInput, entry: ToolCatalogEntry): ToolFailure {
  const nonRetryable = error instanceof ApplicationFailure && error.nonRetryable;
  if (error instanceof CancelledFailure || (maximumAttemptsOf(entry) !== 1 && !nonRetryable)) throw error;
  const retryState = nonRetryable ? RetryState.NON_RETRYABLE_FAILURE : RetryState.MAXIMUM_ATTEMPTS_REACHED;
  const cause = error instanceof Error ? error : new Error(String(error));
  const seen = new ActivityFailure(activityFailedMessage, 'executeTool', undefined, retryState, undefined, cause);
  return { success: false, ...callIds(call), error: describeFailure(seen), errorType: 'execution' };
}

/** The input check's refusal as a run records it (refuseInput in workflows/tool-calls.ts): no activity runs. */
function refusal(call: ExecuteToolInput, check: ToolCallCheck & { valid: false }): ToolFailure {
  const { errorType, error, issues } = check;
  return { success: false, ...callIds(call), error, errorType, issues, input: boundEchoedInput(call.input) };
}

function callIds(call: ExecuteToolInput): { toolCallId: string; toolName: string } {
  return { toolCallId: call.toolCallId, toolName: call.toolName };
}

function toolCallInput(tool: ToolDefinition, input: unknown, options: ToolCallOptions): ExecuteToolInput {
  const runId = options.runId ?? 'run_test';
  const toolCallId = options.toolCallId ?? 'call_1_0';
  // As a run asks (toolCallOptions in workflows/tool-calls.ts), leaving out the default `false` as lean runs do.
  const retryTimeouts = retriesTimeouts(tool);
  return {
    toolName: tool.name,
    toolCallId,
    input,
    idempotencyKey: options.idempotencyKey ?? `${runId}/first-execution/${toolCallId}`,
    tenantId: options.tenantId ?? 'test-tenant',
    ...(options.userId !== undefined ? { userId: options.userId } : {}),
    ...(options.sessionId !== undefined ? { sessionId: options.sessionId } : {}),
    runId,
    config: options.config ?? {},
    ...(retryTimeouts ? { retryTimeouts } : {}),
  };
}
