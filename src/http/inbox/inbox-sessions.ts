import { randomBytes } from 'node:crypto';
import { callerName, createOneKeyMac } from '../api-keys.js';
import type { ApiKeyMac, ApiKeyTenant, ApiKeyTenants } from '../api-keys.js';

/** A signed-in approver: the tenant their API key speaks for, and the token their page sends with every change. */
export interface InboxSession {
  tenant: ApiKeyTenant;
  /** Sent back in the `x-relay-csrf` header; a cross-site page cannot read it, so it cannot forge a decision. */
  csrfToken: string;
  expiresAt: number;
}

/** The approver a session's decisions are recorded under: its key's name, or its tenant's for an unnamed key. */
export function approverOf(session: InboxSession): string {
  return callerName(session.tenant);
}

export interface InboxSessionsOptions {
  /** How long a sign-in lasts. @default 8 hours */
  lifetimeMs?: number;
  /** @default Date.now */
  now?: () => number;
}

// A cookie is `<version>.<key id>.<expiry>.<nonce>.<mac>`; the version lets a later format refuse this one cleanly
// (`s1` cookies were sealed with every key, `s2` with the key they name).
const cookieVersion = 's2';
const defaultLifetimeMs = 8 * 60 * 60 * 1000;

/** A configured key as sessions know it: the tenant it speaks for and the MAC its sessions are sealed with. */
interface SessionKey {
  tenant: ApiKeyTenant;
  mac: ApiKeyMac;
}

/**
 * Sessions of the web inbox, sealed rather than stored. The cookie names the API key it was issued for by a MAC of it
 * (never the key), says when it expires and is sealed with a secret derived from that key; the CSRF token is derived
 * from the cookie the same way. So every API process that serves the key accepts its sessions (behind a load
 * balancer, across restarts), the key itself is never kept by the page or sent again, and changing or removing one
 * key ends the sessions signed in with it, and only those: adding a key for someone else ends none. Signing out
 * deletes the cookie in the browser; a copy of it stays valid until it expires or its key changes.
 */
export class InboxSessions {
  private readonly keysById: ReadonlyMap<string, SessionKey>;
  private readonly lifetimeMs: number;
  private readonly now: () => number;

  constructor(apiKeys: ApiKeyTenants, options: InboxSessionsOptions = {}) {
    this.keysById = new Map(
      [...apiKeys].map(([key, tenant]) => [keyIdOf(key), { tenant, mac: createOneKeyMac(key, 'inbox session') }]),
    );
    this.lifetimeMs = options.lifetimeMs ?? defaultLifetimeMs;
    this.now = options.now ?? Date.now;
  }

  /** Starts a session for a presented API key: the cookie to set, or undefined when the key is not one of ours. */
  create(apiKey: string): { cookie: string; session: InboxSession } | undefined {
    // A blank form is refused before the lookup, whatever keys were given.
    if (apiKey === '') return undefined;
    const keyId = keyIdOf(apiKey);
    const key = this.keysById.get(keyId);
    if (!key) return undefined;
    const expiresAt = this.now() + this.lifetimeMs;
    const sealed = [cookieVersion, keyId, expiresAt.toString(36), randomBytes(16).toString('base64url')].join('.');
    const cookie = `${sealed}.${key.mac.sign(sealed)}`;
    return { cookie, session: sessionOf(key, sealed, expiresAt) };
  }

  /** The session a cookie holds, when it was sealed with one of these keys and has not expired. */
  get(cookie: string | undefined): InboxSession | undefined {
    const parts = cookie?.split('.') ?? [];
    if (parts.length !== 5 || parts[0] !== cookieVersion) return undefined;
    const [, keyId = '', expiry = '', , mac = ''] = parts;
    const sealed = parts.slice(0, 4).join('.');
    const key = this.keysById.get(keyId);
    if (!key?.mac.verify(sealed, mac)) return undefined;
    const expiresAt = parseInt(expiry, 36);
    if (!(expiresAt > this.now())) return undefined;
    return sessionOf(key, sealed, expiresAt);
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.lifetimeMs / 1000);
  }
}

function sessionOf(key: SessionKey, sealed: string, expiresAt: number): InboxSession {
  return { tenant: key.tenant, csrfToken: key.mac.sign(`csrf\n${sealed}`), expiresAt };
}

/** Names a key in a cookie without revealing it: 24 base64url characters (18 bytes) of a MAC keyed by the key. */
function keyIdOf(apiKey: string): string {
  return createOneKeyMac(apiKey, 'inbox key id').sign('key id').slice(0, 24);
}
