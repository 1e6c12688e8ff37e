import { longestTimerDelayMs } from '../../shared/timer-limit.js';
import type { InboxSession } from './inbox-sessions.js';

/** The event that ends an inbox stream whose session expired; the page goes back to the sign-in form. */
const signedOutEvent = 'signed-out';

const signedOut = new TextEncoder().encode(`event: ${signedOutEvent}\ndata: \n\n`);

/**
 * An event stream that ends when the session that opened it does: the session is checked once, when the stream
 * opens, so without this a page left open would go on receiving the tenant's data after its sign-in expired. At the
 * session's `expiresAt` the page is sent a `signed-out` event and the stream is closed, and the stream underneath is
 * cancelled (which releases its reads, as a caller who leaves does). The timer is cleared when the stream ends first:
 * the caller left, or the stream underneath ended (a run that ended). A response without a body (HEAD) is returned as
 * it is.
 */
export function endingWithSession(response: Response, session: InboxSession): Response {
  const body = response.body;
  if (!body) return response;
  const reader: ReadableStreamDefaultReader<Uint8Array> = body.getReader();
  let ended = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const end = () => {
    ended = true;
    clearTimeout(timer);
  };
  const stream = new ReadableStream<Uint8Array>({
    start(controller) {
      // Armed again rather than trusted to the millisecond: a session is over only once `expiresAt` has passed.
      const arm = () => {
        const leftMs = session.expiresAt - Date.now();
        if (leftMs > 0) {
          timer = setTimeout(arm, Math.min(leftMs, longestTimerDelayMs));
          return;
        }
        if (ended) return;
        end();
        controller.enqueue(signedOut);
        controller.close();
        reader.cancel().catch(() => undefined);
      };
      arm();
    },
    async pull(controller) {
      try {
        const { done, value } = await reader.read();
        if (ended) return;
        if (done) {
          end();
          controller.close();
        } else {
          controller.enqueue(value);
        }
      } catch (error) {
        if (ended) return;
        end();
        controller.error(error);
      }
    },
    cancel(reason) {
      end();
      return reader.cancel(reason);
    },
  });
  return new Response(stream, { status: response.status, statusText: response.statusText, headers: response.headers });
}
