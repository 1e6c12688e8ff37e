/**
 * A Relay-E worker and client on a Temporal cluster or Temporal Cloud instead of the dev server
 * (docs/operations.md). Run it against the local cluster:
 *
 *   bash scripts/cluster.sh up
 *   TEMPORAL_ADDRESS=127.0.0.1:17233 npm run example:cluster
 *
 * or against Temporal Cloud with an API key (TLS comes with it) or with mTLS:
 *
 *   TEMPORAL_ADDRESS=<region endpoint>:7233 TEMPORAL_NAMESPACE=<namespace>.<account> TEMPORAL_API_KEY=… npm run example:cluster
 *   TEMPORAL_TLS_CLIENT_CERT_PATH=client.pem TEMPORAL_TLS_CLIENT_KEY_PATH=client.key …
 *
 * RELAY_E_ENCRYPTION_KEYS="k1:<base64 of 32 bytes>" encrypts every payload before it leaves the process.
 */
import { readFileSync } from 'node:fs';
import type { TLSConfig } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime } from '@temporalio/worker';
import { RelayClient, encryptionOptionsFromEnv } from '../src/index.js';
import { createWorker } from '../src/worker/index.js';
import { scriptedModel } from '../src/testing/index.js';

const address = process.env['TEMPORAL_ADDRESS'] ?? 'localhost:7233';
const namespace = process.env['TEMPORAL_NAMESPACE'] ?? 'default';
const apiKey = process.env['TEMPORAL_API_KEY'];
const certificatePath = process.env['TEMPORAL_TLS_CLIENT_CERT_PATH'];
const keyPath = process.env['TEMPORAL_TLS_CLIENT_KEY_PATH'];

// Temporal Cloud takes an API key over TLS, or a client certificate (mTLS); a self-hosted cluster takes either or
// neither, as its frontend's TLS settings say.
const tls: TLSConfig | boolean | undefined =
  certificatePath && keyPath
    ? { clientCertPair: { crt: readFileSync(certificatePath), key: readFileSync(keyPath) } }
    : apiKey
      ? true
      : undefined;
const credentials = { ...(apiKey ? { apiKey } : {}), ...(tls !== undefined ? { tls } : {}) };
const encryption = encryptionOptionsFromEnv();
const taskQueue = 'relay-e-example';

Runtime.install({ logger: new DefaultLogger('WARN') });
const connection = await NativeConnection.connect({ address, ...credentials });
const worker = await createWorker({
  connection,
  namespace,
  taskQueue,
  tools: [],
  models: { scripted: scriptedModel([{ text: 'Hello from the cluster.' }]) },
  ...(encryption ? { encryption } : {}),
});
const client = await RelayClient.connect({
  address,
  namespace,
  taskQueue,
  ...credentials,
  ...(encryption ? { encryption } : {}),
});

await worker.runUntil(async () => {
  const { runId } = await client.startRun({ tenantId: 'example', model: 'scripted:hello', prompt: 'Say hello.' });
  console.log(await client.result(runId));
});
await client.close();
await connection.close();
