import { readFileSync } from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { createPostgresPayloadStore } from '../../../src/store/postgres-payload-store.js';
import { createPayloadStore } from '../../../src/worker/index.js';
import type { UnclosedRun } from '../../../src/store/payload-store.js';
import { startLocalPostgres } from '../../helpers/local-postgres.js';
import type { LocalPostgres } from '../../helpers/local-postgres.js';
import { describePayloadStoreBehaviour } from './payload-store-behaviour.js';

// A real PostgreSQL for this file (initdb and pg_ctl in a temporary folder); without its binaries the file fails
// and says what to install.
let server: LocalPostgres;
let admin: pg.Pool;
let tables = 0;

beforeAll(async () => {
  server = await startLocalPostgres();
  admin = new pg.Pool({ connectionString: server.connectionString });
}, 60_000);

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

describePayloadStoreBehaviour(
  'PostgreSQL store',
  () => {
    // Each test gets tables of its own, so tests never see each other's rows.
    const tableName = `payloads_${++tables}`;
    return {
      open: (options) =>
        createPostgresPayloadStore({ connectionString: server.connectionString, tableName, ...options }),
      atRest: {
        read: async (tenantId, ref) => {
          const { rows } = await admin.query<{ data: Buffer }>(
            `SELECT data FROM ${tableName} WHERE tenant_id = $1 AND ref = $2`,
            [tenantId, ref],
          );
          if (!rows[0]) throw new Error(`no row for ${tenantId} ${ref}`);
          return rows[0].data;
        },
        write: async (tenantId, ref, bytes) => {
          await admin.query(`UPDATE ${tableName} SET data = $3 WHERE tenant_id = $1 AND ref = $2`, [
            tenantId,
            ref,
            bytes,
          ]);
        },
      },
    };
  },
  { persistent: true },
);

describe('PostgreSQL store', () => {
  const scope = { tenantId: 'acme', runId: 'run-1' };

  it('creates its tables once when several stores start on an empty database at the same time', async () => {
    const stores = Array.from({ length: 4 }, () =>
      createPostgresPayloadStore({ connectionString: server.connectionString, tableName: 'racing_start' }),
    );
    const data = new TextEncoder().encode('first payload of the day');

    const refs = await Promise.all(stores.map((store, index) => store.put({ ...scope, runId: `run-${index}` }, data)));

    expect(new Set(refs).size).toBe(1);
    const { rows } = await admin.query<{ count: string }>('SELECT count(*) FROM racing_start');
    expect(rows[0]?.count).toBe('1');
    await Promise.all(stores.map((store) => store.close()));
  });

  it('indexes runs by close, unclosed runs in listing order and uses by run, so a sweep, the deletes it cascades and a janitor need no full scans', async () => {
    const store = createPostgresPayloadStore({ connectionString: server.connectionString, tableName: 'indexed' });
    await store.sweep();
    await store.close();

    const { rows } = await admin.query<{ indexdef: string }>(
      "SELECT indexdef FROM pg_indexes WHERE tablename IN ('indexed_runs', 'indexed_uses') ORDER BY indexname",
    );
    const definitions = rows.map((row) => row.indexdef.replace(/^.* USING btree /, ''));
    expect(definitions).toEqual(
      expect.arrayContaining([
        '(closed_at)',
        '(first_stored_at, tenant_id, run_id) WHERE (closed_at IS NULL)',
        '(tenant_id, run_id)',
      ]),
    );
  });

  it('adds first_stored_at to a runs table made before it, so a janitor lists the runs that table already held', async () => {
    await admin.query(`
      CREATE TABLE before_first_stored_runs (
        tenant_id text NOT NULL, run_id text NOT NULL, closed_at timestamptz, PRIMARY KEY (tenant_id, run_id));
      INSERT INTO before_first_stored_runs (tenant_id, run_id) VALUES ('acme', 'run-from-before');`);
    const opened = Date.now();
    const store = createPostgresPayloadStore({
      connectionString: server.connectionString,
      tableName: 'before_first_stored',
    });
    await store.put({ tenantId: 'acme', runId: 'run-after' }, new TextEncoder().encode('after the upgrade'));

    const unclosed = await store.listUnclosedRuns({ limit: 10 });
    await store.close();
    expect(unclosed.map((run) => run.runId).sort()).toEqual(['run-after', 'run-from-before']);
    for (const run of unclosed) expect(run.firstStoredAt.getTime()).toBeGreaterThanOrEqual(opened - 1_000);
  });

  it('pages through unclosed runs whose times have microseconds, as an upgraded table held, listing each once', async () => {
    await admin.query(`
      CREATE TABLE microsecond_runs_runs (
        tenant_id text NOT NULL, run_id text NOT NULL, first_stored_at timestamptz NOT NULL DEFAULT now(),
        closed_at timestamptz, PRIMARY KEY (tenant_id, run_id));
      INSERT INTO microsecond_runs_runs (tenant_id, run_id, first_stored_at) VALUES
        ('acme', 'run-a', '2026-12-01 10:00:00.123456+00'),
        ('acme', 'run-b', '2026-12-01 10:00:00.123456+00'),
        ('acme', 'run-c', '2026-12-01 10:00:00.123456+00');`);
    const store = createPostgresPayloadStore({
      connectionString: server.connectionString,
      tableName: 'microsecond_runs',
    });
    const listed: string[] = [];
    let after: UnclosedRun | undefined;
    // Three pages at most: before, the cursor sorted before every such run and the first page came back each time.
    for (let page = 0; page < 3; page++) {
      const runs = await store.listUnclosedRuns({ limit: 2, ...(after ? { after } : {}) });
      listed.push(...runs.map((run) => run.runId));
      after = runs.at(-1);
      if (runs.length < 2) break;
    }
    await store.close();
    expect(listed).toEqual(['run-a', 'run-b', 'run-c']);
  });

  it('uses a pool it is given and leaves it open when it closes', async () => {
    const pool = new pg.Pool({ connectionString: server.connectionString });
    const store = createPostgresPayloadStore({ pool, tableName: 'given_pool' });
    const ref = await store.put(scope, new TextEncoder().encode('pooled'));
    await store.close();

    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    expect((await pool.query('SELECT ref FROM given_pool')).rows).toEqual([{ ref }]);
    await pool.end();
  });

  it.each([
    {
      how: 'createPostgresPayloadStore',
      open: (connectionString: string, logger: Pick<Console, 'warn'>) =>
        createPostgresPayloadStore({ connectionString, tableName: 'idle_break', logger }),
    },
    {
      how: 'createPayloadStore',
      open: (connectionString: string, logger: Pick<Console, 'warn'>) =>
        createPayloadStore({ kind: 'postgres', connectionString, tableName: 'idle_break' }, { logger }),
    },
  ])(
    'reports an idle connection of its own pool that the server ended to the logger given to $how, and carries on',
    async ({ how, open }) => {
      const warnings: string[] = [];
      const application = `relay_idle_break_${how.toLowerCase()}`;
      const store = open(`${server.connectionString}?application_name=${application}`, {
        warn: (message: string) => warnings.push(message),
      });
      await store.put(scope, new TextEncoder().encode('before the break'));

      const { rows } = await admin.query<{ ended: boolean }>(
        'SELECT pg_terminate_backend(pid) AS ended FROM pg_stat_activity WHERE application_name = $1',
        [application],
      );
      expect(rows.length).toBeGreaterThan(0);
      await expect.poll(() => warnings.length, { timeout: 5_000 }).toBeGreaterThanOrEqual(rows.length);
      expect(warnings[0]).toMatch(/idle PostgreSQL connection broke.*terminat/);

      const ref = await store.put(scope, new TextEncoder().encode('after the break'));
      expect(new TextDecoder().decode(await store.get(scope, ref))).toBe('after the break');
      await store.close();
    },
  );

  it('is what createPayloadStore builds for { kind: "postgres" }, with the default table name', async () => {
    const store = createPayloadStore({ kind: 'postgres', connectionString: server.connectionString });
    const ref = await store.put(scope, new TextEncoder().encode('configured'));
    await store.close();

    expect((await admin.query('SELECT ref FROM relay_payloads')).rows).toEqual([{ ref }]);
  });

  it('refuses a table name that is not a plain lower-case identifier', () => {
    expect(() =>
      createPostgresPayloadStore({ connectionString: server.connectionString, tableName: 'payloads; DROP TABLE x' }),
    ).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});

/** The statements docs/configuration.md gives for creating the tables ahead, with its GRANT to `relay_worker`. */
function documentedStatements(): string {
  const docs = readFileSync(path.join(import.meta.dirname, '..', '..', '..', 'docs', 'configuration.md'), 'utf8');
  const statements = /\*\*PostgreSQL privileges\.\*\*[\s\S]*?```sql\n([\s\S]*?)```/.exec(docs)?.[1];
  if (statements === undefined) throw new Error('docs/configuration.md gives no SQL under "PostgreSQL privileges"');
  return statements;
}

describe('PostgreSQL store users and privileges', () => {
  const scope = { tenantId: 'acme', runId: 'run-1' };
  let databases = 0;
  /** What a test opened, closed after it also when it fails: an open pool would outlive the server. */
  const opened: Array<{ end(): Promise<void> } | { close(): Promise<void> }> = [];

  afterEach(async () => {
    for (const resource of opened.splice(0).reverse()) await ('end' in resource ? resource.end() : resource.close());
  });

  function storeAs(connectionString: string) {
    const store = createPostgresPayloadStore({ connectionString });
    opened.push(store);
    return store;
  }

  /** A database of its own where nobody but its owner may create in `public`, and a login role with no rights yet. */
  async function databaseWithWorkerRole(): Promise<{ owner: pg.Pool; workerConnection: string }> {
    const database = `privileges_${++databases}`;
    await admin.query(`CREATE DATABASE ${database}`);
    await admin.query(`DO $$ BEGIN CREATE ROLE relay_worker LOGIN; EXCEPTION WHEN duplicate_object THEN NULL; END $$`);
    const url = new URL(server.connectionString);
    url.pathname = `/${database}`;
    const owner = new pg.Pool({ connectionString: url.href });
    opened.push(owner);
    // PostgreSQL 15 revokes it by default; said here so the test means the same on older servers.
    await owner.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    url.username = 'relay_worker';
    return { owner, workerConnection: url.href };
  }

  it('works for a user with only row rights on tables made ahead with the statements docs/configuration.md gives', async () => {
    const { owner, workerConnection } = await databaseWithWorkerRole();
    await owner.query(documentedStatements());
    const store = storeAs(workerConnection);

    await store.prepare?.();
    const ref = await store.put(scope, new TextEncoder().encode('made ahead'));
    await store.markRunClosed(scope, new Date(0));
    const unclosed = await store.listUnclosedRuns({ limit: 10 });
    // A month on, the run's payload has expired: the sweep deletes rows (and, by cascade, the run's uses).
    const swept = await store.sweep({ now: new Date(Date.now() + 30 * 86_400_000) });

    expect(ref).toMatch(/^sha256:/);
    expect({ unclosed, swept }).toEqual({ unclosed: [], swept: 1 });
  });

  it('makes the same tables and indexes as the statements docs/configuration.md gives', async () => {
    const made = await databaseWithWorkerRole();
    const documented = await databaseWithWorkerRole();
    await documented.owner.query(documentedStatements());
    await createPostgresPayloadStore({ pool: made.owner }).prepare?.();

    const shape = async (pool: pg.Pool) =>
      (
        await pool.query<{ part: string }>(`
          SELECT table_name || '.' || column_name || ' ' || data_type || ' ' || is_nullable || ' ' ||
            coalesce(column_default, '') AS part FROM information_schema.columns WHERE table_schema = 'public'
          UNION ALL SELECT indexdef FROM pg_indexes WHERE schemaname = 'public'
          UNION ALL SELECT 'comment ' || obj_description('relay_payloads'::regclass, 'pg_class')
          ORDER BY 1`)
      ).rows.map((row) => row.part);
    expect(await shape(made.owner)).toEqual(await shape(documented.owner));
  });

  it('checks its privileges once when prepared twice, as the CLI worker and its plugin both do', async () => {
    const { owner } = await databaseWithWorkerRole();
    const checks: string[] = [];
    const query = owner.query.bind(owner);
    owner.query = ((text: string, ...rest: unknown[]) => {
      if (typeof text === 'string' && text.includes('has_table_privilege')) checks.push(text);
      return (query as (...args: unknown[]) => unknown)(text, ...rest);
    }) as typeof owner.query;
    const store = createPostgresPayloadStore({ pool: owner });

    await store.prepare?.();
    await store.prepare?.();

    expect(checks).toHaveLength(1);
  });

  it('checks its privileges again after a refusal, so a grant made meanwhile is seen', async () => {
    const { owner, workerConnection } = await databaseWithWorkerRole();
    await owner.query(documentedStatements().replace(/^GRANT .*$/m, ''));
    const store = storeAs(workerConnection);
    await expect(store.prepare?.()).rejects.toMatchObject({ code: 'invalid_input' });

    await owner.query(/^GRANT .*$/m.exec(documentedStatements())?.[0] ?? 'SELECT no_grant_in_docs');

    await expect(store.prepare?.()).resolves.toBeUndefined();
  });

  it('says the user may not create its tables when it lacks CREATE on the schema', async () => {
    const { workerConnection } = await databaseWithWorkerRole();
    const store = storeAs(workerConnection);

    await expect(store.prepare?.()).rejects.toMatchObject({
      code: '42501',
      message: 'permission denied for schema public',
    });
  });

  it('names each privilege the user lacks on tables made ahead, before a run needs it', async () => {
    const { owner, workerConnection } = await databaseWithWorkerRole();
    await owner.query(documentedStatements().replace(/^GRANT .*$/m, ''));
    await owner.query('GRANT SELECT, INSERT, UPDATE ON relay_payloads, relay_payloads_runs TO relay_worker');
    const store = storeAs(workerConnection);

    await expect(store.prepare?.()).rejects.toMatchObject({
      code: 'invalid_input',
      message:
        'The PostgreSQL user lacks DELETE on "relay_payloads", DELETE on "relay_payloads_runs", SELECT on ' +
        '"relay_payloads_uses", INSERT on "relay_payloads_uses", UPDATE on "relay_payloads_uses", DELETE on ' +
        '"relay_payloads_uses": the payload store needs SELECT, INSERT, UPDATE, DELETE on each of its tables',
    });
  });
});
