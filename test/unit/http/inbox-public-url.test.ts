import { describe, expect, it } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';
import { createApi } from '../../../src/http/create-api.js';
import { createInbox } from '../../../src/http/inbox/create-inbox.js';
import { RunEventHub } from '../../../src/http/run-event-hub.js';

/** Signing in and the checks before a decision read no run: a client that never connects is enough. */
const client = useUnconnectedClient();

// Behind a proxy that ends TLS, the browser is at https://inbox.example.com and the server sees http://….
const server = 'http://inbox.example.com';
const publicOrigin = 'https://inbox.example.com';

function inbox(publicUrl?: string) {
  const followers = new RunEventHub(client(), 250);
  return createInbox({
    client: client(),
    apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]),
    followers,
    publicUrl,
  });
}

type Inbox = ReturnType<typeof inbox>;

function signIn(app: Inbox, origin: string) {
  return app.request(`${server}/inbox/session`, {
    method: 'POST',
    headers: { origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: 'apiKey=key-tenant-a-0123456789',
  });
}

/** A decision with a valid session and CSRF token, from `origin`: past the checks it is refused for its empty body. */
async function decide(app: Inbox, cookie: string, origin: string) {
  const page = await (await app.request(`${server}/`, { headers: { cookie } })).text();
  const csrf = /name="relay-csrf" content="([^"]+)"/.exec(page)?.[1] ?? '';
  expect(csrf).not.toBe('');
  return app.request(`${server}/inbox/runs/r1/check`, {
    method: 'POST',
    headers: { cookie, origin, 'x-relay-csrf': csrf, 'content-type': 'application/json' },
    body: '{}',
  });
}

describe('the inbox behind a proxy that ends TLS', () => {
  it('with its public URL, signs in from that origin with a Secure cookie and refuses every other origin', async () => {
    const app = inbox(`${publicOrigin}/`);
    const signedIn = await signIn(app, publicOrigin);
    expect(signedIn.status).toBe(303);
    const setCookie = signedIn.headers.get('set-cookie') ?? '';
    // Host-only over https: no other host of the parent domain can set a cookie of this name.
    expect(setCookie).toMatch(/^__Host-relay_e_inbox=/);
    expect(setCookie).toMatch(/; Path=\/(;|$)/);
    expect(setCookie).not.toMatch(/Domain=/i);
    expect(setCookie).toMatch(/; Secure(;|$)/);
    const cookie = setCookie.split(';')[0]!;
    expect((await decide(app, cookie, publicOrigin)).status).toBe(422);

    // Another site, and the server's own plain-HTTP origin: neither is where people open this inbox.
    for (const origin of ['https://evil.example', server, 'null']) {
      const refused = await signIn(app, origin);
      expect(refused.status, origin).toBe(403);
      expect(refused.headers.get('set-cookie'), origin).toBeNull();
      expect(((await refused.json()) as { detail: string }).detail, origin).toContain(publicOrigin);
      expect((await decide(app, cookie, origin)).status, origin).toBe(403);
    }
    const signOut = { method: 'POST', headers: { origin: 'https://evil.example' } };
    expect((await app.request(`${server}/inbox/session/end`, signOut)).status).toBe(403);
  });

  it('without it, takes the request’s own origin, and says which when it refuses one', async () => {
    const app = inbox();
    const refused = await signIn(app, publicOrigin);
    expect(refused.status).toBe(403);
    // What an operator reads behind a proxy that ends TLS: the inbox expects plain HTTP, so its URL is not set.
    expect(await refused.json()).toMatchObject({
      detail: `Cross-origin requests are refused: the inbox takes changes from ${server}`,
    });
    const signedIn = await signIn(app, server);
    expect(signedIn.status).toBe(303);
    const setCookie = signedIn.headers.get('set-cookie') ?? '';
    expect(setCookie).toMatch(/^relay_e_inbox=/);
    expect(setCookie).not.toMatch(/Secure/);
  });

  it('refuses a public URL that is not an http or https URL when the inbox is built', () => {
    for (const publicUrl of ['inbox.example.com', 'ftp://inbox.example.com', '']) {
      expect(() => inbox(publicUrl), publicUrl).toThrow(/is not an http or https URL/);
    }
  });

  it('is the API’s inboxUrl, which relay-e serve takes from RELAY_E_INBOX_URL', async () => {
    const api = createApi({
      client: client(),
      apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]),
      inboxUrl: publicOrigin,
    });
    const signedIn = await api.request(`${server}/inbox/session`, {
      method: 'POST',
      headers: { origin: publicOrigin, 'content-type': 'application/x-www-form-urlencoded' },
      body: 'apiKey=key-tenant-a-0123456789',
    });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('set-cookie')).toMatch(/; Secure(;|$)/);
  });
});
