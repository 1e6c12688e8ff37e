import { connect, createServer } from 'node:net';
import type { Socket } from 'node:net';

/** A TCP proxy in front of a server: how a test makes it unreachable to a browser page, or drops its streams. */
export interface TcpProxy {
  url: string;
  /** Drops every connection and refuses new ones, as when the server is down. */
  refuse: () => void;
  /** Takes connections again. */
  accept: () => void;
  /** Drops every connection through it and takes new ones, as a network change or a proxy's idle timeout does. */
  drop: () => void;
  close: () => Promise<void>;
}

/** Starts a proxy to `target` (an http URL) on a free loopback port. */
export async function startTcpProxy(target: string): Promise<TcpProxy> {
  const { hostname, port } = new URL(target);
  const sockets = new Set<Socket>();
  let refusing = false;
  const track = (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    socket.on('error', () => socket.destroy());
  };
  const server = createServer((client) => {
    if (refusing) {
      client.destroy();
      return;
    }
    const upstream = connect(Number(port), hostname);
    track(client);
    track(upstream);
    client.pipe(upstream).pipe(client);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('The proxy has no port');
  const drop = () => {
    for (const socket of sockets) socket.destroy();
  };
  return {
    url: `http://127.0.0.1:${address.port}`,
    refuse: () => {
      refusing = true;
      drop();
    },
    accept: () => {
      refusing = false;
    },
    drop,
    close: async () => {
      drop();
      await new Promise((resolve) => server.close(resolve));
    },
  };
}
