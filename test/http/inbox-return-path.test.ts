import { describe, expect, it } from 'vitest';
import { createInbox } from '../../src/http/inbox/create-inbox.js';
import { RunEventHub } from '../../src/http/run-event-hub.js';
import { useUnconnectedClient } from '../helpers/unconnected-client.js';

// What the inbox answers before it asks any run: where a link opened signed out leads, the favicon, a pasted run id.
const client = useUnconnectedClient();
const server = 'http://inbox.example.com';
const runPath = '/inbox/runs/run_0b5e?from=notice';

function inbox() {
  const followers = new RunEventHub(client(), 250);
  return createInbox({
    client: client(),
    apiKeys: new Map([['key-alice-0123456789', { tenantId: 'a', name: 'alice' }]]),
    followers,
  });
}

type Inbox = ReturnType<typeof inbox>;

async function signIn(app: Inbox, fields: Record<string, string>): Promise<Response> {
  return app.request(`${server}/inbox/session`, {
    method: 'POST',
    headers: { origin: server, 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(fields).toString(),
  });
}

describe('the page an approver asked for before signing in', () => {
  it('sends a run link opened signed out to the sign-in form, and back to that run once signed in', async () => {
    const app = inbox();
    const opened = await app.request(`${server}${runPath}`, { headers: { accept: 'text/html' } });
    expect(opened.status).toBe(303);
    const signInAt = opened.headers.get('location') ?? '';
    expect(signInAt).toBe(`/?next=${encodeURIComponent(runPath)}`);
    const form = await (await app.request(`${server}${signInAt}`)).text();
    expect(form).toContain(`<input type="hidden" name="next" value="${runPath}" />`);

    const signedIn = await signIn(app, { apiKey: 'key-alice-0123456789', next: runPath });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe(runPath);
    // A wrong key keeps where to go for the next try.
    const refused = await signIn(app, { apiKey: 'not-a-key', next: runPath });
    expect(refused.status).toBe(401);
    expect(await refused.text()).toContain(`name="next" value="${runPath}"`);
  });

  it.each([
    'https://evil.example/inbox/runs/x',
    '//evil.example/inbox/runs/x',
    '/\\evil.example',
    '/inbox/../x',
    // Found by a security review: the raw path starts well, and the parsed one climbs to another host.
    '/inbox/runs/../..//evil.example/phish',
    '/inbox/runs/%2e%2e/%2e%2e//evil.example/phish',
    '/inbox/runs/../approvals',
  ])('goes to the front page after sign-in, never to %s', async (next) => {
    const app = inbox();
    const signedIn = await signIn(app, { apiKey: 'key-alice-0123456789', next });
    expect(signedIn.status).toBe(303);
    expect(signedIn.headers.get('location')).toBe('/');
    const form = await (await app.request(`${server}/?next=${encodeURIComponent(next)}`)).text();
    expect(form).not.toContain('name="next"');
  });
});

describe('what the inbox answers without asking a run', () => {
  it('answers the browser’s favicon request with an empty 204, not a 404', async () => {
    const favicon = await inbox().request(`${server}/favicon.ico`);
    expect(favicon.status).toBe(204);
    expect(await favicon.text()).toBe('');
  });

  it('opens a run whose id was pasted with spaces around it', async () => {
    const app = inbox();
    const cookie = ((await signIn(app, { apiKey: 'key-alice-0123456789' })).headers.get('set-cookie') ?? '').split(
      ';',
    )[0]!;
    const opened = await app.request(`${server}/inbox/runs?id=${encodeURIComponent('  run_0b5e \t')}`, {
      headers: { cookie },
    });
    expect(opened.status).toBe(303);
    expect(opened.headers.get('location')).toBe('/inbox/runs/run_0b5e');
  });
});
