import { cliInvocation } from './cli-invocation.js';
import { commandSummaries } from './command-summaries.js';
import { connectionHintFlags } from './connection-hints.js';
import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { isIP } from 'node:net';
import path from 'node:path';
import {
  DevServerPortClashError,
  findTemporalExecutable,
  isListening,
  NotTemporalServerError,
  splitHostPort,
  startTemporalDevServer,
} from '../dev/temporal-dev-server.js';
import type { TemporalDevServer } from '../dev/temporal-dev-server.js';
import { isAddressOfThisMachine } from '../dev/local-address.js';
import type { ApiKeyTenants } from '../http/api-keys.js';
import { apiKeyProblem, loadApiKeys } from '../http/api-keys.js';
import { startApiServer } from '../http/start-api-server.js';
import { CliError, exitCodes, usageError } from './cli-error.js';
import { runTenantsOf, startCodecServer } from './codec-server-command.js';
import type { Command } from './command.js';
import { apiHost, connectionOptions, connectionOptionsHelp, parseCommandFlags } from './command.js';
import { resolveModel } from './resolve-model.js';
import { defaultApiPort, explainListenError, readPort } from './server-port.js';
import type { ListenAddress } from './server-port.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { createSpinner } from './spinner.js';
import { errorMessage } from '../shared/error-message.js';
import type { Spinner } from './spinner.js';
import {
  apiCallRetry,
  connectionCredentials,
  connectRelayClient,
  explainTlsMismatch,
  readTemporalSettings,
} from './temporal-settings.js';
import type { TemporalSettings } from './temporal-settings.js';
import type { PayloadStore } from '../store/payload-store.js';
import { describePayloadStore } from './cli-payload-store.js';
import type { PayloadStoreFacts } from './cli-payload-store.js';
import { startCliWorker } from './worker-command.js';
import type { CliWorker } from './worker-command.js';
import { configOption, configOptionHelp, loadProjectConfig } from './project-config.js';
import type { ProjectConfig } from './project-config.js';

const devOptions = {
  ...connectionOptions,
  'temporal-address': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'ui-port': { type: 'string' },
  db: { type: 'string' },
  ...configOption,
} as const;

const stateDirectory = '.relay-e';
const defaultUiPort = 8233;

export const devCommand: Command = {
  name: 'dev',
  summary: commandSummaries.dev,
  help: `Usage: ${cliInvocation()} dev [options]

Starts (or reuses) a Temporal dev server with the Web UI, a worker with the tools and models of the
project's config file (relay-e.config.ts; the banking demo tools without one) and the HTTP API with a
dev API key, then prints how to start a run. Runs are kept in a SQLite file, so a restart keeps them.
Ctrl-C stops everything, also during start-up (without printing that it is ready).

Options:
  --temporal-address H:P Temporal to reuse if it is reachable there; otherwise a dev server is started
                         on that address (same as --address; env TEMPORAL_ADDRESS, default localhost:7233)
  --ui-port N            Temporal Web UI port of a started server, 1 to 65535 (default ${defaultUiPort}; 0 is
                         refused: the Temporal CLI would take it for its own default)
  --db PATH              SQLite file of a started server (default ${stateDirectory}/temporal.db)
  --port N               API port (env RELAY_E_PORT, default ${defaultApiPort}; 0 picks a free one)
  --host IP              API bind address (env RELAY_E_HOST, default 127.0.0.1)
${configOptionHelp}
  The API key is RELAY_E_API_KEYS="key:tenant,..." when set, else one generated once and kept in
  ${stateDirectory}/dev-api-key (tenant from --tenant, default demo).
  With RELAY_E_ENCRYPTION_KEYS set, payloads are encrypted and a started server's Web UI decrypts
  them through a codec server on loopback (see relay-e codec-server --help).

${connectionOptionsHelp}`,
  async run(argv) {
    const { values } = parseCommandFlags('dev', argv, devOptions);
    const listen = readDevListen(values);
    const shutdown = waitForShutdownSignal();
    // Ends the start-up: Ctrl-C with `interrupted`, a worker that fails with its error.
    const starting = new AbortController();
    const interrupted = new Error('interrupted before dev was ready');
    void shutdown.then(() => starting.abort(interrupted));
    const project = await loadProjectConfig(values.config);
    const settings = await readTemporalSettings(
      { ...values, address: values['temporal-address'] ?? values.address },
      process.env,
      project?.config,
    );
    const json = values.json === true;
    const stack = new DevStack(createSpinner(!json && process.stderr.isTTY));
    try {
      const { temporal, worker, api } = await startDevStack(stack, { settings, project, listen, starting });
      stack.spinner.stop();
      // The printed commands reach this stack: the address, namespace, task queue and config it was given.
      const hintFlags = connectionHintFlags({ ...values, address: values['temporal-address'] ?? values.address });
      printReady({ json, temporal, worker, api, settings, hintFlags, isDemo: project === undefined });
      await Promise.race([shutdown, worker.finished]);
      if (!json) process.stderr.write(`\n${describeStopping(temporal.reused)}\n`);
    } catch (error) {
      if (error !== interrupted) throw error;
      stack.spinner.stop();
      if (!json) process.stderr.write('\nStopping Relay-E dev before it was ready (Ctrl-C again to force)...\n');
    } finally {
      await stack.stop();
    }
    if (!json) process.stderr.write('Stopped. Runs are kept; relay-e dev picks them up again.\n');
    return exitCodes.ok;
  },
};

/** What `dev` listens on and keeps its server's data in, from its flags and environment. */
export interface DevListen {
  apiPort: number;
  host: string;
  /** Whether `--host` gave the host, else RELAY_E_HOST or the default: the message when it cannot be bound names it. */
  hostFromFlag: boolean;
  uiPort: number;
  dbFilename: string;
}

/** Reads and checks `dev`'s own flags (and RELAY_E_PORT, RELAY_E_HOST), so a mistake stops it before anything starts. */
function readDevListen(
  values: {
    port?: string | undefined;
    host?: string | undefined;
    'ui-port'?: string | undefined;
    db?: string | undefined;
  },
  env: NodeJS.ProcessEnv = process.env,
): DevListen {
  const host = apiHost(values.host, env);
  // An API bound to a name would depend on DNS; the help asks for an IP.
  if (isIP(host) === 0 && host !== 'localhost') {
    const from = values.host === undefined ? 'RELAY_E_HOST' : '--host';
    throw usageError(`Invalid ${from} '${host}': give an IP address to bind the API to (127.0.0.1, 0.0.0.0, ::1)`);
  }
  return {
    apiPort: readPort(values.port, env),
    host,
    hostFromFlag: values.host !== undefined,
    uiPort: readUiPort(values['ui-port']),
    dbFilename: values.db ?? path.join(stateDirectory, 'temporal.db'),
  };
}

/** `--ui-port`: 1 to 65535. The Temporal CLI takes 0 for "unset" and serves the UI on gRPC port + 1000. */
function readUiPort(text: string | undefined): number {
  if (text === undefined) return defaultUiPort;
  const port = Number(text);
  if (text.trim() === '' || !Number.isInteger(port) || port < 1 || port > 65_535) {
    throw usageError(`Invalid --ui-port '${text}': give a port from 1 to 65535 (0 does not pick a free one here)`);
  }
  return port;
}

interface DevParts {
  temporal: DevTemporal;
  worker: CliWorker;
  api: DevApi;
}

/**
 * Starts (or reuses) Temporal, then the worker, then the API, each added to the stack as it starts. An abort of
 * `starting` (Ctrl-C, or the worker failing) ends the start-up with the abort's reason: the Temporal start and the
 * bundling of the worker's workflows at once, the other steps once they end.
 */
async function startDevStack(
  stack: DevStack,
  options: {
    settings: TemporalSettings;
    project: ProjectConfig | undefined;
    listen: DevListen;
    starting: AbortController;
  },
): Promise<DevParts> {
  const { settings, project, listen, starting } = options;
  const signal = starting.signal;
  signal.throwIfAborted();
  // Read (and checked) before anything starts, as every other setting is: a bad key must not leave a server behind.
  const keys = await readDevApiKeys(settings.tenantId);
  const temporal = await startTemporal(stack, settings, { ...listen, signal });
  const serverSettings = { ...settings, address: temporal.server.address };
  stack.spinner.start('starting the worker (bundling the workflows takes a few seconds)');
  // A dev stack runs on one machine: its worker and any started beside it share the default folder. Its
  // approval notices link to the inbox it serves (unless their webhook names another), once that listens.
  const inbox: { url?: string } = {};
  const worker = await startCliWorker(serverSettings, project, {
    defaultFolderShared: true,
    inboxUrl: () => inbox.url,
    signal,
  });
  stack.add(() => worker.stop());
  // Until dev waits on it once ready, a failure would be an unhandled rejection, ending dev without its orderly stop.
  worker.finished.catch((error: unknown) => starting.abort(error));
  signal.throwIfAborted();
  const api = await startDevApi(stack, serverSettings, {
    keys,
    listen: { port: listen.apiPort, host: listen.host, hostFromFlag: listen.hostFromFlag },
    // The API reads stored outputs and texts from the store its worker keeps them in.
    payloadStore: worker.payloadStore,
  });
  inbox.url = api.url;
  signal.throwIfAborted();
  return { temporal, worker, api };
}

/** What `dev` says as it stops: a Temporal server it reused (it did not start it) is left running. */
export function describeStopping(temporalReused: boolean): string {
  const what = temporalReused ? 'API, worker; the reused Temporal server keeps running' : 'API, worker, Temporal';
  return `Stopping Relay-E dev: ${what} (Ctrl-C again to force)...`;
}

/** What `dev` started, stopped in reverse order, and the spinner that tells what it is doing. */
export class DevStack {
  readonly #cleanups: Array<() => Promise<void>> = [];

  constructor(
    readonly spinner: Spinner,
    private readonly stderr: Pick<NodeJS.WriteStream, 'write'> = process.stderr,
  ) {}

  add(cleanup: () => Promise<void>): void {
    this.#cleanups.push(cleanup);
  }

  /**
   * Runs every cleanup, the last added first, even after one fails: a worker that failed would otherwise leave the
   * Temporal dev server running and the process waiting on it. Rethrows the first failure; the others are printed.
   */
  async stop(): Promise<void> {
    this.spinner.stop();
    const failures: unknown[] = [];
    for (const cleanup of this.#cleanups.reverse()) await cleanup().catch((error: unknown) => failures.push(error));
    for (const later of failures.slice(1)) {
      this.stderr.write(`relay-e dev: while stopping, also: ${errorMessage(later)}\n`);
    }
    if (failures.length > 0) throw failures[0];
  }
}

interface DevTemporal {
  server: TemporalDevServer;
  reused: boolean;
  host: string;
  uiPort: number;
  dbFilename: string;
  codec: { url: string } | undefined;
  /** The Temporal CLI this machine has, for `temporal workflow list` and friends; undefined when none is found. */
  cliPath: string | undefined;
}

/** Reuses the Temporal server at the settings' address when one answers there, else starts a dev server with its UI. */
async function startTemporal(
  stack: DevStack,
  settings: TemporalSettings,
  options: { uiPort: number; dbFilename: string; signal: AbortSignal },
): Promise<DevTemporal> {
  const { uiPort, dbFilename, signal } = options;
  stack.spinner.start(`connecting to Temporal at ${settings.address}`);
  const { host, port } = splitAddress(settings.address);
  const reused = await isListening(host, port);
  if (!reused && !(await isAddressOfThisMachine(host))) throw nothingToReuseElsewhere(settings.address);
  const cliPath = await findTemporalExecutable().catch(() => undefined);
  const ports = { gRPC: port, ui: uiPort };
  const started = reused
    ? { server: await reuseTemporal(settings, { ports, signal }), codec: undefined }
    : await spawnTemporal(stack, settings, { host, ports, dbFilename, signal });
  return { ...started, reused, host, uiPort, dbFilename, cliPath };
}

type TemporalPorts = { gRPC: number; ui: number };

/** Nothing answered at an address of another machine, where dev cannot start a server of its own (exit 5). */
function nothingToReuseElsewhere(address: string): CliError {
  return new CliError(
    exitCodes.unavailable,
    `Nothing answers at ${address}, and dev starts a Temporal dev server only on an address of this machine: start ` +
      'Temporal there, or give --temporal-address 127.0.0.1:N for a dev server here',
  );
}

/** Checks that the server answering at the settings' address serves their namespace, reached as the worker will. */
async function reuseTemporal(
  settings: TemporalSettings,
  { ports, signal }: { ports: TemporalPorts; signal: AbortSignal },
): Promise<TemporalDevServer> {
  return startTemporalDevServer({
    reuseAddress: settings.address,
    namespace: settings.namespace,
    reuseCredentials: connectionCredentials(settings),
    signal,
  }).catch((error: unknown) => {
    throw explainTemporalPort(explainTlsMismatch(error), ports);
  });
}

/** Starts a dev server with its UI (decrypting through a codec server when encryption is on), added to the stack. */
async function spawnTemporal(
  stack: DevStack,
  settings: TemporalSettings,
  options: { host: string; ports: TemporalPorts; dbFilename: string; signal: AbortSignal },
): Promise<{ server: TemporalDevServer; codec: { url: string } | undefined }> {
  const { host, ports, dbFilename, signal } = options;
  stack.spinner.start(`starting a Temporal dev server on ${settings.address} (data in ${dbFilename})`);
  await mkdir(path.dirname(path.resolve(dbFilename)), { recursive: true });
  const runTenants = settings.encryption ? runTenantsOf(settings) : undefined;
  if (runTenants) stack.add(() => runTenants.close());
  const codec =
    settings.encryption && runTenants
      ? await startCodecServer({
          encryption: settings.encryption,
          port: 0,
          host: '127.0.0.1',
          uiOrigins: [`http://localhost:${ports.ui}`, `http://127.0.0.1:${ports.ui}`],
          runTenants,
        })
      : undefined;
  if (codec) stack.add(() => codec.close());
  const server = await startTemporalDevServer({
    ip: host === 'localhost' ? '127.0.0.1' : host,
    port: ports.gRPC,
    ui: true,
    uiPort: ports.ui,
    dbFilename,
    namespace: settings.namespace,
    // Lets the worker start an activity in the same round trip that schedules it (bench/README.md,
    // "eager activities").
    dynamicConfig: { 'system.enableActivityEagerExecution': true },
    extraArgs: codec ? ['--ui-codec-endpoint', codec.url] : [],
    signal,
  }).catch((error: unknown) => {
    throw explainTemporalPort(error, ports);
  });
  stack.add(() => server.stop());
  return { server, codec };
}

/**
 * A Temporal port given to dev that something else holds is named with the flag that moves it: the gRPC port, held by
 * something that is not Temporal, or a port a started dev server could not bind. A clash on a port the server picked
 * for itself (retried before it gets here) keeps its log; other errors pass through.
 */
function explainTemporalPort(error: unknown, ports: TemporalPorts): unknown {
  if (error instanceof NotTemporalServerError) {
    return usageError(
      `${error.message}. Something other than Temporal holds that port: change it with --temporal-address H:P ` +
        '(a Temporal server that needs TLS also needs its TLS settings, see --help).',
    );
  }
  if (!(error instanceof DevServerPortClashError)) return error;
  const flag =
    error.port === ports.ui
      ? `the Web UI port ${ports.ui}: change it with --ui-port N`
      : error.port === ports.gRPC
        ? `the gRPC port ${ports.gRPC}: change it with --temporal-address 127.0.0.1:N`
        : undefined;
  if (flag === undefined) return error;
  return usageError(
    `The Temporal dev server could not start: a port it needs is in use (is another relay-e dev or Temporal ` +
      `running?), ${flag}.`,
  );
}

interface DevApi {
  url: string;
  keys: DevApiKeys;
}

/** Serves the HTTP API with the dev API key; a port or host it cannot listen on is reported with the flag to change. */
async function startDevApi(
  stack: DevStack,
  settings: TemporalSettings,
  { keys, payloadStore, listen }: { keys: DevApiKeys; listen: ListenAddress; payloadStore: PayloadStore },
): Promise<DevApi> {
  const client = await connectRelayClient(settings, { callRetry: apiCallRetry });
  stack.add(() => client.close());
  const { port, host } = listen;
  const api = await startApiServer({ client, apiKeys: keys.apiKeys, payloadStore, port, host }).catch(
    (error: unknown) => {
      throw explainListenError(error, listen);
    },
  );
  stack.add(() => api.close());
  return { url: api.url, keys };
}

/** Prints the banner (or, with `--json`, one line of JSON) saying where everything is. */
function printReady(ready: {
  json: boolean;
  temporal: DevTemporal;
  worker: CliWorker;
  api: DevApi;
  settings: TemporalSettings;
  /** The connection flags the printed commands carry ({@link connectionHintFlags}). */
  hintFlags: string;
  isDemo: boolean;
}): void {
  const { temporal, worker, api, settings } = ready;
  const model = resolveModel(undefined);
  const uiUrl =
    temporal.server.uiUrl ??
    (temporal.reused ? `http://${temporal.host}:${temporal.uiPort} (if that server serves its UI there)` : undefined);
  const facts = {
    status: 'ready',
    apiUrl: api.url,
    apiKey: api.keys.shownKey,
    tenantId: api.keys.tenantId,
    temporalAddress: temporal.server.address,
    temporalReused: temporal.reused,
    temporalCli: temporal.cliPath,
    namespace: temporal.server.namespace,
    taskQueue: settings.taskQueue,
    uiUrl: temporal.server.uiUrl,
    ...(temporal.codec ? { codecUrl: temporal.codec.url } : {}),
    dbFilename: temporal.reused ? undefined : temporal.dbFilename,
    model: ready.isDemo ? model.modelId : undefined,
    providers: worker.providers,
    tools: worker.toolNames,
    toolsFrom: worker.source,
    payloadStore: worker.payloadStoreFacts,
    ...(worker.approvalWebhook ? { approvalWebhook: worker.approvalWebhook } : {}),
  };
  process.stdout.write(
    ready.json
      ? `${JSON.stringify(facts)}\n`
      : describeReady({
          ...facts,
          uiUrl,
          keySource: api.keys.source,
          hintFlags: ready.hintFlags,
          model: ready.isDemo ? model.description : undefined,
        }),
  );
}

export interface DevApiKeys {
  apiKeys: ApiKeyTenants;
  /** The key to put in the printed examples. */
  shownKey: string;
  tenantId: string;
  source: string;
}

/** RELAY_E_API_KEYS when set; otherwise one key generated on the first start and kept in `.relay-e/dev-api-key`. */
export async function readDevApiKeys(tenantId: string, directory = stateDirectory): Promise<DevApiKeys> {
  if (process.env['RELAY_E_API_KEYS']) {
    const apiKeys = await loadApiKeys({ env: process.env });
    const [first] = apiKeys.entries();
    if (first === undefined) throw usageError('RELAY_E_API_KEYS holds no key');
    return { apiKeys, shownKey: first[0], tenantId: first[1].tenantId, source: 'from RELAY_E_API_KEYS' };
  }
  const file = path.join(directory, 'dev-api-key');
  // An empty file would make '' a key; a file that cannot be read for another reason than its absence is reported.
  let key = await readFile(file, 'utf8').then(
    (text) => text.trim(),
    (error: unknown) => {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return '';
      throw error;
    },
  );
  const problem = key === '' ? undefined : apiKeyProblem(key);
  if (problem !== undefined) {
    throw usageError(
      `${file} holds no usable API key (${problem}): delete it and dev makes one, or set RELAY_E_API_KEYS`,
    );
  }
  if (key === '') {
    key = `rk_dev_${randomBytes(18).toString('base64url')}`;
    await mkdir(directory, { recursive: true });
    await writeFile(file, `${key}\n`, { mode: 0o600 });
  }
  return {
    apiKeys: new Map([[key, { tenantId, name: 'dev' }]]),
    shownKey: key,
    tenantId,
    source: `kept in ${file}`,
  };
}

function splitAddress(address: string): { host: string; port: number } {
  const target = splitHostPort(address);
  if (target === undefined) throw usageError(`Temporal address '${address}' must look like host:port`);
  return target;
}

/** What the ready banner tells. */
interface DevReady {
  apiUrl: string;
  apiKey: string;
  tenantId: string;
  keySource: string;
  temporalAddress: string;
  temporalReused: boolean;
  temporalCli: string | undefined;
  namespace: string;
  taskQueue: string;
  uiUrl: string | undefined;
  dbFilename: string | undefined;
  /** The demo's model; undefined with a project config, whose models the worker serves. */
  model: string | undefined;
  providers: string[];
  tools: string[];
  toolsFrom: string;
  payloadStore: PayloadStoreFacts;
  approvalWebhook?: string;
  hintFlags: string;
}

function describeReady(ready: DevReady): string {
  const cli = cliInvocation();
  const temporal = ready.temporalReused
    ? `${ready.temporalAddress} (an existing server, reused)`
    : `${ready.temporalAddress} (dev server, data in ${ready.dbFilename ?? 'memory'})`;
  const temporalCli = ready.temporalCli
    ? `${ready.temporalCli}\n               e.g. ${ready.temporalCli} workflow list --address ${ready.temporalAddress}`
    : '(none found: install it from https://docs.temporal.io/cli, or set TEMPORAL_CLI_PATH)';
  const models =
    ready.model ?? `${ready.providers.map((provider) => `${provider}:…`).join(', ')} (the providers the worker has)`;
  const auth = `-H 'Authorization: Bearer ${ready.apiKey}'`;
  const stops = ready.temporalReused
    ? 'Ctrl-C stops the API and the worker; the reused Temporal server keeps running'
    : 'Ctrl-C stops the API, the worker and Temporal';
  const tryIt =
    ready.model === undefined
      ? describeProjectExamples(ready.apiUrl, auth, ready.providers)
      : describeDemoExamples(ready.apiUrl, auth, `${cli} run${ready.hintFlags}`, `${cli} runs${ready.hintFlags}`);
  return `
Relay-E dev is ready.

  API          ${ready.apiUrl}   (OpenAPI: ${ready.apiUrl}/v1/openapi.json)
  API key      ${ready.apiKey}   (tenant ${ready.tenantId}, ${ready.keySource})
  Temporal     ${temporal}
               namespace ${ready.namespace}, task queue ${ready.taskQueue}
  Temporal UI  ${ready.uiUrl ?? '(not served by this process)'}
  Temporal CLI ${temporalCli}
  Model        ${models}
  Tools        ${ready.tools.join(', ')}
               from ${ready.toolsFrom}
  Payloads     ${describePayloadStore(ready.payloadStore)}
  Approvers    ${ready.approvalWebhook ? `notified at ${ready.approvalWebhook}` : 'not notified (RELAY_E_APPROVAL_WEBHOOK_URL sets a webhook)'}
${tryIt}
${stops} (runs are kept).
`;
}

function describeDemoExamples(apiUrl: string, auth: string, run: string, runs: string): string {
  const body = JSON.stringify({ model: 'scripted:demo', prompt: 'transfer 50 from ACC-1 to ACC-2' });
  return `
Start a run over HTTP, then approve the transfer:
  curl -s -X POST ${apiUrl}/v1/runs ${auth} \\
    -H 'Content-Type: application/json' -d '${body}'
  curl -s ${apiUrl}/v1/approvals ${auth}
  curl -s -X POST ${apiUrl}/v1/runs/<runId>/approve ${auth} \\
    -H 'Content-Type: application/json' -d '{"toolCallId":"<toolCallId>"}'

Or from the CLI, in another terminal:
  ${run} "transfer 50 from ACC-1 to ACC-2"
  ${runs} --status awaiting_approval
`;
}

function describeProjectExamples(apiUrl: string, auth: string, providers: readonly string[]): string {
  const body = JSON.stringify({ model: `${providers[0] ?? 'openai'}:<model>`, prompt: '<what the agent should do>' });
  return `
Start a run over HTTP, and see what waits for approval:
  curl -s -X POST ${apiUrl}/v1/runs ${auth} \\
    -H 'Content-Type: application/json' -d '${body}'
  curl -s ${apiUrl}/v1/approvals ${auth}
`;
}
