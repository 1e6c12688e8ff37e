import { Hono } from 'hono';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { errorMessage } from '../../tool/error-message.js';
import { HttpError } from '../http-error.js';
import type { InboxEnv } from './inbox-env.js';
import { inboxPage, signInPage } from './inbox-pages.js';
import type { InboxSessions } from './inbox-sessions.js';

const sessionCookie = 'relay_e_inbox';
const csrfHeader = 'x-relay-csrf';
/** Methods that change nothing: they need a session, not the page's CSRF token. */
const safeMethods = new Set(['GET', 'HEAD']);

/** The front page (the inbox, or the sign-in form without a session), signing in and signing out. */
export function inboxSessionRoutes(sessions: InboxSessions): Hono<InboxEnv> {
  const app = new Hono<InboxEnv>();

  app.get('/', (c) => {
    const session = sessions.get(getCookie(c, sessionCookie));
    return c.html(session ? inboxPage(session) : signInPage());
  });

  app.post('/inbox/session', async (c) => {
    refuseCrossOrigin(c.req.header('origin'), c.req.url);
    const form = await readForm(c);
    const signedIn = typeof form['apiKey'] === 'string' ? sessions.create(form['apiKey'].trim()) : undefined;
    if (!signedIn) return c.html(signInPage('That API key is not valid.'), 401);
    setCookie(c, sessionCookie, signedIn.cookie, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      secure: new URL(c.req.url).protocol === 'https:',
      maxAge: sessions.lifetimeSeconds,
    });
    return c.redirect('/', 303);
  });

  // A session is sealed, not stored (see InboxSessions): signing out deletes the browser's cookie.
  app.post('/inbox/session/end', (c) => {
    refuseCrossOrigin(c.req.header('origin'), c.req.url);
    deleteCookie(c, sessionCookie, { path: '/' });
    return c.redirect('/', 303);
  });

  return app;
}

/**
 * Lets through only requests with a session, and changes only with the page's CSRF token from the same origin; a
 * page asked for without a session goes to the sign-in form, anything else is refused.
 */
export function requireSession(sessions: InboxSessions) {
  return createMiddleware<InboxEnv>(async (c, next) => {
    const session = sessions.get(getCookie(c, sessionCookie));
    if (!session) {
      if (safeMethods.has(c.req.method) && c.req.header('accept')?.includes('text/html')) return c.redirect('/', 303);
      throw new HttpError(401, 'unauthorized', 'Sign in to the inbox first');
    }
    if (!safeMethods.has(c.req.method)) {
      refuseCrossOrigin(c.req.header('origin'), c.req.url);
      if (c.req.header(csrfHeader) !== session.csrfToken) {
        throw new HttpError(403, 'forbidden', `Missing or wrong ${csrfHeader} header`);
      }
    }
    c.set('session', session);
    await next();
    return undefined;
  });
}

/** The sign-in form; one that does not parse (a multipart body without its boundary, say) is the sender's mistake. */
async function readForm(c: Context<InboxEnv>): Promise<Record<string, unknown>> {
  try {
    return await c.req.parseBody();
  } catch (error) {
    throw new HttpError(400, 'invalid_input', `The sign-in form could not be read: ${errorMessage(error)}`);
  }
}

/** Refuses a change whose Origin names another site (the cookie is SameSite=Strict too; this covers sign-in). */
function refuseCrossOrigin(origin: string | undefined, requestUrl: string): void {
  if (origin !== undefined && origin !== new URL(requestUrl).origin) {
    throw new HttpError(403, 'forbidden', 'Cross-origin requests are refused');
  }
}
