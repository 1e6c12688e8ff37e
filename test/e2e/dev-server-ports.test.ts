import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { DevServerPortClashError, startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServerOptions } from '../../src/dev/temporal-dev-server.js';
import { holdPort } from '../helpers/free-port.js';

let held: Awaited<ReturnType<typeof holdPort>>;

beforeAll(async () => {
  held = await holdPort();
});

afterAll(() => {
  held.close();
});

/** Starts a dev server that cannot bind, and counts the clashes its output reports (one a start). */
async function failedStart(options: TemporalDevServerOptions): Promise<{ error: unknown; clashes: number }> {
  let clashes = 0;
  const error = await startTemporalDevServer({
    ...options,
    onOutput: (chunk) => (clashes += chunk.match(/address already in use/g)?.length ?? 0),
  }).catch((caught: unknown) => caught);
  return { error, clashes };
}

describe('startTemporalDevServer on a busy port', () => {
  it('starts again on a clash of a port it did not get from its caller, and names the port when every start fails', async () => {
    // The HTTP port comes through extraArgs, so it is not one of the caller's ports the start leaves alone.
    const { error, clashes } = await failedStart({ extraArgs: ['--http-port', String(held.port)] });

    expect(error).toBeInstanceOf(DevServerPortClashError);
    expect((error as DevServerPortClashError).port).toBe(held.port);
    expect(clashes).toBe(3);
  });

  it('gives up at once on a clash of the port its caller chose', async () => {
    const { error, clashes } = await failedStart({ port: held.port });

    expect(error).toBeInstanceOf(DevServerPortClashError);
    expect((error as DevServerPortClashError).port).toBe(held.port);
    expect(clashes).toBe(1);
  });
});

describe('startTemporalDevServer reusing a running server', () => {
  it('checks that server with the credentials it is given, as the worker will connect', async () => {
    const address = inject('temporalAddress');
    await expect(startTemporalDevServer({ reuseAddress: address })).resolves.toMatchObject({ address });

    // The shared dev server speaks plain gRPC: a check over TLS cannot reach it, which shows the setting is used.
    // Before, the check ignored it, and relay-e dev waited out 60 s on a Temporal Cloud address it could reach.
    const overTls = startTemporalDevServer({
      reuseAddress: address,
      reuseCredentials: { tls: true },
      startTimeoutMs: 3_000,
    });
    await expect(overTls).rejects.toThrow(`Temporal server at ${address} did not accept connections`);
  });
});
