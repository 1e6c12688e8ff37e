import pg from 'pg';
import type { Pool, PoolClient } from 'pg';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { RelayError } from '../shared/errors.js';
import { errorMessage } from '../shared/error-message.js';
import { sweepCutoff, toRetentionMs } from './payload-retention.js';
import { assertPayloadRef, createPayloadSealer, openOrRemoveDamaged, payloadNotFound } from './payload-sealer.js';
import type { SealedPayload } from './payload-sealer.js';
import type { PayloadRef, PayloadScope, PayloadStore, UnclosedRun, UnclosedRunsQuery } from './payload-store.js';
import { checkedUnclosedRunsLimit } from './unclosed-runs.js';

/** Where `createPostgresPayloadStore` connects: a connection string, or a pool the caller owns. */
export type PostgresPayloadStoreConnection =
  { connectionString: string; pool?: never } | { pool: Pool; connectionString?: never };

/** Options of `createPostgresPayloadStore`. */
export type PostgresPayloadStoreOptions = PostgresPayloadStoreConnection & {
  /** Keys to encrypt payloads with; they also key the addresses (see `PayloadRef`). */
  encryption?: EncryptionOptions;
  /**
   * How long a payload outlives the last run that used it, in milliseconds.
   * @default defaultPayloadRetentionMs (7 days)
   */
  retentionMs?: number;
  /**
   * The payload table's name; the store also keeps `<name>_runs` and `<name>_uses`. Lower-case letters, digits and _.
   * @default 'relay_payloads'
   */
  tableName?: string;
  /**
   * How long a call waits for a connection of the store's own pool, opening one or for one to come free, before it
   * fails with a {@link PostgresConnectTimeoutError}: without a bound, a database that does not answer (a dropped
   * route, a firewall) would hold every model call until the operating system gave up. A pool you pass in keeps its
   * own setting.
   * @default 10_000
   */
  connectTimeoutMs?: number;
  /**
   * Where the store reports a connection of its own pool that broke while idle (the server restarted, or ended it).
   * A pool you pass in is yours to watch.
   * @default console
   */
  logger?: Pick<Console, 'warn'>;
};

/** The quoted names of the store's tables and indexes. */
interface Tables {
  payloads: string;
  runs: string;
  uses: string;
  runsByCloseIndex: string;
  unclosedRunsIndex: string;
  usesByRunIndex: string;
}

const tableNamePattern = /^[a-z_][a-z0-9_]{0,50}$/;

/**
 * What the store writes as the payload table's comment once its tables are at the shape this version uses: tables that
 * carry it are used as they are, so a user with only the rights to read and write rows can use tables made ahead.
 */
const postgresPayloadSchemaComment = 'Relay-E payload store, schema 2';

/** The privileges the store's user needs on each of its tables. */
const tablePrivileges = ['SELECT', 'INSERT', 'UPDATE', 'DELETE'];

/**
 * A payload store in PostgreSQL, for a cluster: workers on every machine share it and a worker crash loses nothing.
 * It creates its tables when they are missing (or brings them to its shape); tables made ahead with the statements
 * docs/configuration.md gives need no right to create. Rows are keyed by (tenant, address); a payload row remembers when it
 * was last stored, and beside it the store records which runs stored it and when each closed.
 */
export function createPostgresPayloadStore(options: PostgresPayloadStoreOptions): PayloadStore {
  const sealer = createPayloadSealer(options.encryption);
  const retentionMs = toRetentionMs(options.retentionMs);
  const tables = quotedTables(options.tableName ?? 'relay_payloads');
  const ownsPool = options.pool === undefined;
  const connectTimeoutMs = checkedConnectTimeout(options.connectTimeoutMs);
  const pool = options.pool ?? createPool(options.connectionString, connectTimeoutMs, options.logger ?? console);
  // Created at the first call, not at construction, so constructing a store needs no database yet.
  const ready = onceItSucceeds(() => createTables(pool, tables));
  // Checked once: the CLI worker prepares its store before connecting, and `RelayPlugin.create` prepares it again.
  const privilegesChecked = onceItSucceeds(() => assertPrivileges(pool, tables));

  const store: PayloadStore = {
    async put(scope, data) {
      await ready();
      const ref = sealer.address(scope.tenantId, data);
      await inTransaction(pool, (client) =>
        storePayload(client, tables, scope, ref, () => sealer.seal(scope.tenantId, ref, data)),
      );
      return ref;
    },
    async get(scope, ref) {
      assertPayloadRef(ref);
      await ready();
      const sealed = await selectPayload(pool, tables, scope, ref);
      if (!sealed) throw payloadNotFound(scope, ref);
      return openOrRemoveDamaged(
        () => sealer.open(scope.tenantId, ref, sealed),
        () => deletePayload(pool, tables, scope, ref),
      );
    },
    async markRunClosed(scope, closedAt = new Date()) {
      await ready();
      await recordRunClosed(pool, tables, scope, closedAt);
    },
    async sweep(sweepOptions = {}) {
      await ready();
      return sweepExpired(pool, tables, sweepCutoff(sweepOptions, retentionMs));
    },
    async listUnclosedRuns(query) {
      const limit = checkedUnclosedRunsLimit(query);
      await ready();
      return selectUnclosedRuns(pool, tables, limit, query.after);
    },
    async prepare() {
      await ready();
      await privilegesChecked();
    },
    async close() {
      if (ownsPool) await pool.end();
    },
  };
  return ownsPool ? explainingConnectTimeouts(store, connectTimeoutMs) : store;
}

/**
 * No connection of the store's pool within `connectTimeoutMs`: the database did not answer, or every connection of the
 * pool stayed busy. Its `code` is `ETIMEDOUT`, as a connection that timed out in the operating system has.
 */
export class PostgresConnectTimeoutError extends Error {
  override readonly name = 'PostgresConnectTimeoutError';
  readonly code = 'ETIMEDOUT';

  constructor(
    readonly timeoutMs: number,
    options: { cause?: unknown } = {},
  ) {
    super(
      `PostgreSQL gave the payload store no connection within ${timeoutMs} ms (the database did not answer, or every ` +
        `connection of the store's pool stayed busy)`,
      options,
    );
  }
}

function checkedConnectTimeout(value: number | undefined): number {
  if (value === undefined) return 10_000;
  if (!Number.isSafeInteger(value) || value <= 0) {
    throw new RelayError('invalid_input', `connectTimeoutMs must be a positive whole number of ms, not ${value}`);
  }
  return value;
}

/** `store` with pg's words for a connection it waited too long for (the pool's, or one client's) made a typed error. */
function explainingConnectTimeouts(store: PayloadStore, timeoutMs: number): PayloadStore {
  const explained = (error: unknown): never => {
    const timedOut = error instanceof Error && pgConnectTimeoutMessages.has(error.message);
    throw timedOut ? new PostgresConnectTimeoutError(timeoutMs, { cause: error }) : error;
  };
  return {
    put: (scope, data) => store.put(scope, data).catch(explained),
    get: (scope, ref) => store.get(scope, ref).catch(explained),
    markRunClosed: (scope, closedAt) => store.markRunClosed(scope, closedAt).catch(explained),
    sweep: (sweepOptions) => store.sweep(sweepOptions).catch(explained),
    listUnclosedRuns: (query) => store.listUnclosedRuns(query).catch(explained),
    prepare: async () => store.prepare?.().catch(explained),
    close: () => store.close(),
  };
}

/** What pg-pool says when its wait ends, and what a pg client says when its own connect timer does. */
const pgConnectTimeoutMessages = new Set([
  'timeout exceeded when trying to connect',
  'Connection terminated due to connection timeout',
]);

/** `task`, run at the first call and again at a call after it failed; calls after its success share that success. */
function onceItSucceeds(task: () => Promise<void>): () => Promise<void> {
  let done: Promise<void> | undefined;
  return () =>
    (done ??= task().catch((error: unknown) => {
      done = undefined;
      throw error;
    }));
}

async function assertPrivileges(pool: Pool, tables: Tables): Promise<void> {
  const missing = await missingPrivileges(pool, tables);
  if (missing.length > 0) {
    throw new RelayError(
      'invalid_input',
      `The PostgreSQL user lacks ${missing.join(', ')}: the payload store needs ${tablePrivileges.join(', ')} on ` +
        `each of its tables`,
    );
  }
}

/** The privileges the store needs and the connection's user lacks, as `INSERT on "relay_payloads_runs"`. */
async function missingPrivileges(pool: Pool, tables: Tables): Promise<string[]> {
  const { rows } = await pool.query<{ missing: string }>(
    `SELECT privilege || ' on ' || relation AS missing
     FROM unnest($1::text[]) WITH ORDINALITY AS t (relation, position), unnest($2::text[]) AS privilege
     WHERE NOT has_table_privilege(relation, privilege) ORDER BY position`,
    [[tables.payloads, tables.runs, tables.uses], tablePrivileges],
  );
  return rows.map((row) => row.missing);
}

/** The sealed payload of the tenant at `ref`, or undefined when the store holds none. */
/** Deletes one payload (its uses go with it), for a payload found damaged (see openOrRemoveDamaged). */
async function deletePayload(pool: Pool, tables: Tables, scope: PayloadScope, ref: PayloadRef): Promise<void> {
  await pool.query(`DELETE FROM ${tables.payloads} WHERE tenant_id = $1 AND ref = $2`, [scope.tenantId, ref]);
}

async function selectPayload(
  pool: Pool,
  tables: Tables,
  scope: PayloadScope,
  ref: PayloadRef,
): Promise<SealedPayload | undefined> {
  const { rows } = await pool.query<{ key_id: string | null; data: Buffer }>(
    `SELECT key_id, data FROM ${tables.payloads} WHERE tenant_id = $1 AND ref = $2`,
    [scope.tenantId, ref],
  );
  const row = rows[0];
  return row ? { keyId: row.key_id ?? undefined, body: row.data } : undefined;
}

async function recordRunClosed(pool: Pool, tables: Tables, scope: PayloadScope, closedAt: Date): Promise<void> {
  await pool.query(
    `INSERT INTO ${tables.runs} (tenant_id, run_id, closed_at) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id, run_id) DO UPDATE SET closed_at = EXCLUDED.closed_at`,
    [scope.tenantId, scope.runId, closedAt],
  );
}

function createPool(connectionString: string, connectTimeoutMs: number, logger: Pick<Console, 'warn'>): Pool {
  // Without one, pg would connect to its defaults (a local server) instead of the database the caller meant.
  if (typeof connectionString !== 'string' || connectionString.trim() === '') {
    throw new RelayError('invalid_input', 'The PostgreSQL payload store needs a connectionString (or a pool)');
  }
  const pool = new pg.Pool({ connectionString, connectionTimeoutMillis: connectTimeoutMs });
  // The pool drops an idle connection that breaks, and the next query connects again; without a listener its 'error'
  // event would end the process. The operator still hears of it: a database that keeps dropping connections is news.
  pool.on('error', (error) => {
    logger.warn(
      `Relay-E payload store: an idle PostgreSQL connection broke; the next query opens a new one: ${errorMessage(error)}`,
    );
  });
  return pool;
}

function quotedTables(tableName: string): Tables {
  // Identifiers cannot be query parameters: the name is checked, then quoted.
  if (!tableNamePattern.test(tableName)) {
    throw new RelayError('invalid_input', `Payload table name '${tableName}' must be lower-case letters, digits or _`);
  }
  return {
    payloads: `"${tableName}"`,
    runs: `"${tableName}_runs"`,
    uses: `"${tableName}_uses"`,
    runsByCloseIndex: `"${tableName}_runs_by_close"`,
    unclosedRunsIndex: `"${tableName}_runs_unclosed"`,
    usesByRunIndex: `"${tableName}_uses_by_run"`,
  };
}

/**
 * Creates the tables when missing, or brings older ones to the current shape, and marks them with the schema comment;
 * tables that already carry it are left alone, since creating and altering need rights a user of made-ahead tables
 * lacks (`CREATE TABLE IF NOT EXISTS` checks the right to create in the schema even when the table exists).
 */
async function createTables(pool: Pool, tables: Tables): Promise<void> {
  if (await hasCurrentTables(pool, tables)) return;
  await inTransaction(pool, async (client) => {
    // Two workers starting together would race to create the same tables; the lock makes the second wait.
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [tables.payloads]);
    await client.query(`
      CREATE TABLE IF NOT EXISTS ${tables.payloads} (
        tenant_id text NOT NULL,
        ref text NOT NULL,
        key_id text,
        data bytea NOT NULL,
        last_put_at timestamptz NOT NULL,
        PRIMARY KEY (tenant_id, ref)
      );
      CREATE TABLE IF NOT EXISTS ${tables.runs} (
        tenant_id text NOT NULL,
        run_id text NOT NULL,
        first_stored_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now()),
        closed_at timestamptz,
        PRIMARY KEY (tenant_id, run_id)
      );
      -- Tables made before runs recorded when they were first stored get the column: their runs count from now.
      ALTER TABLE ${tables.runs}
        ADD COLUMN IF NOT EXISTS first_stored_at timestamptz NOT NULL DEFAULT date_trunc('milliseconds', now());
      -- A janitor pages through unclosed runs with a cursor a JavaScript Date holds, to the millisecond: a time with
      -- microseconds (the old default gave every run of an upgraded table the same one) sorted after its own cursor,
      -- so the same page came back for ever. Times are kept to the millisecond, old ones cut to it.
      ALTER TABLE ${tables.runs} ALTER COLUMN first_stored_at SET DEFAULT date_trunc('milliseconds', now());
      UPDATE ${tables.runs} SET first_stored_at = date_trunc('milliseconds', first_stored_at)
        WHERE closed_at IS NULL AND first_stored_at <> date_trunc('milliseconds', first_stored_at);
      CREATE TABLE IF NOT EXISTS ${tables.uses} (
        tenant_id text NOT NULL,
        ref text NOT NULL,
        run_id text NOT NULL,
        PRIMARY KEY (tenant_id, ref, run_id),
        FOREIGN KEY (tenant_id, ref) REFERENCES ${tables.payloads} ON DELETE CASCADE,
        FOREIGN KEY (tenant_id, run_id) REFERENCES ${tables.runs} ON DELETE CASCADE
      );
      -- A sweep finds runs by when they closed, a janitor the unclosed ones in listing order, and deleting a run
      -- deletes its uses by run.
      CREATE INDEX IF NOT EXISTS ${tables.runsByCloseIndex} ON ${tables.runs} (closed_at);
      CREATE INDEX IF NOT EXISTS ${tables.unclosedRunsIndex} ON ${tables.runs} (first_stored_at, tenant_id, run_id)
        WHERE closed_at IS NULL;
      CREATE INDEX IF NOT EXISTS ${tables.usesByRunIndex} ON ${tables.uses} (tenant_id, run_id);
      COMMENT ON TABLE ${tables.payloads} IS '${postgresPayloadSchemaComment}';`);
  });
}

/** Whether the three tables exist and the payload table carries the current schema comment. */
async function hasCurrentTables(pool: Pool, tables: Tables): Promise<boolean> {
  const { rows } = await pool.query<{ current: boolean | null }>(
    `SELECT obj_description(to_regclass($1), 'pg_class') = $4
       AND to_regclass($2) IS NOT NULL AND to_regclass($3) IS NOT NULL AS current`,
    [tables.payloads, tables.runs, tables.uses, postgresPayloadSchemaComment],
  );
  return rows[0]?.current === true;
}

/**
 * Records the run and its use of the payload, and marks the payload as stored now, writing its bytes only when the
 * tenant has none at that address yet. Touching `last_put_at` locks the row: a sweep that reaches it meanwhile waits
 * for this put and then finds it stored within the retention period, so it keeps the payload this put returns (a
 * put would have to take longer than the retention period to be missed).
 */
async function storePayload(
  client: PoolClient,
  tables: Tables,
  scope: PayloadScope,
  ref: PayloadRef,
  seal: () => { keyId: string | undefined; body: Uint8Array },
): Promise<void> {
  const now = new Date();
  await recordRunStored(client, tables, scope, now);
  const touched = await client.query(
    `UPDATE ${tables.payloads} SET last_put_at = $3 WHERE tenant_id = $1 AND ref = $2`,
    [scope.tenantId, ref, now],
  );
  if (touched.rowCount === 0) {
    const sealed = seal();
    await client.query(
      `INSERT INTO ${tables.payloads} (tenant_id, ref, key_id, data, last_put_at) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (tenant_id, ref) DO UPDATE SET last_put_at = EXCLUDED.last_put_at`,
      [
        scope.tenantId,
        ref,
        sealed.keyId ?? null,
        Buffer.from(sealed.body.buffer, sealed.body.byteOffset, sealed.body.length),
        now,
      ],
    );
  }
  await client.query(`INSERT INTO ${tables.uses} (tenant_id, ref, run_id) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`, [
    scope.tenantId,
    ref,
    scope.runId,
  ]);
}

/**
 * Records the run as unclosed, clearing any close mark: a run that stores after its close is open again (a Temporal
 * reset reopens a run under its id), or is a late activity's, which the janitor marks closed again at its close. The
 * update locks the run's row, so a sweep deleting the closed run meanwhile either goes first or sees it unclosed.
 */
async function recordRunStored(client: PoolClient, tables: Tables, scope: PayloadScope, now: Date): Promise<void> {
  // The time comes from here, in milliseconds, so a listed run read back as a cursor names its row exactly.
  await client.query(
    `INSERT INTO ${tables.runs} AS r (tenant_id, run_id, first_stored_at) VALUES ($1, $2, $3)
     ON CONFLICT (tenant_id, run_id) DO UPDATE SET closed_at = NULL WHERE r.closed_at IS NOT NULL`,
    [scope.tenantId, scope.runId, now],
  );
}

/**
 * Forgets the runs closed before the cutoff (and with them their uses), then deletes the payloads no remaining run
 * uses and nobody stored since the cutoff; returns how many payloads it deleted.
 */
async function sweepExpired(pool: Pool, tables: Tables, cutoff: Date): Promise<number> {
  return inTransaction(pool, async (client) => {
    await client.query(`DELETE FROM ${tables.runs} WHERE closed_at < $1`, [cutoff]);
    const deleted = await client.query(
      `DELETE FROM ${tables.payloads} p WHERE p.last_put_at < $1
       AND NOT EXISTS (SELECT 1 FROM ${tables.uses} u WHERE u.tenant_id = p.tenant_id AND u.ref = p.ref)`,
      [cutoff],
    );
    return deleted.rowCount ?? 0;
  });
}

/** A page of unclosed runs in the order of the index that serves it. */
async function selectUnclosedRuns(
  pool: Pool,
  tables: Tables,
  limit: number,
  after: UnclosedRunsQuery['after'],
): Promise<UnclosedRun[]> {
  const afterCondition = after ? 'AND (first_stored_at, tenant_id, run_id) > ($2, $3, $4)' : '';
  const { rows } = await pool.query<{ tenant_id: string; run_id: string; first_stored_at: Date }>(
    `SELECT tenant_id, run_id, first_stored_at FROM ${tables.runs} WHERE closed_at IS NULL ${afterCondition}
     ORDER BY first_stored_at, tenant_id, run_id LIMIT $1`,
    after ? [limit, after.firstStoredAt, after.tenantId, after.runId] : [limit],
  );
  return rows.map((row) => ({ tenantId: row.tenant_id, runId: row.run_id, firstStoredAt: row.first_stored_at }));
}

async function inTransaction<T>(pool: Pool, work: (client: PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  let broken: Error | true | undefined;
  try {
    await client.query('BEGIN');
    const result = await work(client);
    await client.query('COMMIT');
    return result;
  } catch (error) {
    // A connection that cannot even roll back is broken: the pool discards it instead of lending it out again.
    broken = await client.query('ROLLBACK').then(
      () => undefined,
      (rollbackError: unknown) => (rollbackError instanceof Error ? rollbackError : true),
    );
    throw error;
  } finally {
    client.release(broken);
  }
}
