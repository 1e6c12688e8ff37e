import type { NativeConnection, Worker } from '@temporalio/worker';
import path from 'node:path';
import { DemoBankFile } from '../demo/demo-bank-file.js';
import { createDemoModel } from '../demo/demo-model.js';
import { createDemoTools } from '../demo/demo-tools.js';
import { providersFromEnv } from '../model/providers/index.js';
import { secretsFromEnv } from '../security/resolve-secret-references.js';
import { createWorker } from '../worker/create-worker.js';
import { exitCodes } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { connectionOptions, connectionOptionsHelp, parseCommandArgs } from './command.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { connectWorkerConnection, readTemporalSettings } from './temporal-settings.js';
import type { TemporalSettings } from './temporal-settings.js';

/** A worker with the demo tools that runs until `stop`. */
export interface DemoWorker {
  readonly worker: Worker;
  /** The model provider prefixes the worker serves, `scripted` included. */
  readonly providers: string[];
  readonly toolNames: string[];
  /** Settles when the worker stops; rejects when it fails. */
  readonly finished: Promise<void>;
  stop(): Promise<void>;
}

/** Where the demo bank is kept, beside `relay-e dev`'s Temporal database, relative to the working folder. */
export const demoBankFile = path.join('.relay-e', 'demo-bank.json');

/**
 * Starts a worker with the banking demo tools over the bank kept in `bankFile`, the scripted demo model and the
 * providers the environment configures.
 */
export async function startDemoWorker(
  settings: TemporalSettings,
  connection?: NativeConnection,
  bankFile: string = demoBankFile,
): Promise<DemoWorker> {
  const ownConnection = connection ?? (await connectWorkerConnection(settings));
  const tools = createDemoTools(new DemoBankFile(bankFile));
  const models = { ...providersFromEnv(process.env), scripted: createDemoModel() };
  const worker = await createWorker({
    tools,
    models,
    taskQueue: settings.taskQueue,
    namespace: settings.namespace,
    connection: ownConnection,
    secrets: secretsFromEnv(process.env),
    ...(settings.encryption ? { encryption: settings.encryption } : {}),
  });
  const running = worker.run();
  let stopping: Promise<void> | undefined;
  return {
    worker,
    finished: running,
    providers: Object.keys(models),
    toolNames: tools.map((tool) => (tool.requiresApproval ? `${tool.name} (needs approval)` : tool.name)),
    stop: () =>
      (stopping ??= (async () => {
        if (worker.getState() === 'RUNNING') worker.shutdown();
        await running;
        if (connection === undefined) await ownConnection.close();
      })()),
  };
}

const cli = cliInvocation();

export const workerCommand: Command = {
  name: 'worker',
  summary: commandSummaries.worker,
  help: `Usage: ${cli} worker [options]

Polls the task queue and runs agent runs: the banking demo tools (get_balance, search_transactions,
transfer_funds) and the models scripted:demo plus whatever OPENAI_API_KEY / ANTHROPIC_API_KEY /
RELAY_E_COMPATIBLE_BASE_URL configure. Stops cleanly on Ctrl-C or SIGTERM.
Payloads are encrypted when RELAY_E_ENCRYPTION_KEYS="id:base64key,..." is set (current key:
RELAY_E_ENCRYPTION_KEY_ID, default the first); { "$secret": "NAME" } in a run's config resolves to
RELAY_E_SECRET_NAME inside the tool activity.
The demo bank's balances and transfers are kept in ${demoBankFile} under the working folder (beside
the runs of relay-e dev), so a transfer approved after a restart moves the right balances; delete the
file to start the bank over.

${connectionOptionsHelp}`,
  async run(argv) {
    const { values } = parseCommandArgs('worker', argv, connectionOptions);
    const settings = await readTemporalSettings(values);
    const demo = await startDemoWorker(settings);
    const line = {
      status: 'ready',
      address: settings.address,
      namespace: settings.namespace,
      taskQueue: settings.taskQueue,
      providers: demo.providers,
      tools: demo.toolNames,
    };
    process.stdout.write(
      values.json
        ? `${JSON.stringify(line)}\n`
        : `Worker ready on ${settings.address} (namespace ${settings.namespace}, task queue ${settings.taskQueue})\n` +
            `  models: ${demo.providers.map((name) => `${name}:*`).join(', ')}\n  tools: ${demo.toolNames.join(', ')}\n`,
    );
    await Promise.race([waitForShutdownSignal(), demo.finished]);
    await demo.stop();
    return exitCodes.ok;
  },
};
