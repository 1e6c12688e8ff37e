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
 * fails is logged and tried again at the next tick, and the page is told: a `stale` event says what it shows may be
 * out of date, and a `current` event that it is not any more, when the next read finds nothing new (else the new data
 * says so). A caller who leaves while a read is under way ends the loop without writing to the closed stream. A HEAD
 * gets the stream's headers, and nothing is read.
 */
export function streamChanges(c: Context, options: StreamChangesOptions): Response {
  if (isHeadRequest(c)) return eventStreamHead(c);
  c.header('Cache-Control', 'no-store');
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    const left = new AbortController();
    stream.onAbort(() => left.abort());
    let stale = false;
    while (!left.signal.aborted) {
      stale = await writeNext(stream, left.signal, options, stale);
      await sleep(options.intervalMs, undefined, { signal: left.signal }).catch(() => undefined);
    }
  });
}

/** Writes the next read's news, or that it failed; returns whether the page now shows what may be out of date. */
async function writeNext(
  stream: SSEStreamingApi,
  left: AbortSignal,
  options: StreamChangesOptions,
  stale: boolean,
): Promise<boolean> {
  try {
    const data = await options.read();
    if (left.aborted) return stale;
    if (data !== undefined) await stream.writeSSE({ event: options.eventName, data });
    else if (stale) await stream.writeSSE({ event: 'current', data: '' });
    else await stream.write(': idle\n\n');
    return false;
  } catch (error) {
    if (left.aborted) return stale;
    options.logger.error(`Relay-E: reading the ${options.eventName} stream failed; trying again`, error);
    // A comment would not reach the page: browsers pass only events on, and the page would go on showing the list.
    await stream.writeSSE({ event: 'stale', data: '' });
    return true;
  }
}
