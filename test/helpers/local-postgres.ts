import { execFile, execFileSync } from 'node:child_process';
import { appendFileSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { freePort } from './free-port.js';

const run = promisify(execFile);
const user = 'relay';
const startAttempts = 3;

/** A throwaway PostgreSQL server on loopback, in a temporary folder of its own. */
export interface LocalPostgres {
  readonly connectionString: string;
  /** Stops the server at once and deletes its folder. */
  stop(): Promise<void>;
}

/**
 * Starts PostgreSQL (initdb, then pg_ctl) on a free port with trust authentication for the `relay` user, as
 * scripts/cluster.sh does: as the `postgres` user when this process is root, since PostgreSQL refuses to run as root.
 * Durability is switched off (fsync, full-page writes): the data lives only as long as the test. Throws, saying what to
 * install, when the PostgreSQL binaries are not on this machine.
 */
export async function startLocalPostgres(): Promise<LocalPostgres> {
  const bin = postgresBinaries();
  for (let attempt = 1; ; attempt++) {
    // A mode-0700 temporary folder would shut out the `postgres` user that PostgreSQL runs as under root.
    const directory = mkdtempSync(path.join(tmpdir(), 'relay-postgres-'));
    execFileSync('chmod', ['755', directory]);
    if (isRoot()) execFileSync('chown', ['postgres:', directory]);
    const data = path.join(directory, 'data');
    const stop = () => stopServer(bin, directory);
    process.once('exit', stop);
    try {
      const port = await freePort();
      await asPostgres(path.join(bin, 'initdb'), [
        '-D',
        data,
        '-U',
        user,
        '--auth=trust',
        '--encoding=UTF8',
        '--locale=C',
        '--no-sync',
      ]);
      appendFileSync(
        path.join(data, 'postgresql.conf'),
        [
          "listen_addresses = '127.0.0.1'",
          `port = ${port}`,
          `unix_socket_directories = '${directory}'`,
          'fsync = off',
          'full_page_writes = off',
          'synchronous_commit = off',
          '',
        ].join('\n'),
      );
      const log = path.join(directory, 'postgres.log');
      await asPostgres(path.join(bin, 'pg_ctl'), ['-D', data, '-l', log, '-w', '-t', '60', 'start']).catch(
        (error: unknown) => {
          throw new Error(`PostgreSQL did not start on port ${port}: ${readLog(log)}`, { cause: error });
        },
      );
      return {
        connectionString: `postgres://${user}@127.0.0.1:${port}/postgres`,
        stop: async () => {
          process.off('exit', stop);
          stop();
        },
      };
    } catch (error) {
      stop();
      process.off('exit', stop);
      // Another process can take the free port between the probe and PostgreSQL's bind.
      if (attempt < startAttempts && /already in use/.test(String(error))) continue;
      throw error;
    }
  }
}

/** The folder holding initdb, pg_ctl and postgres: RELAY_E_POSTGRES_BIN, or the newest under /usr/lib/postgresql. */
function postgresBinaries(): string {
  const given = process.env['RELAY_E_POSTGRES_BIN'];
  const installed = existsSync('/usr/lib/postgresql')
    ? readdirSync('/usr/lib/postgresql')
        .sort((a, b) => Number(b) - Number(a))
        .map((version) => path.join('/usr/lib/postgresql', version, 'bin'))
    : [];
  const found = (given ? [given] : installed).find((bin) =>
    ['initdb', 'pg_ctl', 'postgres'].every((name) => existsSync(path.join(bin, name))),
  );
  if (!found) {
    throw new Error(
      `No PostgreSQL binaries (initdb, pg_ctl, postgres) in ${given ? `RELAY_E_POSTGRES_BIN=${given}` : '/usr/lib/postgresql/*/bin'}: ` +
        'the PostgreSQL payload store is tested against a real server. Install PostgreSQL (apt-get install postgresql, ' +
        'or `. scripts/env.sh && relay_e_ensure_postgres` as root) or set RELAY_E_POSTGRES_BIN to its bin folder.',
    );
  }
  return found;
}

/** Stops the server (immediately: nothing is kept) and deletes its folder; synchronous, so it also runs at `exit`. */
function stopServer(bin: string, directory: string): void {
  const data = path.join(directory, 'data');
  try {
    if (existsSync(path.join(data, 'postmaster.pid'))) {
      execFileSync(...asPostgresCommand(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', '-w', 'stop']), {
        stdio: 'ignore',
      });
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
}

async function asPostgres(command: string, args: string[]): Promise<void> {
  const [file, argv] = asPostgresCommand(command, args);
  await run(file, argv, { timeout: 90_000 });
}

function asPostgresCommand(command: string, args: string[]): [string, string[]] {
  return isRoot() ? ['runuser', ['-u', 'postgres', '--', command, ...args]] : [command, args];
}

function isRoot(): boolean {
  return process.getuid?.() === 0;
}

function readLog(log: string): string {
  return existsSync(log) ? readFileSync(log, 'utf8').slice(-2000) : '(no log)';
}
