import { randomBytes } from 'node:crypto';
import { createApiKeyMac } from '../api-keys.js';
import type { ApiKeyMac, ApiKeyTenant, ApiKeyTenants } from '../api-keys.js';

/** A signed-in approver: the tenant their API key speaks for, and the token their page sends with every change. */
export interface InboxSession {
  tenant: ApiKeyTenant;
  /** Sent back in the `x-relay-csrf` header; a cross-site page cannot read it, so it cannot forge a decision. */
  csrfToken: string;
  expiresAt: number;
}

export interface InboxSessionsOptions {
  /** How long a sign-in lasts. @default 8 hours */
  lifetimeMs?: number;
  /** @default Date.now */
  now?: () => number;
}

// A cookie is `<version>.<key id>.<expiry>.<nonce>.<mac>`; the version lets a later format refuse this one cleanly.
const cookieVersion = 's1';
const defaultLifetimeMs = 8 * 60 * 60 * 1000;

/**
 * Sessions of the web inbox, sealed rather than stored. The cookie names the API key it was issued for by a MAC of it
 * (never the key), says when it expires and is sealed with a secret derived from every configured key; the CSRF
 * token is derived from the cookie the same way. So every API process that serves the same keys accepts the same
 * sessions (behind a load balancer, across restarts), the key itself is never kept by the page or sent again, and
 * changing the keys (adding, removing or rotating one) ends every session on every process. Signing out deletes the
 * cookie in the browser; a copy of it stays valid until it expires.
 */
export class InboxSessions {
  private readonly mac: ApiKeyMac;
  private readonly tenantsByKeyId: ReadonlyMap<string, ApiKeyTenant>;
  private readonly lifetimeMs: number;
  private readonly now: () => number;

  constructor(apiKeys: ApiKeyTenants, options: InboxSessionsOptions = {}) {
    this.mac = createApiKeyMac(apiKeys, 'inbox session');
    this.tenantsByKeyId = new Map([...apiKeys].map(([key, tenant]) => [this.keyIdOf(key), tenant]));
    this.lifetimeMs = options.lifetimeMs ?? defaultLifetimeMs;
    this.now = options.now ?? Date.now;
  }

  /** Starts a session for a presented API key: the cookie to set, or undefined when the key is not one of ours. */
  create(apiKey: string): { cookie: string; session: InboxSession } | undefined {
    const keyId = this.keyIdOf(apiKey);
    const tenant = this.tenantsByKeyId.get(keyId);
    if (!tenant) return undefined;
    const expiresAt = this.now() + this.lifetimeMs;
    const sealed = [cookieVersion, keyId, expiresAt.toString(36), randomBytes(16).toString('base64url')].join('.');
    const cookie = `${sealed}.${this.mac.sign(sealed)}`;
    return { cookie, session: this.sessionOf(tenant, sealed, expiresAt) };
  }

  /** The session a cookie holds, when it was sealed with these keys and has not expired. */
  get(cookie: string | undefined): InboxSession | undefined {
    const parts = cookie?.split('.') ?? [];
    if (parts.length !== 5 || parts[0] !== cookieVersion) return undefined;
    const [, keyId = '', expiry = '', , mac = ''] = parts;
    const sealed = parts.slice(0, 4).join('.');
    if (!this.mac.verify(sealed, mac)) return undefined;
    const tenant = this.tenantsByKeyId.get(keyId);
    const expiresAt = parseInt(expiry, 36);
    if (!tenant || !(expiresAt > this.now())) return undefined;
    return this.sessionOf(tenant, sealed, expiresAt);
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.lifetimeMs / 1000);
  }

  private sessionOf(tenant: ApiKeyTenant, sealed: string, expiresAt: number): InboxSession {
    return { tenant, csrfToken: this.mac.sign(`csrf\n${sealed}`), expiresAt };
  }

  /** Names a key in a cookie without revealing it, nor a digest anyone without every key could test guesses on. */
  private keyIdOf(apiKey: string): string {
    // 24 base64url characters: the MAC's first 18 bytes.
    return this.mac.sign(`key\n${apiKey}`).slice(0, 24);
  }
}
