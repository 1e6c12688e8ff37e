import { loadApiKeys } from '../http/api-keys.js';
import { startApiServer } from '../http/start-api-server.js';
import { createPayloadStore } from '../store/create-payload-store.js';
import { projectPayloadStoreConfig } from './cli-payload-store.js';
import { exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { apiHost, connectionOptions, connectionOptionsHelp, parseCommandFlags } from './command.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { envSetting } from './env-setting.js';
import { configOption, configOptionHelp, loadProjectConfig } from './project-config.js';
import { connectRelayClient, readTemporalSettings } from './temporal-settings.js';

/** The API port when neither `--port` nor RELAY_E_PORT says otherwise. */
export const defaultApiPort = 8787;

/**
 * Turns "address in use" into a sentence naming the flag that picks another port; other errors pass through.
 */
export function explainBusyPort(error: unknown, port: number, host: string): unknown {
  if ((error as NodeJS.ErrnoException | undefined)?.code !== 'EADDRINUSE') return error;
  return usageError(
    `Port ${port} on ${host} is already in use (another relay-e dev or serve?). ` +
      'Pick another with --port N or RELAY_E_PORT=N (0 picks a free one).',
  );
}

/** Reads `--port`/RELAY_E_PORT as a TCP port (0 picks a free one). */
export function readPort(flag: string | undefined, env: NodeJS.ProcessEnv = process.env): number {
  const text = flag ?? env['RELAY_E_PORT'];
  if (text === undefined || text === '') return defaultApiPort;
  const port = Number(text);
  if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError(`Invalid port '${text}'`);
  return port;
}

const serveOptions = {
  ...connectionOptions,
  port: { type: 'string' },
  host: { type: 'string' },
  'api-keys-file': { type: 'string' },
  ...configOption,
} as const;

const cli = cliInvocation();

export const serveCommand: Command = {
  name: 'serve',
  summary: commandSummaries.serve,
  help: `Usage: ${cli} serve [options]

Serves the HTTP API; run workers separately (${cli} worker). Callers authenticate with an API key
that maps to a tenant.

Options:
  --port N               port (env RELAY_E_PORT, default ${defaultApiPort}; 0 picks a free one)
  --host IP              address to bind (env RELAY_E_HOST, default 127.0.0.1; 0.0.0.0 in containers)
  --api-keys-file PATH   API keys file (env RELAY_E_API_KEYS_FILE); or RELAY_E_API_KEYS="key:tenant,..."
  env RELAY_E_INBOX_URL  the inbox's public address (https://...) behind a proxy that ends TLS: the only
                         origin its sign-in and decisions are taken from, and its cookie Secure for https
${configOptionHelp}
                         (the API takes its task queue and encryption keys from it)

${connectionOptionsHelp}`,
  async run(argv) {
    const { values } = parseCommandFlags('serve', argv, serveOptions);
    const shutdown = waitForShutdownSignal();
    const file = values['api-keys-file'] ?? process.env['RELAY_E_API_KEYS_FILE'];
    const apiKeys = await loadApiKeys({ ...(file ? { file } : {}), env: process.env });
    const project = await loadProjectConfig(values.config);
    const settings = await readTemporalSettings(values, process.env, project?.config);
    const client = await connectRelayClient(settings);
    // Where the workers keep outputs and texts out of history, for GET /v1/runs/{id}/stored/{ref}.
    const payloadStore = createPayloadStore(projectPayloadStoreConfig(settings, project));
    const port = readPort(values.port);
    const host = apiHost(values.host);
    // Behind a proxy that ends TLS: the inbox's public address, the only origin it takes changes from.
    const inboxUrl = envSetting(process.env, 'RELAY_E_INBOX_URL');
    const apiOptions = { client, apiKeys, payloadStore, port, host, ...(inboxUrl !== undefined ? { inboxUrl } : {}) };
    const api = await startApiServer(apiOptions).catch(async (error: unknown) => {
      await Promise.all([payloadStore.close(), client.close()]);
      throw explainBusyPort(error, port, host);
    });
    const tenants = [...new Set([...apiKeys.values()].map((entry) => entry.tenantId))];
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ status: 'ready', url: api.url, tenants, taskQueue: settings.taskQueue })}\n`
        : `API listening on ${api.url} (Temporal ${settings.address}, task queue ${settings.taskQueue}; tenants: ${tenants.join(', ')})\n`,
    );
    await shutdown;
    await api.close();
    await Promise.all([payloadStore.close(), client.close()]);
    return exitCodes.ok;
  },
};
