import { serve } from '@hono/node-server';
import type { AddressInfo } from 'node:net';
import { createApi } from './create-api.js';
import type { CreateApiOptions } from './create-api.js';

export interface StartApiServerOptions extends CreateApiOptions {
  /** The port to listen on; 0 picks a free one. @default 0 */
  port?: number;
  /** The interface to listen on; loopback unless the API is meant to be reached from elsewhere. @default '127.0.0.1' */
  host?: string;
}

/** A listening API server. */
export interface ApiServer {
  /** `http://host:port`, with the port actually bound. */
  url: string;
  /** Stops accepting connections, ends open ones (event streams included) and resolves once closed. */
  close(): Promise<void>;
}

/** Serves `createApi` over HTTP with Node's server and resolves once it listens. */
export async function startApiServer(options: StartApiServerOptions): Promise<ApiServer> {
  const { port = 0, host = '127.0.0.1', ...apiOptions } = options;
  return startHttpServer(createApi(apiOptions), { port, host });
}

/** Serves any fetch-style app (the API, the codec server) with Node's server and resolves once it listens. */
export async function startHttpServer(
  app: { fetch: (request: Request) => Response | Promise<Response> },
  { port, host: hostname }: { port: number; host: string },
): Promise<ApiServer> {
  const { server, address } = await new Promise<{ server: ReturnType<typeof serve>; address: AddressInfo }>(
    (resolve, reject) => {
      const listening = serve({ fetch: app.fetch, port, hostname }, (info) =>
        resolve({ server: listening, address: info }),
      );
      listening.once('error', reject);
    },
  );
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  return {
    url: `http://${host}:${address.port}`,
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.close((error) => (error ? reject(error) : resolve()));
        if ('closeAllConnections' in server) server.closeAllConnections();
      }),
  };
}
