import type { Context } from 'hono';

/**
 * Whether the request is a HEAD. Hono answers one by running the GET route and dropping its body without cancelling
 * it, so an event stream opened for a HEAD would never learn that nobody reads it: its follower, polls and timers
 * would run forever. An event stream's route answers a HEAD with {@link eventStreamHead} instead.
 */
export function isHeadRequest(c: Context): boolean {
  return c.req.method === 'HEAD';
}

/** The status and headers an event stream's GET answers with, and no stream. */
export function eventStreamHead(c: Context): Response {
  return c.body(null, 200, {
    'content-type': 'text/event-stream',
    'cache-control': 'no-cache',
    'x-accel-buffering': 'no',
  });
}
