import { randomBytes } from 'node:crypto';
import type { ApiKeyTenant } from '../api-keys.js';

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
  /** The most sessions kept at once; the oldest is dropped past it. @default 10_000 */
  maxSessions?: number;
  /** @default Date.now */
  now?: () => number;
}

/**
 * Sessions of the web inbox, in memory: the session id (the cookie) maps to a tenant, so the API key itself is
 * never kept by the page or sent again. A restart of the API signs everyone out.
 */
export class InboxSessions {
  private readonly sessions = new Map<string, InboxSession>();
  private readonly lifetimeMs: number;
  private readonly maxSessions: number;
  private readonly now: () => number;

  constructor(options: InboxSessionsOptions = {}) {
    this.lifetimeMs = options.lifetimeMs ?? 8 * 60 * 60 * 1000;
    this.maxSessions = options.maxSessions ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  /** Starts a session for the tenant and returns its id. */
  create(tenant: ApiKeyTenant): { id: string; session: InboxSession } {
    const id = randomBytes(32).toString('base64url');
    const session = {
      tenant,
      csrfToken: randomBytes(32).toString('base64url'),
      expiresAt: this.now() + this.lifetimeMs,
    };
    if (this.sessions.size >= this.maxSessions) {
      const oldest = this.sessions.keys().next().value;
      if (oldest !== undefined) this.sessions.delete(oldest);
    }
    this.sessions.set(id, session);
    return { id, session };
  }

  /** The live session with this id, if any; an expired one is forgotten. */
  get(id: string | undefined): InboxSession | undefined {
    if (id === undefined) return undefined;
    const session = this.sessions.get(id);
    if (session && session.expiresAt <= this.now()) {
      this.sessions.delete(id);
      return undefined;
    }
    return session;
  }

  delete(id: string | undefined): void {
    if (id !== undefined) this.sessions.delete(id);
  }

  get lifetimeSeconds(): number {
    return Math.floor(this.lifetimeMs / 1000);
  }
}
