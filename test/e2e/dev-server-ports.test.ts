import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DevServerPortClashError, startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';

let held: Server;
let heldPort: number;

beforeAll(async () => {
  held = createServer();
  await new Promise<void>((resolve) => held.listen(0, '127.0.0.1', resolve));
  heldPort = (held.address() as AddressInfo).port;
});

afterAll(() => {
  held.close();
});

describe('startTemporalDevServer on a busy port', () => {
  it('starts again on a clash of a port it did not get from its caller, and names the port when every start fails', async () => {
    let clashes = 0;
    // The HTTP port comes through extraArgs, so it is not one of the caller's ports the start leaves alone.
    const error = await startTemporalDevServer({
      extraArgs: ['--http-port', String(heldPort)],
      onOutput: (chunk) => (clashes += chunk.match(/address already in use/g)?.length ?? 0),
    }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(DevServerPortClashError);
    expect((error as DevServerPortClashError).port).toBe(heldPort);
    expect(clashes).toBe(3);
  });

  it('gives up at once on a clash of the port its caller chose', async () => {
    let clashes = 0;
    const error = await startTemporalDevServer({
      port: heldPort,
      onOutput: (chunk) => (clashes += chunk.match(/address already in use/g)?.length ?? 0),
    }).catch((caught: unknown) => caught);

    expect(error).toBeInstanceOf(DevServerPortClashError);
    expect((error as DevServerPortClashError).port).toBe(heldPort);
    expect(clashes).toBe(1);
  });
});
