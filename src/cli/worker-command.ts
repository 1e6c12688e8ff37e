import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { DemoBankFile } from '../demo/demo-bank-file.js';
import { isToolSource } from '../tool/tool-source.js';
import type { ToolEntry } from '../tool/tool-source.js';
import type { Worker, WorkerOptions } from '@temporalio/worker';
import { createDemoModel } from '../demo/demo-model.js';
import { createDemoTools } from '../demo/demo-tools.js';
import { providersFromEnv } from '../model/providers/index.js';
import { secretsFromEnv } from '../security/resolve-secret-references.js';
import {
  approvalReminderMs,
  approvalWebhookFromEnv,
  approvalWebhookTenantsFromEnv,
  checkApprovalWebhook,
  linkedToInbox,
  webhookForTenants,
} from '../notify/approval-webhook.js';
import type { ApprovalWebhook, ApprovalWebhooks } from '../notify/approval-webhook.js';
import type { PayloadStore } from '../store/payload-store.js';
import type { RelayConfig } from '../config/define-config.js';
import type { DurationInput } from '../shared/run-types.js';
import { errorMessage } from '../shared/error-message.js';
import { createWorker } from '../worker/create-worker.js';
import { exitCodes } from './cli-error.js';
import type { Command } from './command.js';
import { parseCommandFlags, serverConnectionOptions, serverConnectionOptionsHelp } from './command.js';
import {
  createCliPayloadStore,
  defaultPayloadDirectory,
  defaultJanitorIntervalMs,
  describeMs,
  describePayloadStore,
  prepareCliPayloadStore,
  withPayloadJanitor,
} from './cli-payload-store.js';
import type { CliPayloadStore, PayloadStoreFacts } from './cli-payload-store.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { connectWorkerConnection, readTemporalSettings } from './temporal-settings.js';
import type { TemporalSettings } from './temporal-settings.js';
import { cliInvocation } from './cli-invocation.js';
import { commandSummaries } from './command-summaries.js';
import { configOption, configOptionHelp, loadProjectConfig } from './project-config.js';
import {
  readWorkerDeployment,
  versionedWorkerOptions,
  workerDeploymentHelp,
  workerDeploymentOptions,
} from './worker-deployment.js';
import type { WorkerDeployment } from './worker-deployment.js';
import type { ProjectConfig } from './project-config.js';
import { envSetting } from './env-setting.js';
import { durationOptionMs } from '../shared/duration-option.js';
import { longestTimerDelayMs } from '../shared/timer-limit.js';
import { RelayError } from '../shared/errors.js';

/** A worker with the project's tools (or the demo's) that runs until `stop`. */
export interface CliWorker {
  readonly worker: Worker;
  /** The model provider prefixes the worker serves. */
  readonly providers: string[];
  readonly toolNames: string[];
  /** Where the tools come from: the config file, or the banking demo. */
  readonly source: string;
  /** Where approvers are told of waiting calls: a webhook URL, `per tenant`, or undefined (not told). */
  readonly approvalWebhook: string | undefined;
  /** Where the worker keeps model contexts and, when shared, large outputs and texts (closed by `stop`). */
  readonly payloadStore: PayloadStore;
  /** What the ready line says of the payload store: which, whether encrypted (current key), its janitor. */
  readonly payloadStoreFacts: PayloadStoreFacts;
  /** How long a stop lets running tools and model calls finish before it cancels them. */
  readonly shutdownGraceMs: number;
  /** Settles when the worker stops; rejects when it fails. */
  readonly finished: Promise<void>;
  stop(): Promise<void>;
}

/**
 * How long a stopping CLI worker lets its running tools and model calls finish before it cancels them, unless
 * `RELAY_E_SHUTDOWN_GRACE` or the config's `shutdownGraceTime` says otherwise: under the 30 seconds Kubernetes and ECS
 * give a container between SIGTERM and SIGKILL by default, with time left to close the store and the connection.
 */
const defaultShutdownGraceMs = 25_000;

/** Where the demo bank is kept, beside `relay-e dev`'s Temporal database, relative to the working folder. */
const demoBankFile = path.join('.relay-e', 'demo-bank.json');

/**
 * Starts a worker with the project's config (tools, models, executor options, secrets), or with the banking demo
 * tools and the scripted demo model when there is none; the providers the environment configures are added either way.
 * `defaultFolderShared`: whether every worker of the task queue reads the default payload folder, as the workers
 * of a stack on one machine do. `inboxUrl`: the inbox that approval notices link to when their webhook names none
 * (relay-e dev's own). `deployment`: the Worker Deployment version it polls as, when versioned. `signal`: ends the
 * start when aborted (relay-e dev's Ctrl-C): bundling the workflows stops, what was opened is closed, and the promise
 * rejects with the signal's reason; the steps before bundling (connecting, opening tool sources) end first.
 */
export async function startCliWorker(
  settings: TemporalSettings,
  project: ProjectConfig | undefined,
  {
    defaultFolderShared,
    inboxUrl,
    deployment,
    signal,
  }: {
    defaultFolderShared: boolean;
    inboxUrl?: () => string | undefined;
    deployment?: WorkerDeployment;
    signal?: AbortSignal;
  },
): Promise<CliWorker> {
  // Every setting is worked out and checked before connecting, so a mistake in one leaves nothing open.
  const { approvalWebhook, reminderMs, where } = approvalNoticesOf(project, inboxUrl);
  const shutdownGraceTime = shutdownGraceOf(project, process.env);
  const janitorIntervalMs = payloadJanitorIntervalOf(project, process.env);
  const { tools, models } = toolsAndModelsOf(project);
  const store = createCliPayloadStore(settings, project, { defaultFolderShared });
  // Before Temporal: a store the worker cannot use would fail every run's model calls after it said it was ready.
  await prepareCliPayloadStore(store);
  const opened = await connectWorker(settings, store, janitorIntervalMs);
  const { connection, payloads } = opened;
  const worker = await createWorker({
    tools,
    models,
    taskQueue: settings.taskQueue,
    namespace: settings.namespace,
    connection,
    secrets: project?.config.secrets ?? secretsFromEnv(process.env),
    ...(approvalWebhook ? { approvalWebhook } : {}),
    ...(reminderMs !== undefined ? { remindApproversBeforeExpiry: reminderMs } : {}),
    ...(project?.config.executor ? { executor: project.config.executor } : {}),
    ...(settings.encryption ? { encryption: settings.encryption } : {}),
    payloadStore: payloads.store,
    keepLargePayloadsInStore: payloads.sharedByEveryWorker,
    ...modelCallAffinity(payloads.sharedByEveryWorker, project?.config),
    workerOptions: cliWorkerOptions(shutdownGraceTime, deployment, signal),
  }).catch(async (error: unknown) => {
    await opened.close();
    // Bundling stopped by the signal fails with webpack's error; the caller asked for the stop, so it gets its reason.
    throw signal?.aborted ? signal.reason : error;
  });
  const running = worker.run();
  let stopping: Promise<void> | undefined;
  return {
    worker,
    payloadStore: payloads.store,
    payloadStoreFacts: payloads.facts,
    shutdownGraceMs: shutdownGraceTime,
    finished: running,
    providers: Object.keys(models),
    toolNames: tools.map(describeToolEntry),
    source: project ? project.file : 'the banking demo (no relay-e.config.ts found)',
    approvalWebhook: where,
    stop: () => (stopping ??= stopWorker(worker, running, () => opened.close())),
  };
}

/** The project's tools and models, or the banking demo's; the providers the environment configures either way. */
function toolsAndModelsOf(project: ProjectConfig | undefined) {
  const tools = project ? project.config.tools : createDemoTools(new DemoBankFile(demoBankFile));
  const models = {
    ...providersFromEnv(process.env),
    ...(project ? project.config.models : { scripted: createDemoModel() }),
  };
  return { tools, models };
}

/** The SDK worker options the CLI's worker sets: its shutdown grace, its deployment version, dev's stop of bundling. */
function cliWorkerOptions(
  shutdownGraceTime: number,
  deployment: WorkerDeployment | undefined,
  signal: AbortSignal | undefined,
): Partial<WorkerOptions> {
  return {
    shutdownGraceTime,
    ...(deployment ? versionedWorkerOptions(deployment) : {}),
    ...(signal ? { bundlerOptions: { webpackConfigHook: stopBundlingOn(signal) } } : {}),
  };
}

type WebpackConfigHook = NonNullable<NonNullable<WorkerOptions['bundlerOptions']>['webpackConfigHook']>;

/**
 * A webpack config hook that ends the bundling of the workflows when `signal` aborts: the compilation's queues stop
 * taking modules, and it fails with the signal's reason before it seals, so the SDK's bundler rejects at once (and
 * logs no webpack errors) instead of bundling for seconds more.
 */
function stopBundlingOn(signal: AbortSignal): WebpackConfigHook {
  return (config) => ({
    ...config,
    plugins: [
      ...(config.plugins ?? []),
      {
        apply(compiler) {
          compiler.hooks.thisCompilation.tap('RelayStopBundling', (compilation) => {
            const { addModuleQueue, factorizeQueue, buildQueue, processDependenciesQueue } = compilation;
            const stop = () => {
              for (const queue of [addModuleQueue, factorizeQueue, buildQueue, processDependenciesQueue]) queue.stop();
            };
            if (signal.aborted) stop();
            else signal.addEventListener('abort', stop, { once: true });
            compiler.hooks.shutdown.tap('RelayStopBundling', () => signal.removeEventListener('abort', stop));
            compilation.hooks.finishModules.tapAsync('RelayStopBundling', (_modules, callback) => {
              callback(signal.aborted ? (signal.reason as Error) : undefined);
            });
          });
        },
      },
    ],
  });
}

/**
 * Stops the worker, then closes what it used, also when it failed: its error is rethrown once they are closed, and a
 * close that fails after it is written to stderr, not thrown in its place (the worker's failure is the news).
 */
async function stopWorker(worker: Worker, running: Promise<void>, close: () => Promise<void>): Promise<void> {
  let failed: { error: unknown } | undefined;
  try {
    await shutDownOnceRunning(worker, running);
    await running;
  } catch (error) {
    failed = { error };
  }
  if (!failed) return close();
  await close().catch((error: unknown) => {
    process.stderr.write(
      `relay-e: closing the worker's payload store and connection failed too: ${errorMessage(error)}\n`,
    );
  });
  throw failed.error;
}

/** How often a stop asked before the worker runs reads its state again. */
const workerStatePollMs = 10;

/**
 * Asks the worker to shut down. `run()` makes it RUNNING only after the plugins' start-up (Relay-E's announces the
 * tool catalog first) and `shutdown()` refuses it before, so a stop asked that early (relay-e dev's Ctrl-C as bundling
 * ends) waits for it; the SDK tells of no state change, so the state is read again every few milliseconds.
 */
async function shutDownOnceRunning(worker: Worker, running: Promise<void>): Promise<void> {
  const ended = running.then(
    () => true,
    () => true,
  );
  while (worker.getState() === 'INITIALIZED') {
    if (await Promise.race([ended, sleep(workerStatePollMs, false)])) return;
  }
  if (worker.getState() === 'RUNNING') worker.shutdown();
}

/**
 * Opens the worker's connection and starts the store's janitor on it; a connection that fails closes the store.
 * `close` closes the store, then the connection, even when the store's close fails.
 */
async function connectWorker(
  settings: TemporalSettings,
  store: CliPayloadStore,
  janitorIntervalMs: number | undefined,
) {
  const connection = await connectWorkerConnection(settings).catch(async (error: unknown) => {
    await store.close();
    throw error;
  });
  const payloads = withPayloadJanitor(store, connection, { namespace: settings.namespace, janitorIntervalMs });
  return {
    connection,
    payloads,
    async close() {
      try {
        await payloads.close();
      } finally {
        await connection.close();
      }
    },
  };
}

/**
 * The worker's shutdown grace in milliseconds: `RELAY_E_SHUTDOWN_GRACE`, else the config's `shutdownGraceTime`, else
 * {@link defaultShutdownGraceMs}; a value that is no duration, or a negative one, is refused before the worker connects.
 */
function shutdownGraceOf(project: ProjectConfig | undefined, env: NodeJS.ProcessEnv): number {
  const fromEnv = envSetting(env, 'RELAY_E_SHUTDOWN_GRACE');
  const value = fromEnv ?? project?.config.shutdownGraceTime;
  if (value === undefined) return defaultShutdownGraceMs;
  const label = fromEnv === undefined ? "'shutdownGraceTime'" : 'RELAY_E_SHUTDOWN_GRACE';
  const ms = durationOptionMs(value, label, '30s');
  if (ms < 0) throw new RelayError('invalid_input', `${label} '${String(value)}' must not be negative`);
  return ms;
}

/**
 * How often the worker's payload janitor passes, in milliseconds, or undefined for none: `RELAY_E_PAYLOAD_JANITOR` (a
 * duration, or `off`), else the config's `payloadJanitorInterval` (`false` for none), else
 * {@link defaultJanitorIntervalMs}; a value that is no duration, or not above zero, is refused before the worker connects.
 */
function payloadJanitorIntervalOf(project: ProjectConfig | undefined, env: NodeJS.ProcessEnv): number | undefined {
  const fromEnv = envSetting(env, 'RELAY_E_PAYLOAD_JANITOR');
  const value = fromEnv ?? project?.config.payloadJanitorInterval;
  if (value === undefined) return defaultJanitorIntervalMs;
  if (value === false || fromEnv?.toLowerCase() === 'off') return undefined;
  const label = fromEnv === undefined ? "'payloadJanitorInterval'" : 'RELAY_E_PAYLOAD_JANITOR';
  const ms = durationOptionMs(value, label, '30m');
  if (!(ms > 0 && ms <= longestTimerDelayMs)) {
    throw new RelayError('invalid_input', `${label} '${String(value)}' must be above zero and at most 24 days, or off`);
  }
  return ms;
}

/**
 * Where the worker sends approval notices (the config's webhooks, else the environment's, linked to `inboxUrl` when
 * they name no inbox), how long before expiry it reminds approvers, and the ready line's words for them; each is
 * checked here, so a bad one is refused before the worker connects.
 */
function approvalNoticesOf(project: ProjectConfig | undefined, inboxUrl: (() => string | undefined) | undefined) {
  const configured = approvalWebhooksOf(project, process.env);
  const approvalWebhook =
    configured.webhooks && inboxUrl ? linkedToInbox(configured.webhooks, inboxUrl) : configured.webhooks;
  const reminder = project?.config.remindApproversBeforeExpiry ?? envSetting(process.env, 'RELAY_E_APPROVAL_REMINDER');
  const reminderMs = approvalReminderMs(reminder, approvalWebhook);
  const where =
    configured.where && reminder !== undefined
      ? `${configured.where} (reminded ${String(reminder)} before a call expires)`
      : configured.where;
  return { approvalWebhook, reminderMs, where };
}

/**
 * The ready lines of a versioned worker, with the step a first build needs: until it is the deployment's current
 * version, new runs are not sent to it.
 */
function describeDeployment({ deploymentName, buildId }: WorkerDeployment): string {
  return (
    `  Worker Versioning: deployment ${deploymentName}, build ${buildId} (AUTO_UPGRADE)\n` +
    `  runs come to this build once it is current: temporal worker deployment set-current-version ` +
    `--deployment-name ${deploymentName} --build-id ${buildId}\n`
  );
}

/**
 * Whether a run's next model call comes back to this worker: yes with a store only this machine reads, with the
 * config's start wait; no with a store every worker shares (relay-e dev's folder, a config's payloadStore), where the
 * wait would do nothing and is left out.
 */
export function modelCallAffinity(
  storeShared: boolean,
  config: Pick<RelayConfig, 'modelCallStartTimeout'> | undefined,
): { keepModelCallsOnWorker: boolean; modelCallStartTimeout?: DurationInput } {
  if (storeShared) return { keepModelCallsOnWorker: false };
  const wait = config?.modelCallStartTimeout;
  return { keepModelCallsOnWorker: true, ...(wait !== undefined ? { modelCallStartTimeout: wait } : {}) };
}

/** A tool as the worker's ready line names it: a source, or a tool and whether and how it needs approval. */
function describeToolEntry(tool: ToolEntry): string {
  if (isToolSource(tool)) return `${tool.name} (tool source)`;
  if (typeof tool.requiresApproval === 'function') return `${tool.name} (approval by rule)`;
  return tool.requiresApproval ? `${tool.name} (needs approval)` : tool.name;
}

/**
 * The worker's approval webhooks, and where they post, without a secret: the config's, else the environment's (for
 * the tenants RELAY_E_APPROVAL_WEBHOOK_TENANTS lists, when it does).
 */
function approvalWebhooksOf(
  project: ProjectConfig | undefined,
  env: NodeJS.ProcessEnv,
): { webhooks?: ApprovalWebhooks; where?: string } {
  const fromConfig = project?.config.approvalWebhook;
  if (typeof fromConfig === 'function') return { webhooks: fromConfig, where: 'per tenant (relay-e.config.ts)' };
  if (fromConfig) {
    // Checked before it is described: a URL without a scheme would otherwise fail as a bare `Invalid URL`.
    checkApprovalWebhook(fromConfig);
    return { webhooks: fromConfig, where: describeApprovalWebhook(fromConfig) };
  }
  const webhook = approvalWebhookFromEnv(env);
  if (webhook === undefined) return {};
  const tenants = approvalWebhookTenantsFromEnv(env);
  if (tenants === undefined) return { webhooks: webhook, where: describeApprovalWebhook(webhook) };
  const where = `${describeApprovalWebhook(webhook)} (tenants ${tenants.join(', ')})`;
  return { webhooks: webhookForTenants(webhook, tenants), where };
}

/**
 * Where a webhook posts, by its origin only: a Slack webhook's URL is its secret, and a signed webhook's path or query
 * can hold a credential too. The line is printed and logged.
 */
export function describeApprovalWebhook(webhook: ApprovalWebhook): string {
  const { origin } = new URL(webhook.url);
  return webhook.format === 'slack' ? `a Slack incoming webhook on ${new URL(webhook.url).host}` : origin;
}

const cli = cliInvocation();

export const workerCommand: Command = {
  name: 'worker',
  summary: commandSummaries.worker,
  help: `Usage: ${cli} worker [options]

Polls the task queue and runs agent runs with the tools, models, guardrails and secrets of the project's
config file (relay-e.config.ts); without one, the banking demo tools (get_balance, search_transactions,
transfer_funds) and the model scripted:demo. Whatever OPENAI_API_KEY / ANTHROPIC_API_KEY /
RELAY_E_COMPATIBLE_BASE_URL configure is added. Stops cleanly on Ctrl-C or SIGTERM.
Payloads are encrypted when RELAY_E_ENCRYPTION_KEYS="id:base64key,..." is set (current key:
RELAY_E_ENCRYPTION_KEY_ID, default the first); { "$secret": "NAME" } in a run's config resolves to
RELAY_E_SECRET_NAME inside the tool activity (unless the config gives its own secrets).
Model-call contexts are kept in the config's payloadStore, else in files under ${defaultPayloadDirectory}
(share one store between the workers of a task queue; a janitor expires closed runs' contexts). With the
default folder, which is only this machine's, a run's next model call goes to the worker that stored its
context, on a task queue of that worker's own.
Approvers are told of each call that waits for them when the config's approvalWebhook, or
RELAY_E_APPROVAL_WEBHOOK_URL with RELAY_E_APPROVAL_WEBHOOK_SECRET (or RELAY_E_APPROVAL_WEBHOOK_FORMAT=slack
for a Slack incoming webhook), names a webhook: RELAY_E_APPROVAL_WEBHOOK_TENANTS=a,b notifies those tenants'
approvers only, RELAY_E_INBOX_URL adds a link to the inbox to each notice, and RELAY_E_APPROVAL_REMINDER=1h
(or the config's remindApproversBeforeExpiry) reminds approvers of a call still waiting an hour before it expires.
Without a config, the demo bank's balances and transfers are kept in ${demoBankFile} under the working
folder (beside the runs of relay-e dev), so a transfer approved after a restart moves the right balances;
delete the file to start the bank over.

Options:
${configOptionHelp}

${workerDeploymentHelp}

${serverConnectionOptionsHelp}`,
  async run(argv) {
    const options = { ...serverConnectionOptions, ...configOption, ...workerDeploymentOptions };
    const { values } = parseCommandFlags('worker', argv, options);
    // Listening before the ready line: a caller that stops the worker as soon as it reads it must not find Node's
    // default, which ends the process at once, without closing the worker.
    const shutdown = waitForShutdownSignal();
    const deployment = readWorkerDeployment(values, process.env);
    const project = await loadProjectConfig(values.config);
    const settings = await readTemporalSettings(values, process.env, project?.config);
    // Workers started one by one may run on several machines, each with its own default folder.
    const demo = await startCliWorker(settings, project, {
      defaultFolderShared: false,
      ...(deployment ? { deployment } : {}),
    });
    const line = {
      status: 'ready',
      address: settings.address,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      providers: demo.providers,
      tools: demo.toolNames,
      source: demo.source,
      payloadStore: demo.payloadStoreFacts,
      shutdownGraceMs: demo.shutdownGraceMs,
      ...(demo.approvalWebhook ? { approvalWebhook: demo.approvalWebhook } : {}),
      ...(deployment ? { deployment } : {}),
    };
    process.stdout.write(
      values.json
        ? `${JSON.stringify(line)}\n`
        : `Worker ready on ${settings.address} (namespace ${settings.namespace}, task queue ${settings.taskQueue})\n` +
            `  models: ${demo.providers.map((name) => `${name}:*`).join(', ')}\n  tools: ${demo.toolNames.join(', ')} (from ${demo.source})\n` +
            `  payloads: ${describePayloadStore(demo.payloadStoreFacts)}\n` +
            `  on stop: running tools and model calls get ${describeMs(demo.shutdownGraceMs)} to finish\n` +
            (demo.approvalWebhook ? `  approvers notified at: ${demo.approvalWebhook}\n` : '') +
            (deployment ? describeDeployment(deployment) : ''),
    );
    try {
      await Promise.race([shutdown, demo.finished]);
    } finally {
      // Also when the worker failed: its store (a PostgreSQL pool, the janitor) and connection are closed.
      await demo.stop();
    }
    return exitCodes.ok;
  },
};
