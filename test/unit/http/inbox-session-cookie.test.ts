import { describe, expect, it } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';
import { createInbox } from '../../../src/http/inbox/create-inbox.js';
import { RunEventHub } from '../../../src/http/run-event-hub.js';

/** Which session a request is read under needs no run: a client that never connects is enough. */
const client = useUnconnectedClient();
const server = 'http://inbox.example.com';

function inbox() {
  const followers = new RunEventHub(client(), 250);
  const apiKeys = new Map([
    ['key-alice-0123456789', { tenantId: 'a', name: 'alice' }],
    ['key-mallory-0123456789', { tenantId: 'b', name: 'mallory' }],
  ]);
  return createInbox({ client: client(), apiKeys, followers });
}

type Inbox = ReturnType<typeof inbox>;

async function sessionCookie(app: Inbox, apiKey: string): Promise<string> {
  const signedIn = await app.request(`${server}/inbox/session`, {
    method: 'POST',
    headers: { origin: server, 'content-type': 'application/x-www-form-urlencoded' },
    body: `apiKey=${apiKey}`,
  });
  return (signedIn.headers.get('set-cookie') ?? '').split(';')[0]!;
}

/** The name the front page says the request is signed in as, or undefined on the sign-in form. */
async function signedInAs(app: Inbox, cookie: string): Promise<string | undefined> {
  const page = await (await app.request(`${server}/`, { headers: { cookie } })).text();
  return /<meta name="relay-approver" content="([^"]+)"/.exec(page)?.[1];
}

describe('the inbox session cookie', () => {
  it('treats a request carrying two session cookies as signed out: one of them was planted', async () => {
    const app = inbox();
    const own = await sessionCookie(app, 'key-alice-0123456789');
    // Planted from a sibling subdomain with a longer Path, the browser sends it first.
    const planted = await sessionCookie(app, 'key-mallory-0123456789');
    expect(await signedInAs(app, own)).toBe('alice');
    expect(await signedInAs(app, `${planted}; ${own}`)).toBeUndefined();
    const runPage = { headers: { cookie: `${planted}; ${own}`, accept: 'text/html' } };
    const refused = await app.request(`${server}/inbox/runs/r1`, runPage);
    expect(refused.status).toBe(303);
    expect(refused.headers.get('location')).toBe('/?next=%2Finbox%2Fruns%2Fr1');
    const events = await app.request(`${server}/inbox/approvals/stream`, { headers: { cookie: `${planted}; ${own}` } });
    expect(events.status).toBe(401);
  });
});
