import { createApiKeyVerifier } from '../http/api-keys.js';
import { startHttpServer } from '../http/start-api-server.js';
import type { ApiServer } from '../http/start-api-server.js';
import { AesGcmPayloadCodec } from '../security/aes-gcm-payload-codec.js';
import { createCodecServer, defaultUiOrigins } from '../security/codec-server.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { encryptionOptionsFromEnv } from '../security/encryption-keys.js';
import { exitCodes, usageError } from './cli-error.js';
import { cliInvocation } from './cli-invocation.js';
import type { Command } from './command.js';
import { commandSummaries } from './command-summaries.js';
import { parseCommandArgs } from './command.js';
import { waitForShutdownSignal } from './shutdown-signal.js';

/** The codec server's port when neither `--port` nor RELAY_E_CODEC_PORT says otherwise. */
export const defaultCodecPort = 8788;

const codecServerOptions = {
  port: { type: 'string' },
  host: { type: 'string' },
  'ui-origin': { type: 'string', multiple: true },
  json: { type: 'boolean' },
} as const;

/** Serves the codec endpoints with these keys; tokens from RELAY_E_CODEC_TOKENS, when set, are required. */
export function startCodecServer(options: {
  encryption: EncryptionOptions;
  port: number;
  host: string;
  uiOrigins?: readonly string[];
  env?: NodeJS.ProcessEnv;
}): Promise<ApiServer> {
  const tokens = (options.env ?? process.env)['RELAY_E_CODEC_TOKENS']
    ?.split(',')
    .map((token) => token.trim())
    .filter((token) => token !== '');
  const verify =
    tokens && tokens.length > 0
      ? createApiKeyVerifier(new Map(tokens.map((token) => [token, { tenantId: 'codec' }])))
      : undefined;
  const app = createCodecServer({
    codec: new AesGcmPayloadCodec(options.encryption),
    ...(options.uiOrigins ? { uiOrigins: options.uiOrigins } : {}),
    ...(verify
      ? { authorize: (authorization) => verify(/^Bearer\s+(\S+)$/i.exec(authorization ?? '')?.[1] ?? '') !== undefined }
      : {}),
  });
  return startHttpServer(app, { port: options.port, host: options.host });
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
Anyone who reaches this port can decrypt: keep it on loopback, or set RELAY_E_CODEC_TOKENS="t1,t2"
to require 'Authorization: Bearer <token>' (temporal CLI: --codec-auth 'Bearer <token>').

Options:
  --port N               port (env RELAY_E_CODEC_PORT, default ${defaultCodecPort}; 0 picks a free one)
  --host IP              address to bind (default 127.0.0.1)
  --ui-origin URL        browser origin allowed by CORS; repeatable (default ${defaultUiOrigins.join(', ')})
  --json                 machine-readable output
  -h, --help             this help`,
  async run(argv) {
    const { values } = parseCommandArgs('codec-server', argv, codecServerOptions);
    const encryption = encryptionOptionsFromEnv(process.env);
    if (!encryption) throw usageError('Set RELAY_E_ENCRYPTION_KEYS="id:base64key,..." to serve the codec');
    const portText = values.port ?? process.env['RELAY_E_CODEC_PORT'];
    const port = portText === undefined || portText === '' ? defaultCodecPort : Number(portText);
    if (!Number.isInteger(port) || port < 0 || port > 65_535) throw usageError(`Invalid port '${portText}'`);
    const server = await startCodecServer({
      encryption,
      port,
      host: values.host ?? '127.0.0.1',
      ...(values['ui-origin'] ? { uiOrigins: values['ui-origin'] } : {}),
    });
    process.stdout.write(
      values.json
        ? `${JSON.stringify({ status: 'ready', url: server.url })}\n`
        : `Codec server listening on ${server.url} (POST /encode, POST /decode)\n`,
    );
    await waitForShutdownSignal();
    await server.close();
    return exitCodes.ok;
  },
};
