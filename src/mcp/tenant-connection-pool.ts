import { createHash } from 'node:crypto';
import type { Logger } from '../tool/tool-context.js';
import { McpConnection } from './mcp-connection.js';
import type { ResolvedSettings } from './mcp-connection.js';

/**
 * How many tenants' connections a pool keeps open, for how long an unused one stays, and whom a connection tells that
 * its server restarted.
 */
export interface TenantConnectionPoolOptions {
  /** Connections open at once; beyond it the least recently used idle one is closed. */
  maxConnections: number;
  /** An idle connection is closed after this long without a call. */
  idleMs: number;
  /** Called when a connection finds its HTTP session gone (the server restarted): see McpConnectionOptions. */
  onSessionLost?: () => void;
}

interface PooledConnection {
  tenantId: string;
  /** A hash of the resolved settings, so a rotated secret is told apart without holding the secret in a key. */
  fingerprint: string;
  connection: McpConnection;
  /** Calls running on it: a connection is only ever closed with none. */
  active: number;
  idleTimer?: NodeJS.Timeout;
}

/**
 * Connections of one MCP server for tenants whose settings hold their own secrets, keyed by tenant so one tenant's
 * credentials never serve another. Bounded: the least recently used idle connection beyond `maxConnections` is
 * closed, and so is any idle for `idleMs`; a tenant that comes back gets a new one. A connection with a call
 * running is never closed under it, so a burst of busy tenants may briefly exceed the bound.
 */
export class TenantConnectionPool {
  /** In order of use, least recent first (a Map keeps insertion order; a use moves the entry to the end). */
  readonly #pooled = new Map<string, PooledConnection>();
  /** Connections replaced by a rotated secret, closed once their calls end. */
  readonly #retired = new Set<PooledConnection>();
  #closed = false;

  constructor(
    readonly server: string,
    readonly logger: Logger,
    readonly options: TenantConnectionPoolOptions,
  ) {}

  /** Runs `call` on the tenant's connection (opened when it has none, or when its settings changed). */
  async use<T>(tenantId: string, settings: ResolvedSettings, call: (connection: McpConnection) => Promise<T>) {
    const pooled = this.#acquire(tenantId, settings);
    try {
      return await call(pooled.connection);
    } finally {
      this.#release(pooled);
    }
  }

  async close(): Promise<void> {
    this.#closed = true;
    const all = [...this.#pooled.values(), ...this.#retired];
    this.#pooled.clear();
    this.#retired.clear();
    await Promise.all(all.map((pooled) => this.#closeConnection(pooled)));
  }

  #acquire(tenantId: string, settings: ResolvedSettings): PooledConnection {
    const fingerprint = createHash('sha256').update(JSON.stringify(settings.transport)).digest('hex');
    let pooled = this.#pooled.get(tenantId);
    this.#pooled.delete(tenantId);
    if (pooled && pooled.fingerprint !== fingerprint) {
      this.#retire(pooled);
      pooled = undefined;
    }
    pooled ??= {
      tenantId,
      fingerprint,
      // A rotated secret gives new settings and so a new connection: these stay fixed for this one.
      connection: new McpConnection({
        server: this.server,
        tenantId,
        settings: () => Promise.resolve(settings),
        logger: this.logger,
        ...(this.options.onSessionLost ? { onSessionLost: this.options.onSessionLost } : {}),
      }),
      active: 0,
    };
    clearTimeout(pooled.idleTimer);
    pooled.active += 1;
    this.#pooled.set(tenantId, pooled);
    this.#evictBeyondLimit();
    return pooled;
  }

  #release(pooled: PooledConnection): void {
    pooled.active -= 1;
    if (pooled.active > 0) return;
    if (this.#retired.has(pooled)) {
      this.#retired.delete(pooled);
      void this.#closeConnection(pooled);
      return;
    }
    if (this.#closed) return;
    pooled.idleTimer = setTimeout(() => this.#evict(pooled, 'idle'), this.options.idleMs);
    pooled.idleTimer.unref();
    this.#evictBeyondLimit();
  }

  #retire(pooled: PooledConnection): void {
    if (pooled.active === 0) void this.#closeConnection(pooled);
    else this.#retired.add(pooled);
  }

  #evictBeyondLimit(): void {
    for (const pooled of this.#pooled.values()) {
      if (this.#pooled.size <= this.options.maxConnections) return;
      if (pooled.active === 0) this.#evict(pooled, 'least recently used');
    }
  }

  #evict(pooled: PooledConnection, why: string): void {
    if (this.#pooled.get(pooled.tenantId) !== pooled || pooled.active > 0) return;
    this.#pooled.delete(pooled.tenantId);
    this.logger.debug('Closed a tenant’s MCP connection', { server: this.server, tenantId: pooled.tenantId, why });
    void this.#closeConnection(pooled);
  }

  async #closeConnection(pooled: PooledConnection): Promise<void> {
    clearTimeout(pooled.idleTimer);
    await pooled.connection.close().catch((error: unknown) =>
      this.logger.warn('Could not close an MCP connection', {
        server: this.server,
        tenantId: pooled.tenantId,
        error,
      }),
    );
  }
}
