import type { Logger as TemporalLogger } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { DefaultLogger } from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { ExecuteToolInput, Recorded } from '../../activities/index.js';
import { ModelRegistry } from '../model/model-registry.js';
import type { SecretSource } from '../security/resolve-secret-references.js';
import type { ToolResult } from '../shared/tool-result.js';
import { maximumAttemptsOf, retriesTimeouts } from '../shared/tool-catalog.js';
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

/** One tool call running as a worker runs it, in a mock activity: no server, no workflow. */
export interface ToolExecution {
  /**
   * The result of the call's first attempt as the run would record it. Rejects as the activity does where Temporal
   * would act: an `ApplicationFailure` of type `tool_execution_failed` (the tool threw, or timed out with a `retry`
   * policy of its own, while attempts are left: a run retries the call), or a `CancelledFailure` (the call was
   * cancelled). A timeout resolves for a tool without `retry`, and for one whose policy allows a single attempt.
   */
  readonly result: Promise<ToolResult>;
  /** How many heartbeats the activity has sent so far (one a second while the tool runs). */
  readonly heartbeats: number;
  /** Cancels the call, as cancelling its run does: the tool's `ctx.signal` aborts. */
  cancel(): void;
}

/** Starts one call of `tool` through the worker's tool activity (validation, guardrails, secrets, heartbeats). */
export function startTool(tool: ToolDefinition, input: unknown, options: ToolCallOptions = {}): ToolExecution {
  const registry = new ToolRegistry([tool]);
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry, options.executor),
    models: new ModelRegistry({}),
    ...(options.secrets !== undefined ? { secrets: options.secrets } : {}),
  });
  const call = toolCallInput(tool, input, options);
  const environment = new MockActivityEnvironment(
    {
      activityType: 'executeTool',
      workflowType: 'agentRun',
      workflowExecution: { workflowId: call.runId, runId: '00000000-0000-0000-0000-000000000000' },
      // The first of the attempts a run would make: on a tool's last, a timeout is returned rather than retried.
      retryPolicy: { maximumAttempts: maximumAttemptsOf(toCatalogEntry(tool)) },
    },
    { logger: options.logger ?? new DefaultLogger('WARN') },
  );
  let heartbeats = 0;
  environment.on('heartbeat', () => (heartbeats += 1));
  return {
    result: environment
      .run((toolCall: ExecuteToolInput) => activities.executeTool(toolCall), call)
      .then((recorded) => toolResultOf(recorded as Recorded<ToolResult>)),
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
