import { createServer as createHttpServer } from 'node:http';
import type { Server } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { Http2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import {
  NotTemporalServerError,
  startTemporalDevServer,
  TemporalDevServerError,
} from '../../../src/dev/temporal-dev-server.js';

const servers: Array<Server | Http2Server> = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.close();
});

async function listen<T extends Server | Http2Server>(server: T): Promise<string> {
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** A gRPC server in miniature: every call ends with this status, as a Temporal server refusing it would. */
function grpcAnswering(status: number, message: string): Promise<string> {
  const server = createHttp2Server();
  server.on('stream', (stream) => {
    stream.on('data', () => {});
    stream.respond(
      { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': String(status), 'grpc-message': message },
      { endStream: true },
    );
  });
  return listen(server);
}

/** Reuses the server at `address` with a long deadline, and says how it failed and how long that took. */
async function reuse(address: string, namespace = 'default'): Promise<{ error: unknown; ms: number }> {
  const started = Date.now();
  const error = await startTemporalDevServer({ reuseAddress: address, namespace, startTimeoutMs: 20_000 }).then(
    () => undefined,
    (caught: unknown) => caught,
  );
  return { error, ms: Date.now() - started };
}

describe('startTemporalDevServer reusing whatever answers at an address', () => {
  it('fails at once, as not a Temporal server, when a web server holds the port', async () => {
    const address = await listen(createHttpServer((_, response) => response.end('hello')));
    const { error, ms } = await reuse(address);

    // Before, every failure was retried until the 60 s start timeout.
    expect(error).toBeInstanceOf(NotTemporalServerError);
    expect((error as Error).message).toMatch(/not as a Temporal server .*Protocol error/);
    expect(ms).toBeLessThan(5_000);
  });

  it('fails at once, as not a Temporal server, on a gRPC server without Temporal service', async () => {
    const { error, ms } = await reuse(await grpcAnswering(12, 'unknown service'));

    expect(error).toBeInstanceOf(NotTemporalServerError);
    expect((error as Error).message).toContain('UNIMPLEMENTED');
    expect(ms).toBeLessThan(5_000);
  });

  it.each([
    [5, 'NOT_FOUND', 'Namespace shop is not found.'],
    [16, 'UNAUTHENTICATED', 'invalid API key'],
    [7, 'PERMISSION_DENIED', 'Request unauthorized.'],
  ])('fails at once with the cause on status %i (%s), which waiting does not change', async (status, name, text) => {
    const { error, ms } = await reuse(await grpcAnswering(status, text), 'shop');

    expect(error).toBeInstanceOf(TemporalDevServerError);
    expect(error).not.toBeInstanceOf(NotTemporalServerError);
    expect((error as Error).message).toContain(`refused namespace "shop"`);
    expect((error as Error).message).toContain(`${name}: ${text}`);
    expect(ms).toBeLessThan(5_000);
  });

  it('keeps waiting on UNAVAILABLE, which a server coming up answers, until the deadline', async () => {
    const address = await grpcAnswering(14, 'starting');
    const failure = startTemporalDevServer({ reuseAddress: address, startTimeoutMs: 1_500 });

    await expect(failure).rejects.toThrow(`Temporal server at ${address} did not accept connections`);
    await expect(failure).rejects.toThrow('UNAVAILABLE: starting');
  });

  it("names the server's last answer, not the deadline that cut short the attempt after it", async () => {
    // The first call is answered UNAVAILABLE; the next hangs until the overall deadline ends it.
    let answered = 0;
    const server = createHttp2Server();
    server.on('stream', (stream) => {
      stream.on('data', () => {});
      if ((answered += 1) > 1) return;
      stream.respond(
        { ':status': 200, 'content-type': 'application/grpc', 'grpc-status': '14', 'grpc-message': 'starting' },
        { endStream: true },
      );
    });
    const address = await listen(server);
    const failure = startTemporalDevServer({ reuseAddress: address, startTimeoutMs: 1_500 });

    await expect(failure).rejects.toThrow(`Temporal server at ${address} did not accept connections`);
    await expect(failure).rejects.toThrow('UNAVAILABLE: starting');
    expect(answered).toBeGreaterThan(1);
  });

  it('stops waiting when its signal is aborted, with the signal reason', async () => {
    const address = await grpcAnswering(14, 'starting');
    const abort = new AbortController();
    const reason = new Error('Ctrl-C');
    setTimeout(() => abort.abort(reason), 300);

    await expect(startTemporalDevServer({ reuseAddress: address, signal: abort.signal })).rejects.toBe(reason);
  });
});
