import { createServer } from 'node:http';
import type { IncomingHttpHeaders, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';

/** One request as the provider SDK sent it over the wire. */
export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: unknown;
}

/**
 * A reply as the real API would send it; `hangUp` closes the socket instead, like a dropped connection; `events`
 * streams server-sent events (each `data:` line as given, `delayMs` apart), like a streaming model, and with
 * `hangUpAfter` drops the connection after that many, like a stream cut off mid-answer. Events given as a function
 * are built from the request, for streams whose content depends on what the request asked for.
 */
export type WireReply =
  | { status?: number; headers?: Record<string, string>; body: unknown }
  | { hangUp: true }
  | { events: WireEvents; delayMs?: number; hangUpAfter?: number };

export type WireEvents = string[] | ((request: RecordedRequest) => string[]);

export interface ProviderWireServer {
  /** `http://127.0.0.1:<port>` followed by `basePath`. */
  baseURL: string;
  requests: RecordedRequest[];
  /** Queues replies, answered in order, one per request. */
  reply(...replies: WireReply[]): void;
  close(): Promise<void>;
}

/**
 * A local HTTP server that stands in for a model provider's API: it records each request body and answers
 * with queued replies in the provider's real wire format, so tests exercise the SDK's HTTP path end to end.
 */
export async function startProviderWireServer(basePath = ''): Promise<ProviderWireServer> {
  const requests: RecordedRequest[] = [];
  const queue: WireReply[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const text = Buffer.concat(chunks).toString('utf8');
      const recorded: RecordedRequest = {
        method: request.method ?? '',
        path: request.url ?? '',
        headers: request.headers,
        body: text === '' ? undefined : (JSON.parse(text) as unknown),
      };
      requests.push(recorded);
      const next = queue.shift() ?? { status: 500, body: { error: { message: 'No reply queued on the wire server' } } };
      if ('hangUp' in next) {
        request.socket.destroy();
        return;
      }
      if ('events' in next) {
        const events = typeof next.events === 'function' ? next.events(recorded) : next.events;
        void streamEvents(response, events.slice(0, next.hangUpAfter), next.delayMs ?? 0).then(() => {
          if (next.hangUpAfter === undefined) response.end();
          else request.socket.destroy();
        });
        return;
      }
      response.writeHead(next.status ?? 200, { 'content-type': 'application/json', ...next.headers });
      response.end(JSON.stringify(next.body));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseURL: `http://127.0.0.1:${port}${basePath}`,
    requests,
    reply: (...replies) => queue.push(...replies),
    close: () =>
      new Promise<void>((resolve, reject) => {
        server.closeAllConnections();
        server.close((error) => (error ? reject(error) : resolve()));
      }),
  };
}

async function streamEvents(response: ServerResponse, events: readonly string[], delayMs: number): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const data of events) {
    if (response.destroyed) return;
    response.write(`data: ${data}\n\n`);
    await new Promise((resolve) => setTimeout(resolve, delayMs));
  }
}
