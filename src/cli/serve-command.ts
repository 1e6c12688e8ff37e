import { loadApiKeys } from '../http/api-keys.js';
import type { ApiKeyTenants } from '../http/api-keys.js';
import { publicOriginOf } from '../http/inbox/create-inbox.js';
import { startApiServer } from '../http/start-api-server.js';
import { describeClientNamespace, NamespaceCheckTimeoutError } from '../http/temporal-readiness.js';
import { isTemporalUnavailable, missingNamespaceOf } from '../client/temporal-unavailable.js';
import type { RelayClient } from '../client/relay-client.js';
import { createPayloadStore } from '../store/create-payload-store.js';
import { errorMessage } from '../shared/error-message.js';
import { projectPayloadStoreConfig } from './cli-payload-store.js';
import { CliError, exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { apiHost, parseCommandFlags, serverConnectionOptions, serverConnectionOptionsHelp } from './command.js';
import { defaultApiPort, explainListenError, readPort } from './server-port.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { envSetting } from './env-setting.js';
import { configOption, configOptionHelp, loadProjectConfig } from './project-config.js';
import { apiCallRetry, connectRelayClient, readTemporalSettings } from './temporal-settings.js';
import type { TemporalSettings } from './temporal-settings.js';
import { shellWord } from './connection-hints.js';

/**
 * The keys of `--api-keys-file` (else RELAY_E_API_KEYS_FILE) and RELAY_E_API_KEYS; a file that cannot be read is a
 * set-up error naming where its path came from.
 */
async function readApiKeys(flag: string | undefined, env: NodeJS.ProcessEnv): Promise<ApiKeyTenants> {
  const file = flag ?? envSetting(env, 'RELAY_E_API_KEYS_FILE');
  try {
    return await loadApiKeys({ ...(file !== undefined ? { file } : {}), env });
  } catch (error) {
    if (file === undefined || !isFileSystemError(error)) throw error;
    const reason = error.code === 'ENOENT' ? 'does not exist' : `cannot be read (${error.code})`;
    throw usageError(
      `API keys file ${file} ${reason}: give its path with --api-keys-file PATH or RELAY_E_API_KEYS_FILE`,
    );
  }
}

/** An error of a file system call (it names the call), not one about what a file holds. */
function isFileSystemError(error: unknown): error is NodeJS.ErrnoException & { code: string } {
  const { syscall, code } = (error ?? {}) as NodeJS.ErrnoException;
  return typeof syscall === 'string' && typeof code === 'string';
}

/** RELAY_E_INBOX_URL, checked as the inbox will take it (an http or https URL). */
function readInboxUrl(env: NodeJS.ProcessEnv): string | undefined {
  const inboxUrl = envSetting(env, 'RELAY_E_INBOX_URL');
  try {
    publicOriginOf(inboxUrl);
  } catch (error) {
    throw usageError(`RELAY_E_INBOX_URL: ${errorMessage(error)}`);
  }
  return inboxUrl;
}

const serveOptions = {
  ...serverConnectionOptions,
  port: { type: 'string' },
  host: { type: 'string' },
  'api-keys-file': { type: 'string' },
  ...configOption,
} as const;

type ServeFlags = ReturnType<typeof parseCommandFlags<typeof serveOptions>>['values'];

/**
 * Every flag and setting `serve` takes, read and checked before anything connects or opens: a mistake in one is a
 * usage error that leaves nothing to close, not a Temporal that cannot be reached.
 */
async function readServeSettings(values: ServeFlags) {
  const apiKeys = await readApiKeys(values['api-keys-file'], process.env);
  const port = readPort(values.port);
  const host = apiHost(values.host);
  const listen = { port, host, hostFromFlag: values.host !== undefined };
  // Behind a proxy that ends TLS: the inbox's public address, the only origin it takes changes from.
  const inboxUrl = readInboxUrl(process.env);
  const project = await loadProjectConfig(values.config);
  const settings = await readTemporalSettings(values, process.env, project?.config);
  // Where the workers keep outputs and texts out of history, for GET /v1/runs/{id}/stored/{ref}.
  const payloadStoreConfig = projectPayloadStoreConfig(settings, project);
  return { apiKeys, listen, inboxUrl, settings, payloadStoreConfig };
}

/** How long the start's look at the namespace waits: the connection has just answered, so this is a generous bound. */
const namespaceCheckTimeoutMs = 10_000;

/**
 * Connects the API's client and has Temporal describe its namespace once, as a worker's start does: a namespace the
 * server does not have (a misspelt TEMPORAL_NAMESPACE) is refused with a sentence naming it, not found by every request
 * later. That, and a server that cannot be reached, fail the start at once with exit 5, as they do `worker`'s and `dev`'s.
 */
async function connectServedClient(settings: TemporalSettings): Promise<RelayClient> {
  const client = await connectRelayClient(settings, { callRetry: apiCallRetry }).catch((error: unknown) => {
    throw explainNamespaceCheckFailure(error, settings);
  });
  try {
    await describeClientNamespace(client, namespaceCheckTimeoutMs);
    return client;
  } catch (error) {
    await client.close();
    throw explainNamespaceCheckFailure(error, settings);
  }
}

/** A missing namespace, or a server that cannot be reached or did not answer, as a sentence (exit 5); else `error`. */
function explainNamespaceCheckFailure(error: unknown, { address, namespace }: TemporalSettings): unknown {
  if (missingNamespaceOf(error) !== undefined) {
    return new CliError(
      exitCodes.unavailable,
      `Temporal at ${address} has no namespace '${namespace}': correct --namespace or TEMPORAL_NAMESPACE, or create ` +
        `it (temporal operator namespace create --namespace ${shellWord(namespace)})`,
    );
  }
  if (error instanceof NamespaceCheckTimeoutError || isTemporalUnavailable(error)) {
    return new CliError(exitCodes.unavailable, `Temporal at ${address} cannot be reached: ${errorMessage(error)}`);
  }
  return error;
}

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

${serverConnectionOptionsHelp}`,
  async run(argv) {
    const { values } = parseCommandFlags('serve', argv, serveOptions);
    const shutdown = waitForShutdownSignal();
    const { apiKeys, listen, inboxUrl, settings, payloadStoreConfig } = await readServeSettings(values);
    // Created before connecting: a store config it refuses fails before the client opens.
    const payloadStore = createPayloadStore(payloadStoreConfig);
    const client = await connectServedClient(settings).catch(async (error: unknown) => {
      await payloadStore.close();
      throw error;
    });
    const { port, host } = listen;
    const apiOptions = { client, apiKeys, payloadStore, port, host, ...(inboxUrl !== undefined ? { inboxUrl } : {}) };
    const api = await startApiServer(apiOptions).catch(async (error: unknown) => {
      await Promise.all([payloadStore.close(), client.close()]);
      throw explainListenError(error, listen);
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
