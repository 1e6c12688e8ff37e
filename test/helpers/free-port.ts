import { randomInt } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';

const lowestPort = 10_000;
const probes = 50;

/**
 * A TCP port on 127.0.0.1 that is free now (the probe that found it has closed again), for a server a test starts
 * later on a fixed port. On Linux it comes from below the ephemeral range, so no outgoing connection of a test
 * running beside it can take it before the server binds it; elsewhere the OS picks one.
 */
export async function freePort(): Promise<number> {
  const ephemeralLow = await lowestEphemeralPort();
  if (ephemeralLow === undefined || ephemeralLow <= lowestPort) return listenOn(0);
  for (let probe = 0; probe < probes; probe++) {
    const port = await listenOn(randomInt(lowestPort, ephemeralLow)).catch(() => undefined);
    if (port !== undefined) return port;
  }
  throw new Error(`no free port between ${lowestPort} and ${ephemeralLow} after ${probes} probes`);
}

async function lowestEphemeralPort(): Promise<number | undefined> {
  const range = await readFile('/proc/sys/net/ipv4/ip_local_port_range', 'utf8').catch(() => undefined);
  const low = Number(range?.trim().split(/\s+/)[0]);
  return Number.isInteger(low) ? low : undefined;
}

/** Listens on `port` (0: any) and closes again; resolves the port that was bound. */
function listenOn(port: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const probe = createServer();
    probe.once('error', reject);
    probe.listen(port, '127.0.0.1', () => {
      const address = probe.address();
      probe.close(() =>
        typeof address === 'object' && address ? resolve(address.port) : reject(new Error('no port')),
      );
    });
  });
}

/** A port on 127.0.0.1 held by a listener until `close()`: for a test of what meets a port that is in use. */
export async function holdPort(): Promise<{ port: number; close(): void }> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return { port, close: () => server.close() };
}
