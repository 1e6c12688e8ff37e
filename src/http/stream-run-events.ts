import type { Context } from 'hono';
import { streamSSE } from 'hono/streaming';
import type { SSEStreamingApi } from 'hono/streaming';
import { logFailure } from './error-handlers.js';
import type { ApiLogger } from './error-handlers.js';
import { toHttpError } from './http-error.js';
import type { HttpError } from './http-error.js';
import { eventStreamHead, isHeadRequest } from './event-stream-head.js';
import type { RunEventHub } from './run-event-hub.js';

/** How often an idle event stream sends a comment line unless the API is told otherwise. */
export const defaultSseHeartbeatIntervalMs = 15_000;

export interface StreamRunEventsOptions {
  /** The process's followers of runs, which this stream joins. */
  followers: RunEventHub;
  runId: string;
  /** The caller's tenant: another tenant's run is not found before the stream opens. */
  tenantId: string;
  /** Only events with a higher sequence number. */
  after: number;
  /** How often a comment line is sent while nothing happens, so proxies keep the connection open. */
  heartbeatIntervalMs: number;
  logger: ApiLogger;
  /**
   * Name each message after its event type (`event:` lines). Unnamed, every event arrives as a plain `message`,
   * which a browser's EventSource takes without a listener per type.
   * @default true
   */
  namedEvents?: boolean;
}

/**
 * Answers with the run's events as server-sent events (`id:` seq, `event:` type, `data:` JSON) until the run
 * ends or the caller disconnects; a HEAD gets the same checks and headers, and no stream. Whether the run answers is
 * told beside its events, without an id: `run_unavailable` with the problem a read would get, then `run_available`.
 */
export async function streamRunEvents(c: Context, options: StreamRunEventsOptions): Promise<Response> {
  const { followers, runId, tenantId } = options;
  if (isHeadRequest(c)) {
    await followers.checkFollower(runId, tenantId);
    return eventStreamHead(c);
  }
  const disconnected = new AbortController();
  // Joins the run's one poller in this process.
  const events = await followers.follow(runId, { tenantId, after: options.after, signal: disconnected.signal });
  c.header('X-Accel-Buffering', 'no');
  return streamSSE(c, async (stream) => {
    stream.onAbort(() => disconnected.abort());
    const heartbeat = setInterval(() => void stream.write(': heartbeat\n\n'), options.heartbeatIntervalMs);
    try {
      // A first line lets the caller see the response start before the run has anything to say.
      await stream.write(': connected\n\n');
      for await (const event of events) {
        const name = options.namedEvents === false ? {} : { event: event.type };
        if (event.type === 'run_unavailable' || event.type === 'run_available') {
          const data = event.type === 'run_available' ? event : problemEvent(event.type, toHttpError(event.error));
          await stream.writeSSE({ ...name, data: JSON.stringify(data) });
          continue;
        }
        // A delta is ephemeral: without an id, Last-Event-ID keeps naming the last durable event.
        const id = event.type === 'model_delta' ? {} : { id: String(event.seq) };
        await stream.writeSSE({ ...id, ...name, data: JSON.stringify(event) });
      }
    } catch (error) {
      if (!disconnected.signal.aborted) {
        const failure = toHttpError(error);
        logFailure(options.logger, `Relay-E: the event stream of ${c.req.path} failed`, error, failure);
        await tellStreamFailed(stream, failure);
      }
    } finally {
      clearInterval(heartbeat);
      disconnected.abort();
    }
  });
}

/**
 * The status line is long gone, so a failure is told as a last `stream_failed` event holding the problem document a
 * request would have got, and `retryAfter` (seconds) when the failure may pass: a stream that just closed would look
 * like a dropped connection. The caller resumes from the last id it received.
 */
async function tellStreamFailed(stream: SSEStreamingApi, failure: HttpError): Promise<void> {
  const data = problemEvent('stream_failed', failure);
  // The caller may be gone too; its leaving is no news.
  await stream.writeSSE({ event: 'stream_failed', data: JSON.stringify(data) }).catch(() => undefined);
}

/** An event that tells a problem: the document a request would have got, and `retryAfter` (seconds) when it may pass. */
function problemEvent(type: 'stream_failed' | 'run_unavailable', failure: HttpError) {
  const retryAfter = failure.headers?.['retry-after'];
  return {
    type,
    problem: failure.toProblem(),
    ...(retryAfter === undefined ? {} : { retryAfter: Number(retryAfter) }),
  };
}
