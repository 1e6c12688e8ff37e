import { Hono } from 'hono';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { errorMessage } from '../../shared/error-message.js';
import { HttpError } from '../http-error.js';
import type { InboxEnv } from './inbox-env.js';
import { inboxPage, signInPage } from './inbox-pages.js';
import type { InboxSessions } from './inbox-sessions.js';

const sessionCookie = 'relay_e_inbox';
/**
 * The name over https: browsers accept a `__Host-` cookie only from this very host (Secure, Path=/, no Domain), so
 * another host of the parent domain cannot plant one. Plain http (a local inbox) cannot have it.
 */
const hostOnlySessionCookie = `__Host-${sessionCookie}`;

/** The session cookie's name at the inbox's origin. */
function sessionCookieAt(origin: string): string {
  return origin.startsWith('https:') ? hostOnlySessionCookie : sessionCookie;
}
const csrfHeader = 'x-relay-csrf';
/** Methods that change nothing: they need a session, not the page's CSRF token. */
const safeMethods = new Set(['GET', 'HEAD']);

/**
 * The front page (the inbox, or the sign-in form without a session), signing in and signing out. `publicOrigin`, when
 * set, is the origin people open the inbox at (see CreateInboxOptions.publicUrl); else each request's own.
 */
export function inboxSessionRoutes(sessions: InboxSessions, publicOrigin?: string): Hono<InboxEnv> {
  const app = new Hono<InboxEnv>();

  app.get('/', (c) => {
    const session = sessions.get(readSessionCookie(c, publicOrigin));
    const next = safeReturnPath(c.req.query('next'));
    if (session && next !== undefined) return c.redirect(next, 303);
    return c.html(session ? inboxPage(session) : signInPage({ next }));
  });

  app.post('/inbox/session', async (c) => {
    const origin = inboxOriginOf(c, publicOrigin);
    refuseCrossOrigin(c, origin);
    const form = await readForm(c);
    const next = safeReturnPath(form['next']);
    const signedIn = typeof form['apiKey'] === 'string' ? sessions.create(form['apiKey'].trim()) : undefined;
    if (!signedIn) return c.html(signInPage({ error: 'That API key is not valid.', next }), 401);
    setCookie(c, sessionCookieAt(origin), signedIn.cookie, {
      httpOnly: true,
      sameSite: 'Strict',
      path: '/',
      // Behind a proxy that ends TLS the request is plain HTTP: the inbox's public origin says whether the page is not.
      secure: origin.startsWith('https:'),
      maxAge: sessions.lifetimeSeconds,
    });
    return c.redirect(next ?? '/', 303);
  });

  // A session is sealed, not stored (see InboxSessions): signing out deletes the browser's cookie.
  app.post('/inbox/session/end', (c) => {
    const origin = inboxOriginOf(c, publicOrigin);
    refuseCrossOrigin(c, origin);
    deleteCookie(c, sessionCookieAt(origin), { path: '/', secure: origin.startsWith('https:') });
    return c.redirect('/', 303);
  });

  return app;
}

/**
 * Lets through only requests with a session, and changes only with the page's CSRF token from the inbox's origin; a
 * page asked for without a session goes to the sign-in form, anything else is refused.
 */
export function requireSession(sessions: InboxSessions, publicOrigin?: string) {
  return createMiddleware<InboxEnv>(async (c, next) => {
    const session = sessions.get(readSessionCookie(c, publicOrigin));
    if (!session) {
      if (safeMethods.has(c.req.method) && c.req.header('accept')?.includes('text/html')) {
        // Back to the page asked for once signed in: an approval notice links straight to its run.
        const url = new URL(c.req.url);
        return c.redirect(`/?next=${encodeURIComponent(url.pathname + url.search)}`, 303);
      }
      throw new HttpError(401, 'unauthorized', 'Sign in to the inbox first');
    }
    if (!safeMethods.has(c.req.method)) {
      refuseCrossOrigin(c, inboxOriginOf(c, publicOrigin));
      if (c.req.header(csrfHeader) !== session.csrfToken) {
        throw new HttpError(403, 'forbidden', `Missing or wrong ${csrfHeader} header`);
      }
    }
    c.set('session', session);
    await next();
    return undefined;
  });
}

/** The longest return path the sign-in form carries; a run page's path is far shorter. */
const maxReturnPathLength = 2_048;

/**
 * The inbox page to go back to after signing in, when `next` is a path on this very origin: `/inbox/runs/…`, never
 * `https://elsewhere`, `//elsewhere` or `/\elsewhere` (which browsers take for another host), so the sign-in form
 * cannot be made to send anyone off the inbox. Anything else is dropped: the inbox's front page follows sign-in.
 */
function safeReturnPath(next: unknown): string | undefined {
  if (typeof next !== 'string' || next.length > maxReturnPathLength) return undefined;
  // Only the inbox's own pages, in printable ASCII (a browser sends the rest encoded) without backslashes, which URL
  // parsers take for slashes.
  if (!inboxRunPath.test(next)) return undefined;
  const base = 'http://inbox.invalid';
  const url = URL.parse(next, base);
  // Checked again as parsed: `..` and `%2e%2e` segments climb out of `/inbox/runs/` (to `//elsewhere`, even).
  return url?.origin === base && inboxRunPath.test(url.pathname) ? url.pathname + url.search : undefined;
}

const inboxRunPath = /^\/inbox\/runs\/[!-[\]-~]*$/;

/**
 * The session cookie, unless the request carries more than one of its name: another host of the parent domain can set
 * one (with a longer Path the browser sends it first), so neither is trusted and the request is signed out.
 */
function readSessionCookie(c: Context, publicOrigin: string | undefined): string | undefined {
  const name = sessionCookieAt(inboxOriginOf(c, publicOrigin));
  const named = (c.req.header('cookie') ?? '').split(';').filter((pair) => pair.split('=')[0]?.trim() === name);
  return named.length === 1 ? getCookie(c, name) : undefined;
}

/** The sign-in form; one that does not parse (a multipart body without its boundary, say) is the sender's mistake. */
async function readForm(c: Context<InboxEnv>): Promise<Record<string, unknown>> {
  try {
    return await c.req.parseBody();
  } catch (error) {
    throw new HttpError(400, 'invalid_input', `The sign-in form could not be read: ${errorMessage(error)}`);
  }
}

/**
 * The origin the browser shows the inbox at: the configured public one, else the request's own (its scheme is the
 * server's, its host the `Host` header). `X-Forwarded-*` headers are never read: anyone can send them.
 */
function inboxOriginOf(c: Context, publicOrigin: string | undefined): string {
  return publicOrigin ?? new URL(c.req.url).origin;
}

/** Refuses a change whose Origin names another site (the cookie is SameSite=Strict too; this covers sign-in). */
function refuseCrossOrigin(c: Context, inboxOrigin: string): void {
  const origin = c.req.header('origin');
  if (origin !== undefined && origin !== inboxOrigin) {
    // Names the origin expected: behind a proxy that ends TLS, an `http:` one here says the inbox's URL is not set.
    throw new HttpError(
      403,
      'forbidden',
      `Cross-origin requests are refused: the inbox takes changes from ${inboxOrigin}`,
    );
  }
}
