import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorkflowCode, NativeConnection, Worker } from '@temporalio/worker';
import type { BundleOptions, WorkerOptions, WorkflowBundleWithSourceMap } from '@temporalio/worker';
import type { DataConverter } from '@temporalio/common';
import { createActivities } from '../../activities/index.js';
import { ModelRegistry } from '../model/model-registry.js';
import type { ModelProvider } from '../model/model-provider.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import type { SecretSource } from '../security/resolve-secret-references.js';
import { withEncryption } from '../security/with-encryption.js';
import { RelayError } from '../shared/errors.js';
import { modelDeltaBatchMs } from '../shared/run-types.js';
import { relaySearchAttributeDefinitions } from '../shared/search-attributes.js';
import { ToolExecutor } from '../tool/tool-executor.js';
import type { ToolExecutorOptions } from '../tool/tool-executor.js';
import type { ToolRegistry } from '../tool/tool-registry.js';
import { loadToolSources } from '../tool/tool-source.js';
import type { LoadedTools, ToolEntry } from '../tool/tool-source.js';

export interface CreateWorkerOptions {
  /**
   * The tools runs on this worker may call: `defineTool` tools and tool sources (`mcpTools(…)`) in any mix. Sources
   * are opened (MCP servers connected and listed) before the worker starts and closed when it stops. Give this or
   * `registry`.
   */
  tools?: readonly ToolEntry[];
  registry?: ToolRegistry;
  /** Model providers by the prefix of the model id: `{ openai: …, scripted: scriptedModel(…) }`. */
  models: Record<string, ModelProvider>;
  taskQueue: string;
  /** A connection to reuse; otherwise one is opened to `address`. */
  connection?: NativeConnection;
  /** @default 'localhost:7233' */
  address?: string;
  /** @default 'default' */
  namespace?: string;
  /** Guardrails, size limit and default timeout for every tool. */
  executor?: ToolExecutorOptions;
  /** A pre-built workflow bundle (`bundleRelayWorkflows()`); bundling on start takes a few seconds otherwise. */
  workflowBundle?: WorkerOptions['workflowBundle'];
  /**
   * Check at start that the server knows Relay-E's search attributes, so a run cannot get stuck on a server
   * where they were never registered.
   * @default true
   */
  checkSearchAttributes?: boolean;
  /**
   * Encrypt every payload (run input, transcript, tool inputs and results, memo, summaries) with AES-256-GCM before
   * it reaches Temporal; clients need the same keys (`RelayClient.connect({ encryption })`).
   * @default undefined (payloads are stored as JSON)
   */
  encryption?: EncryptionOptions;
  /**
   * A Temporal data converter (payload converter, codecs); `encryption` adds its codec after these codecs.
   * @default `workerOptions.dataConverter`, else Temporal's default
   */
  dataConverter?: DataConverter;
  /**
   * What `{ "$secret": "NAME" }` in a run's `config` resolves to, inside the tool activity only: history and events
   * keep the reference, tools get the value, and a value a tool echoes is redacted from its result.
   * @default undefined (a run that refers to a secret fails that tool call)
   */
  secrets?: SecretSource;
  /**
   * The largest model response, as JSON, a run accepts; a larger one fails the run with `payload_too_large`
   * before Temporal sees it (its own limit is 2 MiB a payload, and the next model call carries the response again).
   * @default 1_048_576 (1 MiB)
   */
  maxModelResponseBytes?: number;
  /** Any other Temporal worker option (cache size, concurrency, …). */
  workerOptions?: Partial<
    Omit<WorkerOptions, 'taskQueue' | 'connection' | 'namespace' | 'activities' | 'workflowBundle' | 'workflowsPath'>
  >;
}

/** Creates a Temporal worker that runs agent runs with the given tools and model providers; call `run()` on it. */
export async function createWorker(options: CreateWorkerOptions): Promise<Worker> {
  const loaded: LoadedTools = options.registry
    ? { registry: options.registry, close: async () => undefined }
    : await loadToolSources(options.tools ?? [], options.secrets ? { secrets: options.secrets } : {});
  try {
    const worker = await createWorkerWith(loaded.registry, options);
    // Tool sources hold connections (MCP server processes): they live exactly as long as the worker runs.
    const run = worker.run.bind(worker);
    worker.run = () => run().finally(() => loaded.close());
    return worker;
  } catch (error) {
    await loaded.close();
    throw error;
  }
}

async function createWorkerWith(registry: ToolRegistry, options: CreateWorkerOptions): Promise<Worker> {
  const connection =
    options.connection ?? (await NativeConnection.connect({ address: options.address ?? 'localhost:7233' }));
  const namespace = options.namespace ?? 'default';
  if (options.checkSearchAttributes ?? true) await checkSearchAttributes(connection, namespace);
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry, options.executor),
    models: new ModelRegistry(options.models),
    ...(options.maxModelResponseBytes !== undefined ? { maxModelResponseBytes: options.maxModelResponseBytes } : {}),
    ...(options.secrets ? { secrets: options.secrets } : {}),
  });
  const dataConverter = withEncryption(
    options.dataConverter ?? options.workerOptions?.dataConverter,
    options.encryption,
  );
  return Worker.create({
    // Streamed model text rides on heartbeats (activities/model-text-stream.ts): without this the SDK would send
    // at most one heartbeat per 80% of the heartbeat timeout, so followers would see text every 8 s, not 100 ms.
    maxHeartbeatThrottleInterval: modelDeltaBatchMs,
    ...options.workerOptions,
    ...(dataConverter ? { dataConverter } : {}),
    connection,
    namespace,
    taskQueue: options.taskQueue,
    activities,
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: relayWorkflowsPath(), bundlerOptions: { preloadModules: relaySharedWorkflowModules() } }),
  });
}

/** Bundles Relay-E's workflows once, for workers that should start without bundling (tests, several workers). */
export function bundleRelayWorkflows(
  options: Pick<BundleOptions, 'logger'> = {},
): Promise<WorkflowBundleWithSourceMap> {
  return bundleWorkflowCode({
    ...options,
    workflowsPath: relayWorkflowsPath(),
    preloadModules: relaySharedWorkflowModules(),
  });
}

/**
 * Pure modules loaded once per workflow thread and shared by every cached run, instead of once per run: the tool
 * call validator and Zod beneath it cost about 1.2 MiB per cached run otherwise (bench/memory-per-run.ts). None
 * holds per-run state, so sharing cannot change a run's behaviour.
 */
export function relaySharedWorkflowModules(): string[] {
  return [resolveRelayModule('workflows/tool-call-validator'), resolveRelayModule('src/shared/run-input-schema')];
}

/** The file that holds Relay-E's workflows, next to this module whether it runs from source or from `dist`. */
export function relayWorkflowsPath(): string {
  return resolveRelayModule('workflows/index');
}

function resolveRelayModule(pathFromRoot: string): string {
  for (const extension of ['.ts', '.js']) {
    const path = fileURLToPath(new URL(`../../${pathFromRoot}${extension}`, import.meta.url));
    if (existsSync(path)) return path;
  }
  throw new RelayError('invalid_input', `Cannot find ${pathFromRoot} next to the Relay-E worker module`);
}

async function checkSearchAttributes(connection: NativeConnection, namespace: string): Promise<void> {
  const response = await connection.operatorService.listSearchAttributes({ namespace });
  const known = new Set(Object.keys(response.customAttributes ?? {}));
  const missing = relaySearchAttributeDefinitions.filter((attribute) => !known.has(attribute.name));
  if (missing.length === 0) return;
  const command = missing
    .map(
      (attribute) =>
        `temporal operator search-attribute create --namespace ${namespace} --name ${attribute.name} --type ${attribute.type}`,
    )
    .join('\n  ');
  throw new RelayError(
    'invalid_input',
    `The Temporal namespace '${namespace}' lacks Relay-E's search attributes (${missing.map((a) => a.name).join(', ')}). Register them:\n  ${command}`,
  );
}
