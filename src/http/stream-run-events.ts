import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { RunEvent } from '../shared/run-types.js';

export interface StreamRunEventsOptions {
  /** The run's events as they happen; the caller must already be known to own the run. */
  events: AsyncIterable<RunEvent>;
  /** Aborted when the caller disconnects or the stream ends, so whatever feeds `events` can let go. */
  disconnected: AbortController;
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
 * ends or the caller disconnects.
 */
export function streamRunEvents(c: Context, options: StreamRunEventsOptions): Response {
  c.header('X-Accel-Buffering', 'no');
  const { disconnected } = options;
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => disconnected.abort());
    const heartbeat = setInterval(() => void stream.write(': heartbeat\n\n'), options.heartbeatIntervalMs);
    try {
      // A first line lets the caller see the response start before the run has anything to say.
      await stream.write(': connected\n\n');
      for await (const event of options.events) {
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
