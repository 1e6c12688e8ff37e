import { apiKeyProblem, createApiKeyVerifier } from '../http/api-keys.js';
import { startHttpServer } from '../http/start-api-server.js';
import type { ApiServer } from '../http/start-api-server.js';
import { AesGcmPayloadCodec } from '../security/aes-gcm-payload-codec.js';
import { allowedHostNameOf, createCodecServer, defaultUiOrigins } from '../security/codec-server.js';
import type { CodecAccess } from '../security/codec-server.js';
import { createRunTenantLookup } from '../client/run-tenants.js';
import type { RunTenantLookup } from '../client/run-tenants.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { encryptionOptionsFromEnv } from '../security/encryption-keys.js';
import { exitCodes, usageError } from './cli-error.js';
import { envSetting } from './env-setting.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { parseCommandFlags } from './command.js';
import { explainListenError, readPort } from './server-port.js';
import type { ListenSetting } from './server-port.js';
import { waitForShutdownSignal } from './shutdown-signal.js';
import { connectRelayClient, readTemporalSettings } from './temporal-settings.js';
import type { TemporalSettings } from './temporal-settings.js';

/** The codec server's port when neither `--port` nor RELAY_E_CODEC_PORT says otherwise. */
const defaultCodecPort = 8788;

const codecListen: ListenSetting = {
  variable: 'RELAY_E_CODEC_PORT',
  fallback: defaultCodecPort,
  usedBy: 'another relay-e codec-server',
};

const codecServerOptions = {
  address: { type: 'string' },
  namespace: { type: 'string' },
  profile: { type: 'string' },
  port: { type: 'string' },
  host: { type: 'string' },
  'ui-origin': { type: 'string', multiple: true },
  'allowed-host': { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

/**
 * Reads RELAY_E_CODEC_TOKENS: `token` lets its holder decrypt every payload, `token:tenant` only the payloads of that
 * tenant's runs; empty when unset (no token needed). A token is held to the API keys' rule (16 characters at least, no
 * whitespace): nothing limits guesses at the codec server either. A token given twice is refused: the last entry
 * would win, and `t1:acme,t1` would make a token meant for one tenant read every tenant's payloads.
 */
export function parseCodecTokens(list: string | undefined): Map<string, CodecAccess> {
  const tokens = new Map<string, CodecAccess>();
  const positions = new Map<string, number>();
  for (const entry of (list ?? '').split(',').map((item) => item.trim())) {
    if (entry === '') continue;
    const position = positions.size + 1;
    const separator = entry.indexOf(':');
    const token = separator < 0 ? entry : entry.slice(0, separator);
    const tenantId = separator < 0 ? undefined : entry.slice(separator + 1);
    // The entry holds a secret, so the messages point at it by position instead of quoting it.
    if (token === '' || tenantId === '') {
      throw usageError(`RELAY_E_CODEC_TOKENS entry ${position}: expected 'token' or 'token:tenant'`);
    }
    const weakness = apiKeyProblem(token);
    if (weakness !== undefined) throw usageError(`RELAY_E_CODEC_TOKENS entry ${position}: ${weakness}`);
    const earlier = positions.get(token);
    if (earlier !== undefined) {
      throw usageError(`RELAY_E_CODEC_TOKENS entry ${position} repeats the token of entry ${earlier}`);
    }
    positions.set(token, position);
    tokens.set(token, tenantId === undefined ? {} : { tenantId });
  }
  return tokens;
}

/**
 * The host names `--allowed-host` gives, else RELAY_E_CODEC_ALLOWED_HOSTS (comma-separated); `undefined` when neither
 * names one. A name with a scheme or a port is refused, so `https://codec.example.com` is not taken for a name.
 */
function readAllowedHosts(flags: readonly string[] | undefined, env: NodeJS.ProcessEnv): string[] | undefined {
  const from = flags ? '--allowed-host' : 'RELAY_E_CODEC_ALLOWED_HOSTS';
  const entries = (flags ?? envSetting(env, 'RELAY_E_CODEC_ALLOWED_HOSTS')?.split(',') ?? [])
    .map((entry) => entry.trim())
    .filter((entry) => entry !== '');
  for (const entry of entries) {
    if (allowedHostNameOf(entry) === undefined) {
      throw usageError(`${from}: '${entry}' is not a host name; give the name alone, without a scheme or a port`);
    }
  }
  return entries.length > 0 ? entries : undefined;
}

/**
 * Serves the codec endpoints with these keys; tokens from RELAY_E_CODEC_TOKENS, when set, are required, and a token
 * limited to a tenant needs `runTenants` to tell whose run a payload belongs to. It answers requests for localhost,
 * IP addresses, `host` and `allowedHosts`; with tokens and no `allowedHosts`, for any name, since a page that rebinds
 * a name to this server's address has no token to send.
 */
export function startCodecServer(options: {
  encryption: EncryptionOptions;
  port: number;
  host: string;
  uiOrigins?: readonly string[];
  allowedHosts?: readonly string[];
  env?: NodeJS.ProcessEnv;
  runTenants?: RunTenantLookup;
}): Promise<ApiServer> {
  const tokens = parseCodecTokens((options.env ?? process.env)['RELAY_E_CODEC_TOKENS']);
  if ([...tokens.values()].some((access) => access.tenantId !== undefined) && !options.runTenants) {
    throw usageError('A RELAY_E_CODEC_TOKENS token limited to a tenant needs a Temporal connection to find runs');
  }
  const verify = tokens.size > 0 ? createApiKeyVerifier(tokens) : undefined;
  const { runTenants } = options;
  const app = createCodecServer({
    codec: new AesGcmPayloadCodec(options.encryption),
    ...(options.uiOrigins ? { uiOrigins: options.uiOrigins } : {}),
    allowedHosts:
      !options.allowedHosts && verify
        ? 'any'
        : [...(options.allowedHosts ?? []), ...(allowedHostNameOf(options.host) ? [options.host] : [])],
    ...(verify
      ? { authorize: (authorization) => verify(/^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? '') ?? false }
      : {}),
    ...(runTenants ? { tenantOfRun: (runId) => runTenants.tenantOf(runId) } : {}),
  });
  return startHttpServer(app, { port: options.port, host: options.host });
}

/** Finds runs' tenants with a Relay-E client opened with these settings on first use. */
export function runTenantsOf(settings: TemporalSettings): RunTenantLookup {
  return createRunTenantLookup(async () => {
    const relay = await connectRelayClient(settings);
    return { temporal: relay.temporal, close: () => relay.close() };
  });
}

const cli = cliInvocation();

export const codecServerCommand: Command = {
  name: 'codec-server',
  summary: commandSummaries['codec-server'],
  help: `Usage: ${cli} codec-server [options]

Serves POST /encode and POST /decode in Temporal's codec server format with the payload encryption
keys, so people who may read runs see them decrypted in the Temporal Web UI:
  temporal server start-dev --ui-codec-endpoint http://127.0.0.1:${defaultCodecPort}
or, for a running UI, Settings > Data Encoder. The temporal CLI takes --codec-endpoint the same way.

Keys: RELAY_E_ENCRYPTION_KEYS="id:base64key,..." (required), RELAY_E_ENCRYPTION_KEY_ID.
Anyone who reaches this port can decrypt: keep it on loopback, or set RELAY_E_CODEC_TOKENS="t1,t2:acme"
to require 'Authorization: Bearer <token>' (temporal CLI: --codec-auth 'Bearer <token>'); each token
has 16 to 512 characters and no whitespace, as an API key (make it random). A token
alone decrypts every payload; 'token:tenant' only the payloads of that tenant's runs, the others
come back still encrypted (the server then reads runs' tenants from Temporal, with the settings below).
It answers requests for localhost, IP addresses and the names --allowed-host gives, so a web page
whose name is pointed at this address (DNS rebinding) is refused (403); with tokens set and no
--allowed-host it answers any name, since such a page has no token.

Options:
  --port N               port (env RELAY_E_CODEC_PORT, default ${defaultCodecPort}; 0 picks a free one)
  --host IP              address to bind (default 127.0.0.1)
  --ui-origin URL        browser origin allowed by CORS; repeatable (default ${defaultUiOrigins.join(', ')})
  --allowed-host NAME    a host name the UI calls it by (codec.example.com); repeatable
                         (env RELAY_E_CODEC_ALLOWED_HOSTS, comma-separated)
  --address HOST:PORT    Temporal frontend (env TEMPORAL_ADDRESS, default localhost:7233)
  --namespace NAME       Temporal namespace (env TEMPORAL_NAMESPACE, default default)
  --profile NAME         profile of the Temporal config file (env TEMPORAL_PROFILE)
  --json                 machine-readable output
  -h, --help             this help`,
  async run(argv) {
    const { values } = parseCommandFlags('codec-server', argv, codecServerOptions);
    const encryption = encryptionOptionsFromEnv(process.env);
    if (!encryption) throw usageError('Set RELAY_E_ENCRYPTION_KEYS="id:base64key,..." to serve the codec');
    const port = readPort(values.port, process.env, codecListen);
    const allowedHosts = readAllowedHosts(values['allowed-host'], process.env);
    // Listening before the ready line, so a caller that stops the server as soon as it reads it closes it in order.
    const shutdown = waitForShutdownSignal();
    const host = values.host ?? '127.0.0.1';
    const runTenants = runTenantsOf(await readTemporalSettings(values, process.env));
    const server = await startCodecServer({
      encryption,
      port,
      host,
      ...(values['ui-origin'] ? { uiOrigins: values['ui-origin'] } : {}),
      ...(allowedHosts ? { allowedHosts } : {}),
      runTenants,
    }).catch((error: unknown) => {
      throw explainListenError(error, { port, host, hostFromFlag: true }, codecListen);
    });
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ status: 'ready', url: server.url })}\n`
        : `Codec server listening on ${server.url} (POST /encode, POST /decode)\n`,
    );
    await shutdown;
    await server.close();
    await runTenants.close();
    return exitCodes.ok;
  },
};
