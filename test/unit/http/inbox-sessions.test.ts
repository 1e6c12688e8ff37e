import { describe, expect, it } from 'vitest';
import { createOneKeyMac } from '../../../src/http/api-keys.js';
import type { ApiKeyTenant } from '../../../src/http/api-keys.js';
import { InboxSessions } from '../../../src/http/inbox/inbox-sessions.js';

const alice: ApiKeyTenant = { tenantId: 'tenant-a', name: 'alice' };
const bob: ApiKeyTenant = { tenantId: 'tenant-b' };
const keys = new Map([
  ['key-alice-0123456789', alice],
  ['key-bob-0123456789', bob],
]);

function signIn(sessions: InboxSessions, key = 'key-alice-0123456789') {
  const signedIn = sessions.create(key);
  if (!signedIn) throw new Error('expected the key to sign in');
  return signedIn;
}

describe('InboxSessions', () => {
  it('signs in with a configured key and reads the session back from its cookie alone', () => {
    const sessions = new InboxSessions(keys);
    const { cookie, session } = signIn(sessions);
    expect(session.tenant).toEqual(alice);
    expect(sessions.get(cookie)).toEqual(session);
    expect(signIn(sessions, 'key-bob-0123456789').session.tenant).toEqual(bob);
  });

  it('accepts a session in another process that serves the same keys, with the same CSRF token', () => {
    const { cookie, session } = signIn(new InboxSessions(keys));
    const otherProcess = new InboxSessions(new Map([...keys].reverse()));
    expect(otherProcess.get(cookie)).toEqual(session);
  });

  it('refuses an unknown key, and never puts the key in the cookie', () => {
    const sessions = new InboxSessions(keys);
    expect(sessions.create('key-nobody')).toBeUndefined();
    const { cookie } = signIn(sessions);
    expect(cookie).not.toContain('key-alice');
    expect(cookie).not.toContain('tenant-a');
  });

  it('gives each session its own CSRF token', () => {
    const sessions = new InboxSessions(keys);
    expect(signIn(sessions).session.csrfToken).not.toBe(signIn(sessions).session.csrfToken);
  });

  it('ends a session when it expires', () => {
    let now = 1_000_000;
    const sessions = new InboxSessions(keys, { lifetimeMs: 60_000, now: () => now });
    const { cookie, session } = signIn(sessions);
    expect(session.expiresAt).toBe(1_060_000);
    now = 1_059_999;
    expect(sessions.get(cookie)).toBeDefined();
    now = 1_060_000;
    expect(sessions.get(cookie)).toBeUndefined();
  });

  it('ends the sessions of a key that was changed or removed, and only those; adding a key ends none', () => {
    const sessions = new InboxSessions(keys);
    const ofAlice = signIn(sessions).cookie;
    const ofBob = signIn(sessions, 'key-bob-0123456789').cookie;
    const withAnotherKey = new InboxSessions(new Map([...keys, ['key-carol-0123456789', { tenantId: 'tenant-c' }]]));
    expect([withAnotherKey.get(ofAlice)?.tenant, withAnotherKey.get(ofBob)?.tenant]).toEqual([alice, bob]);
    const aliceRotated = new InboxSessions(
      new Map([
        ['key-alice-rotated-0123456789', alice],
        ['key-bob-0123456789', bob],
      ]),
    );
    expect([aliceRotated.get(ofAlice), aliceRotated.get(ofBob)?.tenant]).toEqual([undefined, bob]);
    const withoutBob = new InboxSessions(new Map([...keys].filter(([key]) => key !== 'key-bob-0123456789')));
    expect([withoutBob.get(ofAlice)?.tenant, withoutBob.get(ofBob)]).toEqual([alice, undefined]);
  });

  it('refuses a cookie sealed with another configured key than the one it names', () => {
    const sessions = new InboxSessions(keys);
    const [version, alicesKeyId, expiry, nonce] = signIn(sessions).cookie.split('.') as [
      string,
      string,
      string,
      string,
    ];
    // Bob holds his own key and can read the code: a cookie naming Alice's key, sealed with his, must not be hers.
    const sealed = [version, alicesKeyId, expiry, nonce].join('.');
    const sealedByBob = createOneKeyMac('key-bob-0123456789', 'inbox session').sign(sealed);
    expect(sessions.get(`${sealed}.${sealedByBob}`)).toBeUndefined();
    const sealedByAlice = createOneKeyMac('key-alice-0123456789', 'inbox session').sign(sealed);
    expect(sessions.get(`${sealed}.${sealedByAlice}`)?.tenant).toEqual(alice);
  });

  it('refuses a cookie whose tenant, expiry or seal was changed, and anything malformed', () => {
    let now = 1_000_000;
    const sessions = new InboxSessions(keys, { now: () => now });
    const { cookie } = signIn(sessions);
    const bobsKeyId = signIn(sessions, 'key-bob-0123456789').cookie.split('.')[1] ?? '';
    const [version, keyId, expiry, nonce, mac] = cookie.split('.') as [string, string, string, string, string];
    const forged = [
      [version, bobsKeyId, expiry, nonce, mac],
      [version, keyId, (parseInt(expiry, 36) + 1).toString(36), nonce, mac],
      [version, keyId, expiry, `${nonce}x`, mac],
      [version, keyId, expiry, nonce, `${mac.startsWith('A') ? 'B' : 'A'}${mac.slice(1)}`],
      ['s0', keyId, expiry, nonce, mac],
    ].map((parts) => parts.join('.'));
    for (const cookieValue of [...forged, '', 'garbage', `${cookie}.extra`, cookie.slice(0, -1), undefined]) {
      expect(sessions.get(cookieValue), String(cookieValue)).toBeUndefined();
    }
    now += 1;
    expect(sessions.get(cookie)).toBeDefined();
  });

  it('states its lifetime in seconds for the cookie', () => {
    expect(new InboxSessions(keys).lifetimeSeconds).toBe(8 * 60 * 60);
    expect(new InboxSessions(keys, { lifetimeMs: 90_500 }).lifetimeSeconds).toBe(90);
  });
});
