import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RelayClient } from '../client/relay-client.js';

export interface StreamRunEventsOptions {
  client: RelayClient;
  runId: string;
  /** Only events with a higher sequence number. */
  after: number;
  pollIntervalMs: number;
  /** How often a comment line is sent while nothing happens, so proxies keep the connection open. */
  heartbeatIntervalMs: number;
  logger: Pick<Console, 'error'>;
  /**
   * Name each message after its event type (`event:` lines). Unnamed, every event arrives as a plain `message`,
   * which a browser's EventSource takes without a listener per type.
   * @default true
   */
  namedEvents?: boolean;
}

/**
 * Answers with the run's events as server-sent events (`id:` seq, `event:` type, `data:` JSON) until the run
 * ends or the caller disconnects; the caller must already be known to own the run.
 */
export function streamRunEvents(c: Context, options: StreamRunEventsOptions): Response {
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const disconnected = new AbortController();
    stream.onAbort(() => disconnected.abort());
    const heartbeat = setInterval(() => void stream.write(': heartbeat\n\n'), options.heartbeatIntervalMs);
    try {
      // A first line lets the caller see the response start before the run has anything to say.
      await stream.write(': connected\n\n');
      const events = options.client.watch(options.runId, {
        after: options.after,
        pollIntervalMs: options.pollIntervalMs,
        signal: disconnected.signal,
      });
      for await (const event of events) {
        // A delta is ephemeral: without an id, Last-Event-ID keeps naming the last durable event.
        const id = event.type === 'model_delta' ? {} : { id: String(event.seq) };
        const name = options.namedEvents === false ? {} : { event: event.type };
        await stream.writeSSE({ ...id, ...name, data: JSON.stringify(event) });
      }
    } catch (error) {
      // The status line is long gone; the caller resumes from the last id it received.
      if (!disconnected.signal.aborted) options.logger.error('Relay-E: event stream failed', error);
    } finally {
      clearInterval(heartbeat);
      disconnected.abort();
    }
  });
}
