import type { ModelProvider } from '../model/model-provider.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import type { SecretSource } from '../security/resolve-secret-references.js';
import type { PayloadStoreConfig } from '../store/create-payload-store.js';
import type { ToolEntry } from '../tool/tool-source.js';
import type { ToolExecutorOptions } from '../tool/tool-executor.js';
import type { ApprovalWebhooks } from '../notify/approval-webhook.js';
import type { DurationInput } from '../shared/run-types.js';

/** A project's Relay-E setup, read by `relay-e dev`, `relay-e worker` and `relay-e serve` from `relay-e.config.ts`. */
export interface RelayConfig {
  /** The tools runs may call: `defineTool` tools and tool sources such as `mcpTools(…)`. */
  tools: readonly ToolEntry[];
  /**
   * Model providers by the prefix of the model id, added to those the environment configures
   * (`OPENAI_API_KEY`, `ANTHROPIC_API_KEY`, `RELAY_E_COMPATIBLE_BASE_URL`); a provider named here wins.
   * @default {} (only the environment's providers)
   */
  models?: Record<string, ModelProvider>;
  /** Guardrails, size limit and default timeout for every tool. */
  executor?: ToolExecutorOptions;
  /**
   * What `{ "$secret": "NAME" }` in a run's config resolves to, inside the tool activity only.
   * @default `RELAY_E_SECRET_<NAME>` environment variables
   */
  secrets?: SecretSource;
  /**
   * The task queue workers poll and clients start runs on; `--task-queue` and `RELAY_E_TASK_QUEUE` win over it.
   * @default 'relay-e'
   */
  taskQueue?: string;
  /**
   * Payload encryption keys for workers and clients alike.
   * @default keys from `RELAY_E_ENCRYPTION_KEYS`, else no encryption
   */
  encryption?: EncryptionOptions;
  /**
   * Where workers keep model-call contexts, so a run's history holds only what is new in each step
   * (docs/configuration.md, "Payload store"). Workers of one task queue should share one: a call that lands on a
   * worker without the context it refers to is sent again whole. Encrypted with `encryption` unless given its own.
   * @default `{ kind: 'file', directory: '.relay-e/payloads' }` under the working folder
   */
  payloadStore?: PayloadStoreConfig;
  /**
   * Where workers tell approvers that a tool call waits for them: a signed JSON `POST` per call, to one webhook or
   * to one per tenant (docs/runs-and-approvals.md, "Telling approvers").
   * @default the webhook `RELAY_E_APPROVAL_WEBHOOK_URL` and `RELAY_E_APPROVAL_WEBHOOK_SECRET` name, else none
   */
  approvalWebhook?: ApprovalWebhooks;
  /**
   * Reminds approvers of a call still waiting this long before it expires (`'1h'`, or milliseconds), through
   * `approvalWebhook` (docs/runs-and-approvals.md, "Telling approvers").
   * @default `RELAY_E_APPROVAL_REMINDER`, else no reminder
   */
  remindApproversBeforeExpiry?: DurationInput;
  /**
   * How long a run's model call sent to the worker that stored its context may wait to start there before it goes
   * whole to the shared queue (`'30s'`, or milliseconds; 1 second to 10 minutes; docs/operations.md, "Worker
   * scaling"). For `relay-e worker` with the default payload folder, the only workers that send calls back to
   * themselves; `relay-e dev` and workers sharing a `payloadStore` have no use for it.
   * @default '5 seconds'
   */
  modelCallStartTimeout?: DurationInput;
  /**
   * How long a stopping `relay-e worker` or `relay-e dev` (SIGTERM, Ctrl-C) lets running tools and model calls finish
   * before it cancels them (`'30s'`, or milliseconds): the worker's `shutdownGraceTime`. Give the container's stop
   * timeout a few seconds more (docs/operations.md, "Worker scaling"). `RELAY_E_SHUTDOWN_GRACE` wins over it.
   * @default '25s'
   */
  shutdownGraceTime?: DurationInput;
  /**
   * How often the payload janitor of `relay-e worker` and `relay-e dev` passes (`'30m'`, or milliseconds), or `false`
   * for none. One janitor per store is enough and each pass asks Temporal about up to 100 runs, so workers on several
   * machines sharing a store can leave it to one of them (docs/configuration.md, "Janitor").
   * `RELAY_E_PAYLOAD_JANITOR` (a duration, or `off`) wins over it.
   * @default '10m'
   */
  payloadJanitorInterval?: DurationInput | false;
}

/** Types a `relay-e.config.ts` default export; returns the config unchanged. */
export function defineConfig(config: RelayConfig): RelayConfig {
  return config;
}
