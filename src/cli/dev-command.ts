import { randomBytes } from 'node:crypto';
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { connect } from 'node:net';
import path from 'node:path';
import { startTemporalDevServer } from '../dev/temporal-dev-server.js';
import type { TemporalDevServer } from '../dev/temporal-dev-server.js';
import type { ApiKeyTenants } from '../http/api-keys.js';
import { loadApiKeys } from '../http/api-keys.js';
import { startApiServer } from '../http/start-api-server.js';
import { exitCodes, usageError } from './cli-error.js';
import { startCodecServer } from './codec-server-command.js';
import type { Command } from './command.js';
import { connectionOptions, connectionOptionsHelp, parseCommandArgs } from './command.js';
import { resolveModel } from './resolve-model.js';
import { defaultApiPort, readPort } from './serve-command.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { createSpinner } from './spinner.js';
import { connectRelayClient, readTemporalSettings } from './temporal-settings.js';
import { startDemoWorker } from './worker-command.js';

const devOptions = {
  ...connectionOptions,
  'temporal-address': { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'ui-port': { type: 'string' },
  db: { type: 'string' },
} as const;

const stateDirectory = '.relay-e';
const defaultUiPort = 8233;
const reachableTimeoutMs = 1_000;

export const devCommand: Command = {
  name: 'dev',
  summary: 'everything on one machine: Temporal dev server with Web UI, a demo worker and the HTTP API',
  help: `Usage: relay-e dev [options]

Starts (or reuses) a Temporal dev server with the Web UI, a worker with the banking demo tools and
the HTTP API with a dev API key, then prints how to start a run. Runs are kept in a SQLite file, so
a restart keeps them. Ctrl-C stops everything.

Options:
  --temporal-address H:P Temporal to reuse if it is reachable there; otherwise a dev server is started
                         on that address (same as --address; env TEMPORAL_ADDRESS, default localhost:7233)
  --ui-port N            Temporal Web UI port of a started server (default ${defaultUiPort})
  --db PATH              SQLite file of a started server (default ${stateDirectory}/temporal.db)
  --port N               API port (env RELAY_E_PORT, default ${defaultApiPort}; 0 picks a free one)
  --host IP              API bind address (env RELAY_E_HOST, default 127.0.0.1)
  The API key is RELAY_E_API_KEYS="key:tenant,..." when set, else one generated once and kept in
  ${stateDirectory}/dev-api-key (tenant from --tenant, default demo).
  With RELAY_E_ENCRYPTION_KEYS set, payloads are encrypted and a started server's Web UI decrypts
  them through a codec server on loopback (see relay-e codec-server --help).

${connectionOptionsHelp}`,
  async run(argv) {
    const { values } = parseCommandArgs('dev', argv, devOptions);
    const shutdown = waitForShutdownSignal();
    const settings = await readTemporalSettings({ ...values, address: values['temporal-address'] ?? values.address });
    const apiPort = readPort(values.port);
    const uiPort = values['ui-port'] === undefined ? defaultUiPort : readPort(values['ui-port']);
    const json = values.json === true;
    const spinner = createSpinner(!json && process.stderr.isTTY);

    const cleanups: Array<() => Promise<void>> = [];
    const stopAll = async () => {
      for (const cleanup of cleanups.reverse()) await cleanup();
    };
    try {
      spinner.start(`connecting to Temporal at ${settings.address}`);
      const { host, port } = splitAddress(settings.address);
      const reused = await isReachable(host, port);
      const dbFilename = values.db ?? path.join(stateDirectory, 'temporal.db');
      if (!reused) {
        spinner.start(`starting a Temporal dev server on ${settings.address} (data in ${dbFilename})`);
        await mkdir(path.dirname(path.resolve(dbFilename)), { recursive: true });
      }
      // With encryption on, the UI started here decrypts through a codec server on loopback.
      const codec =
        !reused && settings.encryption
          ? await startCodecServer({
              encryption: settings.encryption,
              port: 0,
              host: '127.0.0.1',
              uiOrigins: [`http://localhost:${uiPort}`, `http://127.0.0.1:${uiPort}`],
            })
          : undefined;
      if (codec) cleanups.push(() => codec.close());
      const server: TemporalDevServer = reused
        ? await startTemporalDevServer({ reuseAddress: settings.address, namespace: settings.namespace })
        : await startTemporalDevServer({
            ip: host === 'localhost' ? '127.0.0.1' : host,
            port,
            ui: true,
            uiPort,
            dbFilename,
            namespace: settings.namespace,
            // Lets the worker start an activity in the same round trip that schedules it (bench/README.md,
            // "eager activities").
            dynamicConfig: { 'system.enableActivityEagerExecution': true },
            extraArgs: codec ? ['--ui-codec-endpoint', codec.url] : [],
          });
      cleanups.push(() => server.stop());
      const serverSettings = { ...settings, address: server.address };

      spinner.start('starting the worker (bundling the workflows takes a few seconds)');
      const worker = await startDemoWorker(serverSettings);
      cleanups.push(() => worker.stop());

      const keys = await readDevApiKeys(settings.tenantId);
      const client = await connectRelayClient(serverSettings);
      cleanups.push(() => client.close());
      const api = await startApiServer({
        client,
        apiKeys: keys.apiKeys,
        port: apiPort,
        host: values.host ?? process.env['RELAY_E_HOST'] ?? '127.0.0.1',
      });
      cleanups.push(() => api.close());
      spinner.stop();

      const model = resolveModel(undefined);
      const uiUrl =
        server.uiUrl ?? (reused ? `http://${host}:${uiPort} (if that server serves its UI there)` : undefined);
      const ready = {
        status: 'ready',
        apiUrl: api.url,
        apiKey: keys.shownKey,
        tenantId: keys.tenantId,
        temporalAddress: server.address,
        temporalReused: reused,
        namespace: server.namespace,
        taskQueue: settings.taskQueue,
        uiUrl: server.uiUrl,
        ...(codec ? { codecUrl: codec.url } : {}),
        dbFilename: reused ? undefined : dbFilename,
        model: model.modelId,
        providers: worker.providers,
      };
      process.stdout.write(
        json
          ? `${JSON.stringify(ready)}\n`
          : describeReady({
              ...ready,
              uiUrl,
              keySource: keys.source,
              model: model.description,
              tools: worker.toolNames,
            }),
      );
      await Promise.race([shutdown, worker.finished]);
      if (!json) process.stderr.write('\nShutting down: API, worker, Temporal...\n');
    } finally {
      spinner.stop();
      await stopAll();
    }
    if (!json) process.stderr.write('Stopped.\n');
    return exitCodes.ok;
  },
};

interface DevApiKeys {
  apiKeys: ApiKeyTenants;
  /** The key to put in the printed examples. */
  shownKey: string;
  tenantId: string;
  source: string;
}

/** RELAY_E_API_KEYS when set; otherwise one key generated on the first start and kept in `.relay-e/dev-api-key`. */
async function readDevApiKeys(tenantId: string): Promise<DevApiKeys> {
  if (process.env['RELAY_E_API_KEYS']) {
    const apiKeys = await loadApiKeys({ env: process.env });
    const [first] = apiKeys.entries();
    if (first === undefined) throw usageError('RELAY_E_API_KEYS holds no key');
    return { apiKeys, shownKey: first[0], tenantId: first[1].tenantId, source: 'from RELAY_E_API_KEYS' };
  }
  const file = path.join(stateDirectory, 'dev-api-key');
  let key: string;
  try {
    key = (await readFile(file, 'utf8')).trim();
  } catch {
    key = `rk_dev_${randomBytes(18).toString('base64url')}`;
    await mkdir(stateDirectory, { recursive: true });
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
  const match = /^(\[[^\]]+\]|[^:]+):(\d+)$/.exec(address);
  const port = Number(match?.[2]);
  if (!match?.[1] || !Number.isInteger(port) || port <= 0 || port > 65_535) {
    throw usageError(`Temporal address '${address}' must look like host:port`);
  }
  return { host: match[1].replace(/^\[|\]$/g, ''), port };
}

function isReachable(host: string, port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, timeout: reachableTimeoutMs });
    const done = (reachable: boolean) => {
      socket.destroy();
      resolve(reachable);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

function describeReady(ready: {
  apiUrl: string;
  apiKey: string;
  tenantId: string;
  keySource: string;
  temporalAddress: string;
  temporalReused: boolean;
  namespace: string;
  taskQueue: string;
  uiUrl: string | undefined;
  dbFilename: string | undefined;
  model: string;
  tools: string[];
}): string {
  const cli = runningFromSource() ? 'npm run relay-e --' : 'relay-e';
  const addressFlag = ready.temporalAddress === 'localhost:7233' ? '' : ` --address ${ready.temporalAddress}`;
  const temporal = ready.temporalReused
    ? `${ready.temporalAddress} (an existing server, reused)`
    : `${ready.temporalAddress} (dev server, data in ${ready.dbFilename ?? 'memory'})`;
  const body = JSON.stringify({ model: 'scripted:demo', prompt: 'transfer 50 from ACC-1 to ACC-2' });
  return `
Relay-E dev is ready.

  API          ${ready.apiUrl}   (OpenAPI: ${ready.apiUrl}/v1/openapi.json)
  API key      ${ready.apiKey}   (tenant ${ready.tenantId}, ${ready.keySource})
  Temporal     ${temporal}
               namespace ${ready.namespace}, task queue ${ready.taskQueue}
  Temporal UI  ${ready.uiUrl ?? '(not served by this process)'}
  Model        ${ready.model}
  Tools        ${ready.tools.join(', ')}

Start a run over HTTP, then approve the transfer:
  curl -s -X POST ${ready.apiUrl}/v1/runs -H 'Authorization: Bearer ${ready.apiKey}' \\
    -H 'Content-Type: application/json' -d '${body}'
  curl -s ${ready.apiUrl}/v1/approvals -H 'Authorization: Bearer ${ready.apiKey}'
  curl -s -X POST ${ready.apiUrl}/v1/runs/<runId>/approve -H 'Authorization: Bearer ${ready.apiKey}' \\
    -H 'Content-Type: application/json' -d '{"toolCallId":"<toolCallId>"}'

Or from the CLI, in another terminal:
  ${cli} run${addressFlag} "transfer 50 from ACC-1 to ACC-2"
  ${cli} runs${addressFlag} --status awaiting_approval

Ctrl-C stops the API, the worker and Temporal (runs are kept).
`;
}

function runningFromSource(): boolean {
  return import.meta.url.endsWith('.ts');
}
