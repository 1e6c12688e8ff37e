import { readFile } from 'node:fs/promises';
import { Hono } from 'hono';
import type { Context } from 'hono';
import { deleteCookie, getCookie, setCookie } from 'hono/cookie';
import { createMiddleware } from 'hono/factory';
import { z } from 'zod';
import { ToolCallValidator } from '../../../workflows/tool-call-validator.js';
import type { RelayClient } from '../../client/relay-client.js';
import type { ToolCatalogEntry } from '../../shared/tool-catalog.js';
import { checkToolInput } from '../../shared/tool-input.js';
import type { ApiKeyTenants } from '../api-keys.js';
import { HttpError } from '../http-error.js';
import { streamRunEvents } from '../stream-run-events.js';
import { inboxPage, runPage, signInPage } from './inbox-pages.js';
import { InboxSessions } from './inbox-sessions.js';
import type { InboxSession } from './inbox-sessions.js';
import { inboxStyles } from './inbox-styles.js';
import { streamChanges } from './stream-changes.js';

/** The waiting runs the inbox's list reads at most, newest first; it says when more wait. */
const inboxListedRuns = 100;

export interface CreateInboxOptions {
  client: RelayClient;
  /** The keys people sign in with, each mapped to its tenant; they also seal the sessions (see InboxSessions). */
  apiKeys: ApiKeyTenants;
  /** How often the live approvals list asks Temporal for changes. @default 1_000 */
  approvalsPollIntervalMs?: number;
  /** How often a run's event stream asks the run for new events. @default 250 */
  eventsPollIntervalMs?: number;
  /** @default console */
  logger?: Pick<Console, 'error'>;
}

interface InboxEnv {
  Variables: { session: InboxSession };
}

const sessionCookie = 'relay_e_inbox';
const maxCachedCatalogs = 1_000;
const csrfHeader = 'x-relay-csrf';

const decisionSchema = z.strictObject({
  toolCallId: z.string().min(1).max(256),
  reason: z.string().max(2_000).optional(),
  input: z.unknown().optional(),
});

const securityHeaders: Record<string, string> = {
  'content-security-policy':
    "default-src 'none'; script-src 'self'; style-src 'self'; connect-src 'self'; img-src 'self'; " +
    "form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  'x-content-type-options': 'nosniff',
  // Not no-referrer: with it Chromium sends `Origin: null` on same-origin form posts, which the origin check refuses.
  'referrer-policy': 'same-origin',
  'cache-control': 'no-store',
};

const inboxScript = readFile(new URL('./assets/inbox.js', import.meta.url), 'utf8');

/**
 * The web approvals inbox: sign in with an API key (then an HttpOnly, SameSite=Strict session cookie), see the
 * tenant's pending approvals live, read a run's timeline, approve (as proposed or edited), reject, cancel.
 */
export function createInbox(options: CreateInboxOptions): Hono<InboxEnv> {
  const { client } = options;
  const sessions = new InboxSessions(options.apiKeys);
  const app = new Hono<InboxEnv>();

  const setSecurityHeaders = async (c: Context, next: () => Promise<void>) => {
    await next();
    for (const [name, value] of Object.entries(securityHeaders)) c.res.headers.set(name, value);
  };
  app.use('/', setSecurityHeaders);
  app.use('/inbox/*', setSecurityHeaders);

  app.get('/inbox/assets/inbox.js', async (c) =>
    c.body(await inboxScript, 200, { 'content-type': 'text/javascript; charset=utf-8' }),
  );
  app.get('/inbox/assets/inbox.css', (c) => c.body(inboxStyles, 200, { 'content-type': 'text/css; charset=utf-8' }));

  app.get('/', (c) => {
    const session = sessions.get(getCookie(c, sessionCookie));
    return c.html(session ? inboxPage(session) : signInPage());
  });

  app.post('/inbox/session', async (c) => {
    refuseCrossOrigin(c.req.header('origin'), c.req.url);
    const form = await c.req.parseBody();
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

  // Everything below needs a session; changes also need the page's CSRF token.
  const requireSession = createMiddleware<InboxEnv>(async (c, next) => {
    const session = sessions.get(getCookie(c, sessionCookie));
    if (!session) {
      // A page asked for without a session goes to the sign-in form; anything else is refused.
      if (c.req.method === 'GET' && c.req.header('accept')?.includes('text/html')) return c.redirect('/', 303);
      throw new HttpError(401, 'unauthorized', 'Sign in to the inbox first');
    }
    if (c.req.method !== 'GET') {
      refuseCrossOrigin(c.req.header('origin'), c.req.url);
      if (c.req.header(csrfHeader) !== session.csrfToken) {
        throw new HttpError(403, 'forbidden', `Missing or wrong ${csrfHeader} header`);
      }
    }
    c.set('session', session);
    await next();
    return undefined;
  });
  app.use('/inbox/*', requireSession);

  app.get('/inbox/runs', (c) => c.redirect(`/inbox/runs/${encodeURIComponent(c.req.query('id') ?? '')}`, 303));

  app.get('/inbox/runs/:id', (c) => c.html(runPage(c.get('session'), c.req.param('id'))));

  app.get('/inbox/approvals', async (c) => c.json(await listApprovals(c.get('session'))));

  app.get('/inbox/approvals/stream', (c) => {
    const session = c.get('session');
    let last = '';
    return streamChanges(c, {
      intervalMs: options.approvalsPollIntervalMs ?? 1_000,
      eventName: 'approvals',
      logger: options.logger ?? console,
      read: async () => {
        const approvals = JSON.stringify(await listApprovals(session));
        if (approvals === last) return undefined;
        last = approvals;
        return approvals;
      },
    });
  });

  app.get('/inbox/runs/:id/state', async (c) => {
    const runId = c.req.param('id');
    const tenantId = c.get('session').tenant.tenantId;
    const snapshot = await client.getRun(runId, { tenantId });
    const pendingTools = new Set(snapshot.pendingApprovals.map((approval) => approval.toolName));
    const catalog = pendingTools.size > 0 ? await catalogOf(runId, tenantId) : [];
    return c.json({ snapshot, tools: catalog.filter((tool) => pendingTools.has(tool.name)) });
  });

  app.get('/inbox/runs/:id/events', async (c) => {
    const runId = c.req.param('id');
    await client.getRun(runId, { tenantId: c.get('session').tenant.tenantId });
    const lastEventId = c.req.header('last-event-id');
    const disconnected = new AbortController();
    return streamRunEvents(c, {
      events: client.watch(runId, {
        after: lastEventId !== undefined && /^\d+$/.test(lastEventId) ? Number(lastEventId) : 0,
        pollIntervalMs: options.eventsPollIntervalMs ?? 250,
        signal: disconnected.signal,
      }),
      disconnected,
      heartbeatIntervalMs: 15_000,
      logger: options.logger ?? console,
      namedEvents: false,
    });
  });

  app.post('/inbox/runs/:id/check', async (c) => {
    const runId = c.req.param('id');
    const { toolCallId, input } = await readDecision(c);
    const tenantId = c.get('session').tenant.tenantId;
    const pending = (await client.getRun(runId, { tenantId })).pendingApprovals.find(
      (approval) => approval.toolCallId === toolCallId,
    );
    if (!pending)
      throw new HttpError(409, 'approval_not_pending', `Tool call '${toolCallId}' is not awaiting approval`);
    const catalog = await catalogOf(runId, tenantId);
    // Without the tool's schema here, the run's own check of the decision is the only one: nothing to show yet.
    if (!catalog.some((tool) => tool.name === pending.toolName)) return c.json({ valid: true, issues: [] });
    const check = new ToolCallValidator(catalog).check(pending.toolName, input);
    return c.json(check.valid ? { valid: true, issues: [] } : { valid: false, issues: check.issues });
  });

  app.post('/inbox/runs/:id/approve', async (c) => {
    const { toolCallId, reason, input } = await readDecision(c);
    const session = c.get('session');
    const outcome = await client.approve(c.req.param('id'), toolCallId, {
      ...decidedBy(session),
      ...(reason ? { reason } : {}),
      ...(input !== undefined ? { input } : {}),
    });
    return c.json(outcome);
  });

  app.post('/inbox/runs/:id/reject', async (c) => {
    const { toolCallId, reason } = await readDecision(c);
    const outcome = await client.reject(c.req.param('id'), toolCallId, {
      ...decidedBy(c.get('session')),
      ...(reason ? { reason } : {}),
    });
    return c.json(outcome);
  });

  app.post('/inbox/runs/:id/cancel', async (c) => {
    await client.cancel(c.req.param('id'), { tenantId: c.get('session').tenant.tenantId });
    return c.json({ runId: c.req.param('id'), status: 'cancelling' }, 202);
  });

  // A run keeps the catalog it snapshotted, so each is read from history once (the live list asks every second).
  const catalogs = new Map<string, ToolCatalogEntry[]>();
  async function catalogOf(runId: string, tenantId: string): Promise<ToolCatalogEntry[]> {
    const key = `${tenantId}/${runId}`;
    const known = catalogs.get(key);
    if (known) return known;
    const catalog = await client.toolCatalog(runId, { tenantId });
    if (catalog.length === 0) return catalog;
    if (catalogs.size >= maxCachedCatalogs) catalogs.delete(catalogs.keys().next().value ?? '');
    catalogs.set(key, catalog);
    return catalog;
  }

  /**
   * The tenant's pending approvals, each with the JSON Schema of its tool for the editor, the waiting runs that did
   * not answer in time, and whether more runs wait than the list reads.
   */
  async function listApprovals(session: InboxSession) {
    const tenantId = session.tenant.tenantId;
    const limit = inboxListedRuns;
    const { approvals, unanswered, hasMore } = await client.listPendingApprovals({ tenantId, limit });
    const withSchemas = await Promise.all(
      approvals.map(async (approval) => {
        const tool = (await catalogOf(approval.runId, tenantId)).find((entry) => entry.name === approval.toolName);
        return { ...approval, ...(tool ? { inputSchema: tool.inputSchema } : {}) };
      }),
    );
    return { approvals: withSchemas, unanswered, hasMore, limit };
  }

  return app;
}

/** Refuses a change whose Origin names another site (the cookie is SameSite=Strict too; this covers sign-in). */
function refuseCrossOrigin(origin: string | undefined, requestUrl: string): void {
  if (origin !== undefined && origin !== new URL(requestUrl).origin) {
    throw new HttpError(403, 'forbidden', 'Cross-origin requests are refused');
  }
}

async function readDecision(c: Context<InboxEnv>): Promise<z.infer<typeof decisionSchema>> {
  const check = checkToolInput(decisionSchema, await c.req.json().catch(() => undefined));
  if (!check.success) throw new HttpError(422, 'invalid_input', check.message, { issues: check.issues });
  return check.data;
}

function decidedBy(session: InboxSession): { tenantId: string; approver: string } {
  return { tenantId: session.tenant.tenantId, approver: session.tenant.name ?? `tenant:${session.tenant.tenantId}` };
}
