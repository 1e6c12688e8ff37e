import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { SSEStreamingApi } from 'hono/streaming';
import { setTimeout as sleep } from 'node:timers/promises';
import { eventStreamHead, isHeadRequest } from '../event-stream-head.js';

export interface StreamChangesOptions {
  /** How long to wait between two reads. */
  intervalMs: number;
  /** What is new since the last read, or `undefined` when nothing changed. */
  read: () => Promise<string | undefined>;
  /** The name of each message's `event:` line. */
  eventName: string;
  logger: Pick<Console, 'error'>;
}

/**
 * Server-sent events of whatever `options.read` returns that is new, polled until the caller leaves. A read that
 * fails is logged and tried again at the next tick; a caller who leaves while a read is under way ends the loop
 * without writing to the closed stream. A HEAD gets the stream's headers, and nothing is read.
 */
export function streamChanges(c: Context, options: StreamChangesOptions): Response {
  if (isHeadRequest(c)) return eventStreamHead(c);
  c.header('Cache-Control', 'no-store');
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const left = new AbortController();
    stream.onAbort(() => left.abort());
    while (!left.signal.aborted) {
      await writeNext(stream, left.signal, options);
      await sleep(options.intervalMs, undefined, { signal: left.signal }).catch(() => undefined);
    }
  });
}

async function writeNext(stream: SSEStreamingApi, left: AbortSignal, options: StreamChangesOptions): Promise<void> {
  try {
    const data = await options.read();
    if (left.aborted) return;
    if (data === undefined) await stream.write(': idle\n\n');
    else await stream.writeSSE({ event: options.eventName, data });
  } catch (error) {
    if (left.aborted) return;
    options.logger.error(`Relay-E: reading the ${options.eventName} stream failed; trying again`, error);
    await stream.write(': retrying\n\n');
  }
}
