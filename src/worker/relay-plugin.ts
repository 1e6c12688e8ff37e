import type { ClientOptions, ClientPlugin } from '@temporalio/client';
import { SimplePlugin } from '@temporalio/plugin';
import type { DataConverter } from '@temporalio/common';
import { NativeConnection, Runtime } from '@temporalio/worker';
import type {
  NativeConnectionPlugin,
  ReplayWorkerOptions,
  Worker,
  WorkerOptions,
  WorkerPlugin,
  WorkflowBundleOption,
} from '@temporalio/worker';
import { createActivities } from '../../activities/index.js';
import type { ActivityDependencies, OwnModelCallQueue, RelayActivities } from '../../activities/index.js';
import { ModelRegistry } from '../model/model-registry.js';
import type { ModelProvider } from '../model/model-provider.js';
import { toEncryptionKeyRing } from '../security/encryption-keys.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import type { SecretSource } from '../security/resolve-secret-references.js';
import type { PayloadStore } from '../store/payload-store.js';
import { withEncryption } from '../security/with-encryption.js';
import { RelayError } from '../shared/errors.js';
import { modelDeltaBatchMs } from '../shared/run-types.js';
import { relaySearchAttributeDefinitions } from '../shared/search-attributes.js';
import { ToolExecutor } from '../tool/tool-executor.js';
import type { ToolExecutorOptions } from '../tool/tool-executor.js';
import { errorMessage } from '../shared/error-message.js';
import { compileWorkflowSourceAsBuilt, relayWorkflowsPath, withRelaySharedModules } from './relay-workflows.js';
import { isToolSource } from '../tool/tool-source.js';
import type { LoadedTools, ToolEntry } from '../tool/tool-source.js';
import type { ToolSourceOptions } from './resolve-tool-registry.js';
import { resolveToolRegistry } from './resolve-tool-registry.js';
import { startCatalogPublisher } from './worker-catalog-publisher.js';
import type { WorkerCatalogPublication } from '../shared/worker-catalog.js';
import { connectionAddressOf } from './connection-address.js';
import { closePluginConnection, helperConnectionOf, sdkDefaultAddress } from './plugin-connection.js';
import type { HelperConnection } from './plugin-connection.js';
import { modelCallSlotsOf, refuseActivityRateLimits, startModelCallWorker } from './model-call-worker.js';
import type { ModelCallSlots } from './model-call-worker.js';
import { approvalReminderMs, checkApprovalWebhook } from '../notify/approval-webhook.js';
import type { DurationInput } from '../shared/run-types.js';
import { durationOptionMs } from '../shared/duration-option.js';
import { defaultModelCallStartMs } from '../shared/transcript.js';
import type { ApprovalWebhooks } from '../notify/approval-webhook.js';

export interface RelayPluginOptions extends ToolSourceOptions {
  /** Model providers by the prefix of the model id: `{ openai: …, scripted: scriptedModel(…) }`. */
  models: Record<string, ModelProvider>;
  /** Guardrails, size limit and default timeout for every tool. */
  executor?: ToolExecutorOptions;
  /**
   * Encrypt every payload (run input, transcript, tool inputs and results, memo, summaries) with AES-256-GCM before
   * it reaches Temporal; clients need the same keys (`RelayClient.connect({ encryption })`).
   * @default undefined (payloads are stored as JSON)
   */
  encryption?: EncryptionOptions;
  /**
   * What `{ "$secret": "NAME" }` in a run's `config` resolves to, inside the tool activity only: history and events
   * keep the reference, tools get the value, and a value a tool echoes is redacted from its result.
   * @default undefined (a run that refers to a secret fails that tool call)
   */
  secrets?: SecretSource;
  /**
   * The largest model response, as JSON, a run accepts; a larger one fails the run with `payload_too_large`
   * before Temporal sees it (its own limit is 2 MiB a payload, and the next model call carries the response again).
   * At most 1_572_864 (1.5 MiB, the largest `maxTranscriptBytes`): a larger value is refused when the plugin is made.
   * @default 1_048_576 (1 MiB)
   */
  maxModelResponseBytes?: number;
  /**
   * Where model calls keep a run's transcript and tools, so each call's input in history carries only what is new
   * since the last call. Workers that share a task queue should share a store: a call that lands on a worker
   * lacking the stored context fails fast and the run sends it again with the whole context (a
   * `model_context_resent` event says so), which is safe after a restart but costs a second call each time when
   * every worker keeps its own. `RelayPlugin.create` calls its `prepare()`, so a store the worker cannot use is
   * refused there, with its error. The caller closes a store it gives.
   * @default a store in this worker's memory, bounded to 64 MiB (`createMemoryPayloadStore`'s default)
   */
  payloadStore?: PayloadStore;
  /**
   * Whether tools keep outputs, and the model activity texts beside tool calls, over 4 KiB in `payloadStore`, with
   * only a ref in history (runs started under the lean-history rules). Only for a store every worker of the task
   * queue reads: a stored output has no copy elsewhere to send again, so a run whose next model call lands on a
   * worker that cannot read it fails.
   * @default true when `payloadStore` is given, false for the default memory store
   */
  keepLargePayloadsInStore?: boolean;
  /**
   * Sends a run's next model call to the worker that stored its context: the worker polls a task queue of its own
   * for model calls beside the shared one, and a call's result names it. A call that worker does not start within
   * `modelCallStartTimeout` (it stopped or died) is sent to the shared task queue with the whole context, and a
   * `model_context_resent` event says so. For stores other workers cannot read; a shared store needs no affinity.
   * Such a worker refuses activity rate limits (`maxActivitiesPerSecond`, `maxTaskQueueActivitiesPerSecond`): they
   * would hold only the shared queue, not the calls sent back to it.
   * @default true for the default memory store, false when `payloadStore` is given
   */
  keepModelCallsOnWorker?: boolean;
  /**
   * With `keepModelCallsOnWorker`, how long a run's model call sent to this worker's own queue may wait to be started
   * before the run takes the worker for gone and sends the call whole to the shared queue (`'30s'`, or milliseconds;
   * 1 second to 10 minutes). The wait counts a call queued behind this worker's busy activity slots too, so raise it
   * where many model calls run at once; a worker that dies costs each of its runs this long.
   * @default '5 seconds'
   */
  modelCallStartTimeout?: DurationInput;
  /**
   * Tells approvers when a tool call starts waiting for them: a signed JSON `POST` to the tenant's webhook for each
   * call (docs/runs-and-approvals.md, "Telling approvers"). One webhook for every tenant, or a function that picks
   * one per tenant (undefined: not notified). Checked when the plugin is made; the secret never enters history.
   * @default undefined (approvers look for themselves: inbox, CLI, API)
   */
  approvalWebhook?: ApprovalWebhooks;
  /**
   * Reminds approvers of a call still waiting this long before it expires (`'1h'`, or milliseconds): one
   * `approval.expiring` notice through `approvalWebhook`, for calls whose wait is longer. Needs `approvalWebhook`.
   * @default undefined (no reminder)
   */
  remindApproversBeforeExpiry?: DurationInput;
  /**
   * A pre-built bundle of Relay-E's workflows (`bundleRelayWorkflows()`), used when the worker has no workflows of
   * its own; without it the worker bundles them on start, which delays its first poll. With `encryption`, make it with
   * `bundleRelayWorkflows({ encryption: true })`, or its workflows store the failures they write in the clear.
   * @default undefined
   */
  workflowBundle?: WorkflowBundleOption;
  /**
   * Check when the worker is created (in `Worker.create`, which then rejects) that the server knows Relay-E's search
   * attributes, so a run cannot get stuck on a server where they were never registered.
   * @default true
   */
  checkSearchAttributes?: boolean;
  /**
   * Announce the worker's tools and models on its task queue while it runs, so clients refuse a run that names an
   * unknown tool or model before it starts.
   * @default true
   */
  publishCatalog?: boolean;
}

/**
 * Relay-E as a Temporal plugin: give it to your own `Worker.create({ plugins: [plugin] })` and it registers the
 * agent-run workflows (unless the worker brings its own `workflowsPath` or bundle: re-export
 * `@relay-e/engine/workflows` from it), the activities bound to your tools and models, and the encryption codec;
 * `Client`s given the plugin get the codec too. One plugin serves one worker: its tools close when that worker stops.
 */
export class RelayPlugin implements WorkerPlugin, ClientPlugin, NativeConnectionPlugin {
  readonly name = 'relay-e';
  /**
   * Adds the activities and the codec as the SDK's own plugins do. Held rather than extended: its `configureWorker`
   * is synchronous, and this plugin's waits for the search-attribute check, so a refused worker is never created.
   */
  readonly #base: SimplePlugin;
  readonly #options: RelayPluginOptions;
  readonly #tools: LoadedTools;
  readonly #modelPrefixes: string[];
  readonly #activities: RelayActivities;
  /** This worker's own model-call queue once it runs, and whether it still takes calls (keepModelCallsOnWorker). */
  readonly #modelCallQueue: OwnModelCallQueueHolder | undefined;
  /**
   * The worker's activity slots as its options give them when this plugin configures it, for its model-call worker
   * (the running worker holds only the compiled tuner).
   */
  #modelCallSlots: ModelCallSlots = {};
  /** The task queue of the worker this plugin configured: it serves that one alone. */
  #configuredTaskQueue: string | undefined;
  /** The closing of the tool sources, once begun: a plugin whose tools are closed configures no worker. */
  #toolsClosed: Promise<void> | undefined;

  private constructor(
    options: RelayPluginOptions,
    tools: LoadedTools,
    reminder: { approvalReminderMs?: number },
    modelCallQueue: OwnModelCallQueueHolder | undefined,
  ) {
    const activities = pluginActivities(options, tools, {
      ...reminder,
      ...(modelCallQueue ? { modelCallQueue: () => modelCallQueue.current?.() } : {}),
    });
    this.#base = new SimplePlugin({
      name: 'relay-e',
      activities,
      // A function, so the codec goes after the codecs the worker or client already has.
      ...(options.encryption
        ? { dataConverter: (existing: DataConverter | undefined) => withEncryption(existing, options.encryption) ?? {} }
        : {}),
    });
    this.#options = options;
    this.#tools = tools;
    this.#modelPrefixes = Object.keys(options.models).sort();
    this.#activities = activities;
    this.#modelCallQueue = modelCallQueue;
  }

  /** Creates the plugin; tool sources that must connect first are connected here. */
  static async create(options: RelayPluginOptions): Promise<RelayPlugin> {
    // A per-tenant function is checked each time it answers (in the notice activity), a single webhook here.
    if (options.approvalWebhook && typeof options.approvalWebhook !== 'function') {
      checkApprovalWebhook(options.approvalWebhook);
    }
    // Checked before tool sources connect, so a bad reminder leaves no MCP server running.
    const reminder = approvalReminderOption(options);
    const modelCallQueue = ownModelCallQueueOption(options);
    if (!options.approvalWebhook) refuseRemindingSourcesWithoutWebhook(options.tools ?? []);
    // Keys that cannot be used are refused now, not when a worker's codec is built after the tools opened.
    if (options.encryption) toEncryptionKeyRing(options.encryption);
    // A store the worker cannot use (unreachable, refused, short of a privilege) would fail every run's model calls
    // after the worker started; before the tools, so its refusal leaves no MCP server running.
    await options.payloadStore?.prepare?.();
    const tools = await resolveToolRegistry(options);
    if (!options.approvalWebhook) await refuseRemindersWithoutWebhook(tools);
    try {
      return new RelayPlugin(options, tools, reminder, modelCallQueue);
    } catch (error) {
      // An option the activities refuse (maxModelResponseBytes): no plugin is returned to close the sources.
      await tools.close();
      throw error;
    }
  }

  /** The model id prefixes this plugin's worker serves. */
  get modelPrefixes(): string[] {
    return [...this.#modelPrefixes];
  }

  /** The tools this plugin's worker serves. */
  get tools() {
    return this.#tools.registry;
  }

  /**
   * Closes the plugin's tool sources (an MCP server's connection or process), as its worker does when it stops: for a
   * plugin whose worker never ran, such as after a failed `Worker.create`. Closing again does nothing more.
   */
  async close(): Promise<void> {
    await this.#closeTools();
  }

  #closeTools(): Promise<void> {
    this.#toolsClosed ??= this.#tools.close();
    return this.#toolsClosed;
  }

  configureClient(options: ClientOptions): ClientOptions {
    return this.#base.configureClient(options);
  }

  /**
   * Refuses to be a connection's plugin. The SDK applies a connection's plugins to every worker on it: another worker
   * sharing the connection would take Relay-E's workflows, and the model-call worker this plugin starts would start
   * one of its own, and that one another, without end.
   */
  configureNativeConnection(): never {
    // Nothing will run a worker of this plugin to close its tool sources, and an MCP server's process would stay.
    // Closing never rejects: a source that fails to close is logged by the closing itself.
    void this.#closeTools();
    throw new RelayError(
      'invalid_input',
      "Relay-E's plugin configures one worker: give it to Worker.create({ plugins }), not to NativeConnection.connect, whose plugins configure every worker on the connection (Relay-E's own model-call worker included)",
    );
  }

  configureReplayWorker(options: ReplayWorkerOptions): ReplayWorkerOptions {
    return this.#base.configureReplayWorker(options);
  }

  async configureWorker(options: WorkerOptions): Promise<WorkerOptions> {
    // Refused before the checks below, which close the tools on a refusal: the first worker still uses them.
    this.#refuseUnlessUnused();
    const configured = this.#base.configureWorker(options);
    try {
      await this.#refuseUnfitWorker(configured);
    } catch (error) {
      // A refused worker is never created, so it never runs to close the tools (an MCP server's process would stay).
      await this.#closeTools();
      throw error;
    }
    this.#modelCallSlots = modelCallSlotsOf(configured);
    this.#configuredTaskQueue = configured.taskQueue;
    return this.#withWorkflows(withHeartbeatsForStreaming(configured));
  }

  /**
   * A plugin holds one worker's model-call queue and closes its tools when that worker stops, so a second worker
   * given it would have its model calls sent to the other worker's queue and its tools closed under it; and a worker
   * given a plugin whose tools are closed would fail every call to an MCP server's tool.
   */
  #refuseUnlessUnused(): void {
    if (this.#configuredTaskQueue !== undefined) {
      throw new RelayError(
        'invalid_input',
        `This Relay-E plugin already configured the worker of task queue '${this.#configuredTaskQueue}': one plugin serves one worker (it routes that worker's model calls and closes its tools when it stops). Create a plugin for each worker with RelayPlugin.create`,
      );
    }
    if (this.#toolsClosed !== undefined) {
      throw new RelayError(
        'invalid_input',
        "This Relay-E plugin's tool sources are closed (by close(), or when a worker was refused): create a new plugin with RelayPlugin.create",
      );
    }
  }

  /** Refuses, before `Worker.create` makes the worker, what Relay-E's runs cannot work with. */
  async #refuseUnfitWorker(configured: WorkerOptions): Promise<void> {
    refusePinnedRelayWorkflows(configured);
    if (this.#modelCallQueue) refuseActivityRateLimits(configured);
    if (this.#options.checkSearchAttributes ?? true) await checkSearchAttributesOf(configured);
  }

  /** `configured` with Relay-E's workflows, or with the shared modules when the worker brings its own. */
  #withWorkflows(configured: WorkerOptions): WorkerOptions {
    if (configured.workflowBundle !== undefined) return configured;
    // The worker's own workflows re-export Relay-E's: share them as well, and leave the compiling of its files alone.
    if (configured.workflowsPath !== undefined) return withRelaySharedModules(configured);
    if (this.#options.workflowBundle !== undefined)
      return { ...configured, workflowBundle: this.#options.workflowBundle };
    const shared = withRelaySharedModules(configured);
    return {
      ...shared,
      workflowsPath: relayWorkflowsPath(),
      bundlerOptions: {
        ...shared.bundlerOptions,
        // The worker's own hook, if any, sees Relay-E's compile settings and has the last word.
        webpackConfigHook: (config) => {
          const compiled = compileWorkflowSourceAsBuilt(config);
          return configured.bundlerOptions?.webpackConfigHook?.(compiled) ?? compiled;
        },
      },
    };
  }

  async runWorker(worker: Worker, next: (worker: Worker) => Promise<void>): Promise<void> {
    const run = () => this.#base.runWorker(worker, next);
    try {
      const { connection, opened } = await this.#helperConnection(worker, run);
      try {
        await this.#runAnnounced(worker, connection, () => this.#runWithModelCallWorker(worker, connection, run));
      } finally {
        // Last: the model-call worker and the catalog withdrawal used it until now.
        if (connection && opened) await closePluginConnection(connection);
      }
    } finally {
      await this.#closeTools();
    }
  }

  /**
   * The connection of the model-call worker and the catalog publisher (none when neither runs): the worker's, or, for a
   * worker given none, one of the plugin's own (see plugin-connection.ts). A worker that cannot have it is only run to
   * stop, so it lets go of the connection the SDK opened for it.
   */
  async #helperConnection(worker: Worker, run: () => Promise<void>): Promise<HelperConnection> {
    const needed = this.#modelCallQueue !== undefined || (this.#options.publishCatalog ?? true);
    if (!needed) return { connection: undefined, opened: false };
    return helperConnectionOf(worker).catch(async (error: unknown) => {
      await runOnlyToStop(worker, run);
      throw error;
    });
  }

  /** What the worker announces: its tools, the tools its sources list that it left out, and its model prefixes. */
  #announcement(): Omit<WorkerCatalogPublication, 'workerId'> {
    const leftOut = this.#tools.leftOut();
    return {
      tools: this.#tools.registry.catalog(),
      ...(leftOut.length > 0 ? { leftOut } : {}),
      modelPrefixes: this.#modelPrefixes,
    };
  }

  /** Runs the worker with its tools and models announced on its task queue, and withdraws them once it stopped. */
  async #runAnnounced(
    worker: Worker,
    connection: NativeConnection | undefined,
    run: () => Promise<void>,
  ): Promise<void> {
    const publisher =
      connection && (this.#options.publishCatalog ?? true)
        ? startCatalogPublisher(
            {
              connection,
              namespace: worker.options.namespace,
              taskQueue: worker.options.taskQueue,
              // As every plugin left it: codecs of plugins configured after this one included.
              dataConverter: worker.options.dataConverter,
            },
            () => this.#announcement(),
            (message, error) => {
              Runtime.instance().logger.warn(`${message}: ${errorMessage(error)}`);
            },
            (message) => {
              Runtime.instance().logger.warn(message);
            },
          )
        : undefined;
    // An MCP server that adds or drops tools is announced at once, so clients check runs against what is served.
    const stopFollowing = this.#tools.onChange(() => publisher?.announce());
    try {
      await run();
    } finally {
      stopFollowing();
      await publisher?.stop();
    }
  }

  /** Runs the worker beside its own model-call worker, whose queue model calls name while both run. */
  async #runWithModelCallWorker(
    worker: Worker,
    connection: NativeConnection | undefined,
    run: () => Promise<void>,
  ): Promise<void> {
    const queue = this.#modelCallQueue;
    if (!queue || !connection) return run();
    const modelCalls = await startModelCallWorker(worker, connection, this.#activities, this.#modelCallSlots).catch(
      async (error: unknown) => {
        await runOnlyToStop(worker, run);
        throw error;
      },
    );
    // A worker shutting down closes its queue: the run's next call would find nobody polling it.
    const wait = queue.startTimeoutMs !== undefined ? { startTimeoutMs: queue.startTimeoutMs } : {};
    queue.current = () => ({ name: modelCalls.taskQueue, open: worker.getState() === 'RUNNING', ...wait });
    try {
      await run();
    } finally {
      await modelCalls.stop();
    }
  }
}

/**
 * Runs a worker that cannot go on, only to stop it at once. The SDK lets go of a worker's connection when the worker
 * stops; one created and never run keeps it, and the process would hang after reporting the error instead of exiting.
 */
async function runOnlyToStop(worker: Worker, run: () => Promise<void>): Promise<void> {
  let settled = false;
  const running = run()
    .catch((error: unknown) => {
      Runtime.instance().logger.warn(`The worker stopped after a failed start failed too: ${errorMessage(error)}`);
    })
    .finally(() => {
      settled = true;
    });
  // Plugins listed after this one may wait before they run the worker.
  while (!settled && worker.getState() === 'INITIALIZED') await new Promise((resolve) => setImmediate(resolve));
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await running;
}

/** Creates a {@link RelayPlugin}: `Worker.create({ …, plugins: [await createRelayPlugin({ tools, models })] })`. */
export function createRelayPlugin(options: RelayPluginOptions): Promise<RelayPlugin> {
  return RelayPlugin.create(options);
}

/**
 * {@link checkSearchAttributes} on the worker's connection. A worker given no connection connects to the SDK's default
 * address, so the check opens a connection of its own there.
 */
async function checkSearchAttributesOf(options: WorkerOptions): Promise<void> {
  const namespace = options.namespace ?? 'default';
  if (options.connection) return checkSearchAttributes(options.connection, namespace);
  const connection = await NativeConnection.connect();
  try {
    await checkSearchAttributes(connection, namespace, sdkDefaultAddress);
  } finally {
    await connection.close();
  }
}

/**
 * Fails with the commands that fix it when the namespace lacks Relay-E's search attributes. The commands name the
 * server the connection reaches (`address`, else where Relay-E opened it: see connection-address.ts), so
 * they register the attributes where the worker looks for them, not on a server at the CLI's default address.
 */
export async function checkSearchAttributes(
  connection: NativeConnection,
  namespace: string,
  address: string | undefined = connectionAddressOf(connection),
): Promise<void> {
  const response = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(response.customAttributes ?? {}));
  const missing = relaySearchAttributeDefinitions.filter((attribute) => !known.has(attribute.name));
  if (missing.length === 0) return;
  const server = address !== undefined ? ` --address ${address}` : '';
  const command = missing
    .map(
      (attribute) =>
        `temporal operator search-attribute create${server} --namespace ${namespace} --name ${attribute.name} --type ${attribute.type}`,
    )
    .join('\n  ');
  const where =
    address !== undefined
      ? ''
      : `\n(Add --address HOST:PORT of the server this worker's connection reaches, unless it is ${sdkDefaultAddress}.)`;
  throw new RelayError(
    'invalid_input',
    `The Temporal namespace '${namespace}'${address !== undefined ? ` at ${address}` : ''} lacks Relay-E's search attributes (${missing.map((a) => a.name).join(', ')}). Register them:\n  ${command}${where}`,
  );
}

/** A tool that asks for reminders on a worker that sends no notices would never remind anyone: it is refused. */
async function refuseRemindersWithoutWebhook(tools: LoadedTools): Promise<void> {
  const reminding = tools.registry.catalog().find((entry) => entry.remindApproversBeforeMs !== undefined);
  if (!reminding) return;
  await tools.close();
  throw new RelayError(
    'invalid_input',
    `Tool '${reminding.name}' reminds approvers before a call expires (remindApproversBeforeExpiryMs): the worker needs an approval webhook to send the reminder`,
  );
}

/** The activities bound to the plugin's tools, models and options. */
function pluginActivities(
  options: RelayPluginOptions,
  tools: LoadedTools,
  extras: Pick<ActivityDependencies, 'approvalReminderMs' | 'modelCallQueue'>,
): RelayActivities {
  return createActivities({
    registry: tools.registry,
    executor: new ToolExecutor(tools.registry, options.executor),
    models: new ModelRegistry(options.models),
    ...(options.maxModelResponseBytes !== undefined ? { maxModelResponseBytes: options.maxModelResponseBytes } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
    ...(options.payloadStore ? { payloadStore: options.payloadStore } : {}),
    ...(options.keepLargePayloadsInStore !== undefined
      ? { keepLargePayloadsInStore: options.keepLargePayloadsInStore }
      : {}),
    ...(options.approvalWebhook ? { approvalWebhooks: options.approvalWebhook } : {}),
    ...extras,
  });
}

/**
 * A tool source whose policies ask for reminders could add such a tool at any time (an MCP server's list changing),
 * after the start-up check of the worker's tools: it is refused before it opens.
 */
function refuseRemindingSourcesWithoutWebhook(tools: readonly ToolEntry[]): void {
  const reminding = tools.find((entry) => isToolSource(entry) && entry.remindsApprovers === true);
  if (!reminding) return;
  throw new RelayError(
    'invalid_input',
    `Tool source '${reminding.name}' reminds approvers before a call expires (remindApproversBeforeExpiryMs in its policy): the worker needs an approval webhook to send the reminder`,
  );
}

/**
 * Under Worker Versioning, Relay-E's workflows take the worker's default behavior, and it must be `AUTO_UPGRADE`. They
 * declare none themselves, since an unversioned worker's task completions may not carry one. Every change to them is
 * patched and replayed against recorded histories, so a run can move to a new version; pinned, a run waiting days for
 * a human, and the worker catalog workflow that lives as long as its task queue, would wait for retired workers.
 */
function refusePinnedRelayWorkflows(options: WorkerOptions): void {
  const deployment = options.workerDeploymentOptions;
  if (!deployment?.useWorkerVersioning || deployment.defaultVersioningBehavior === 'AUTO_UPGRADE') return;
  throw new RelayError(
    'invalid_input',
    `Worker Versioning: Relay-E's workflows run as AUTO_UPGRADE, not ${String(deployment.defaultVersioningBehavior)}: set workerDeploymentOptions.defaultVersioningBehavior to 'AUTO_UPGRADE' (pinned, the worker catalog workflow and runs waiting for a human would stay on a retired version)`,
  );
}

/** This worker's own model-call queue once it runs (keepModelCallsOnWorker), and the start wait it names. */
interface OwnModelCallQueueHolder {
  current?: () => OwnModelCallQueue;
  startTimeoutMs?: number;
}

const modelCallStartBounds = { min: 1_000, max: 10 * 60_000 };

/**
 * The holder of the worker's own model-call queue when it keeps model calls on itself, with its start wait when not
 * the runs' default (the default is not said, so each step's history stays as it was); a wait out of bounds, or one
 * given to a worker that keeps no calls on itself, is refused.
 */
function ownModelCallQueueOption(options: RelayPluginOptions): OwnModelCallQueueHolder | undefined {
  const keeps = options.keepModelCallsOnWorker ?? options.payloadStore === undefined;
  const given = options.modelCallStartTimeout;
  if (given === undefined) return keeps ? {} : undefined;
  if (!keeps) {
    throw new RelayError(
      'invalid_input',
      'modelCallStartTimeout applies to a worker that keeps model calls on itself (keepModelCallsOnWorker), and this one does not',
    );
  }
  const ms = durationOptionMs(given, 'modelCallStartTimeout', '30s');
  if (!(ms >= modelCallStartBounds.min && ms <= modelCallStartBounds.max)) {
    throw new RelayError(
      'invalid_input',
      `modelCallStartTimeout '${String(given)}' must be between 1 second and 10 minutes`,
    );
  }
  return ms === defaultModelCallStartMs ? {} : { startTimeoutMs: ms };
}

/** The activities' reminder lead time, checked (see approvalReminderMs): absent when none was asked for. */
function approvalReminderOption(options: RelayPluginOptions): { approvalReminderMs?: number } {
  const ms = approvalReminderMs(options.remindApproversBeforeExpiry, options.approvalWebhook);
  return ms === undefined ? {} : { approvalReminderMs: ms };
}

/**
 * Streamed model text rides on heartbeats (activities/model-text-stream.ts): unless the worker sets its own, the SDK
 * sends at most one heartbeat per 80% of the heartbeat timeout, so followers would see text every 8 s, not every
 * 100 ms.
 */
function withHeartbeatsForStreaming(options: WorkerOptions): WorkerOptions {
  if (options.maxHeartbeatThrottleInterval !== undefined) return options;
  return { ...options, maxHeartbeatThrottleInterval: modelDeltaBatchMs };
}
