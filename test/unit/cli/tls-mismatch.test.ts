import { createSecureServer, createServer } from 'node:http2';
import type { Http2SecureServer, Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import { afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { toExitCode } from '../../../src/cli/cli-error.js';
import {
  connectRelayClient,
  connectWorkerConnection,
  readTemporalSettings,
} from '../../../src/cli/temporal-settings.js';
import { RelayClient } from '../../../src/client/relay-client.js';
import { startTemporalDevServer, TlsMismatchError } from '../../../src/dev/temporal-dev-server.js';

// A connection whose TLS does not match its server's, both ways: an HTTP/2 server without TLS (as `temporal server
// start-dev` is) reached with TLS on, and an HTTP/2 server with TLS (as Temporal Cloud is) reached without it.

// A self-signed certificate for localhost, only for the TLS server to have one: no client here checks it.
const key = `-----BEGIN PRIVATE KEY-----
MIGHAgEAMBMGByqGSM49AgEGCCqGSM49AwEHBG0wawIBAQQg1WP3HhaFBOkqWt2r
qGYSkWkp8gRseL+hBFhDvxbtFFWhRANCAAQmgB/eGyBl1ynzFjX/eEGREPaysas0
rUWp0o6kFkccnavaq3NKYsFS6Sgemg1ecl6wz5rH8f+41SGUWPy7zRGZ
-----END PRIVATE KEY-----
`;
const cert = `-----BEGIN CERTIFICATE-----
MIIBnDCCAUGgAwIBAgIUbOLmdPFvqii36poDnVzV3ZBrhPswCgYIKoZIzj0EAwIw
FDESMBAGA1UEAwwJbG9jYWxob3N0MCAXDTI2MTIwNjAzNTYyMloYDzIxMjYxMTEy
MDM1NjIyWjAUMRIwEAYDVQQDDAlsb2NhbGhvc3QwWTATBgcqhkjOPQIBBggqhkjO
PQMBBwNCAAQmgB/eGyBl1ynzFjX/eEGREPaysas0rUWp0o6kFkccnavaq3NKYsFS
6Sgemg1ecl6wz5rH8f+41SGUWPy7zRGZo28wbTAdBgNVHQ4EFgQUhlXHy+xrJuKz
asl0NXEN5eMPKW8wHwYDVR0jBBgwFoAUhlXHy+xrJuKzasl0NXEN5eMPKW8wDwYD
VR0TAQH/BAUwAwEB/zAaBgNVHREEEzARgglsb2NhbGhvc3SHBH8AAAEwCgYIKoZI
zj0EAwIDSQAwRgIhALwYtOOOCKVB1WwBCiEwqN93hhe/6Co0rOS94eGbjM8zAiEA
nB0EQTrPy50hJzQ2XJxnOOtPyNGpyJzR3OHsjjiB7lc=
-----END CERTIFICATE-----
`;

const servers: Array<Http2Server | Http2SecureServer> = [];

async function listen(server: Http2Server | Http2SecureServer): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

const withoutTls = () => listen(createServer());
const withTls = () => listen(createSecureServer({ key, cert }));

/** The CLI's settings for `address`, with TLS on (TEMPORAL_TLS=true) or not. */
function settingsFor(address: string, tls: boolean) {
  return readTemporalSettings({ address }, tls ? { TEMPORAL_TLS: 'true' } : {});
}

async function refusal(attempt: Promise<unknown>): Promise<{ exitCode: number; message: string; ms: number }> {
  const started = Date.now();
  return attempt.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => ({ exitCode: toExitCode(error), message: String(error), ms: Date.now() - started }),
  );
}

const tlsOnMessage = (address: string) =>
  `CliError: TLS is on for the connection to ${address}, but the server there does not speak TLS: turn it off with ` +
  "TEMPORAL_TLS=false (TLS is on with TEMPORAL_TLS, an API key, a TLS certificate or the profile's TLS settings).";
const tlsOffMessage = (address: string) =>
  `CliError: The server at ${address} speaks TLS, but the connection to it does not use TLS: turn it on with ` +
  'TEMPORAL_TLS=true (and TEMPORAL_TLS_SERVER_CA_CERT_PATH for a private CA), or pick a profile with TLS settings ' +
  '(--profile).';

beforeAll(() => {
  // No signal handlers of the SDK's in the test process, and no log lines of its failed connections.
  Runtime.install({ logger: new DefaultLogger('ERROR'), shutdownSignals: [] });
});

afterEach(() => {
  vi.restoreAllMocks();
  for (const server of servers.splice(0)) server.close();
});

describe('a worker connecting with TLS settings its server does not share', () => {
  it('says TLS is on and the server does not speak it, naming TEMPORAL_TLS, exit 2', async () => {
    const address = await withoutTls();

    // Before, the SDK's `tonic::transport::Error(… InvalidContentType …)`, exit 1.
    expect(await refusal(connectWorkerConnection(await settingsFor(address, true)))).toMatchObject({
      exitCode: 2,
      message: tlsOnMessage(address),
    });
  });

  it('says the server speaks TLS and the connection does not use it, naming TEMPORAL_TLS, exit 2', async () => {
    const address = await withTls();

    // Before, the SDK's `… transport error … stream closed because of a broken pipe`, exit 1.
    expect(await refusal(connectWorkerConnection(await settingsFor(address, false)))).toMatchObject({
      exitCode: 2,
      message: tlsOffMessage(address),
    });
  });
});

describe('a client whose connection failed on a server with other TLS settings', () => {
  it.each([
    ['on', withoutTls, true, tlsOnMessage],
    ['off', withTls, false, tlsOffMessage],
  ] as const)('says so with TLS %s, after the SDK gives up with no cause', async (_, server, tls, message) => {
    const address = await server();
    // The SDK's client waits out its 10 s connect timeout, then says only this.
    vi.spyOn(RelayClient, 'connect').mockRejectedValue(new Error('Failed to connect before the deadline'));

    // Before, `Failed to connect before the deadline`, exit 5.
    expect(await refusal(connectRelayClient(await settingsFor(address, tls)))).toMatchObject({
      exitCode: 2,
      message: message(address),
    });
  });

  it('keeps the SDK’s error for a server that is not there', async () => {
    const address = await withoutTls();
    servers.splice(0).forEach((server) => server.close());
    const unreachable = new Error('Failed to connect before the deadline');
    vi.spyOn(RelayClient, 'connect').mockRejectedValue(unreachable);

    await expect(connectRelayClient(await settingsFor(address, false))).rejects.toBe(unreachable);
  });
});

describe('startTemporalDevServer reusing a server with other TLS settings', () => {
  it.each([
    ['TLS on for a server without it', withoutTls, true],
    ['no TLS for a server with it', withTls, false],
  ] as const)('fails at once with %s, which waiting does not change', async (_, server, tls) => {
    const address = await server();
    const reuse = startTemporalDevServer({ reuseAddress: address, reuseCredentials: { tls }, startTimeoutMs: 20_000 });
    const refused = await refusal(reuse);

    // Before, every attempt failed as UNAVAILABLE and was retried until the start timeout (dev's: 60 s).
    expect(refused.ms).toBeLessThan(5_000);
    await expect(reuse).rejects.toBeInstanceOf(TlsMismatchError);
    await expect(reuse).rejects.toMatchObject({ address, clientTls: tls });
  });
});
