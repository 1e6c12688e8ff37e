import type { ToolExecutor } from '../src/tool/tool-executor.js';
import type { ToolRegistry } from '../src/tool/tool-registry.js';
import type { ModelRegistry } from '../src/model/model-registry.js';
import type { SecretSource } from '../src/security/resolve-secret-references.js';
import type { PayloadStore } from '../src/store/payload-store.js';
import type { ApprovalRuleContext } from '../src/tool/define-tool.js';
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

/** This worker's own queue for model calls, and whether it still takes them. */
export interface OwnModelCallQueue {
  name: string;
  open: boolean;
  /** How long a call sent there may wait to start, when not the run's default (see StoredModelContext). */
  startTimeoutMs?: number;
}
