import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as TemporalSettingsModule from '../../../src/cli/temporal-settings.js';
import type * as CreatePayloadStoreModule from '../../../src/store/create-payload-store.js';
import type { Worker } from '@temporalio/worker';
import { toExitCode } from '../../../src/cli/cli-error.js';
import type { ProjectConfig } from '../../../src/cli/project-config.js';
import type { TemporalSettings } from '../../../src/cli/temporal-settings.js';
import { startCliWorker, workerCommand } from '../../../src/cli/worker-command.js';
import { RelayError } from '../../../src/shared/errors.js';
import { freePort } from '../../helpers/free-port.js';
import { startLocalPostgres } from '../../helpers/local-postgres.js';
import type { LocalPostgres } from '../../helpers/local-postgres.js';

// What `relay-e worker` (and dev's worker) opens, and when: the connection and payload store are stand-ins that
// record whether they were opened and closed, and the Temporal worker one whose run fails when a test says so.

const opened = vi.hoisted(() => ({
  connections: [] as Array<{ closed: boolean }>,
  stores: [] as Array<{ closed: boolean }>,
  worker: undefined as { fail(error: Error): void; startPolling(): void } | undefined,
  /** The options the last worker was created with. */
  workerOptions: undefined as Record<string, unknown> | undefined,
  /** Makes the next worker fail as it starts. */
  failAtStart: undefined as Error | undefined,
  /** Keeps the next worker INITIALIZED, as the SDK's is while its plugins start, until `startPolling`. */
  pluginsStarting: false,
  /** Makes the next connection's close fail with this error. */
  failConnectionClose: undefined as Error | undefined,
}));

vi.mock('../../../src/cli/temporal-settings.js', async (importOriginal) => ({
  ...(await importOriginal<typeof TemporalSettingsModule>()),
  connectWorkerConnection: () => {
    const connection = {
      closed: false,
      plugins: [],
      close: () => {
        connection.closed = true;
        return opened.failConnectionClose ? Promise.reject(opened.failConnectionClose) : Promise.resolve();
      },
    };
    opened.connections.push(connection);
    return Promise.resolve(connection);
  },
}));

vi.mock('../../../src/store/create-payload-store.js', async (importOriginal) => {
  const { recordingPayloadStores } = await import('../../helpers/recording-payload-stores.js');
  return recordingPayloadStores(await importOriginal<typeof CreatePayloadStoreModule>(), opened.stores);
});

vi.mock('../../../src/worker/create-worker.js', () => ({
  createWorker: (options: { workerOptions?: Record<string, unknown> }) => {
    opened.workerOptions = options.workerOptions;
    let state = opened.pluginsStarting ? 'INITIALIZED' : 'RUNNING';
    let fail: (error: Error) => void = () => undefined;
    let finish: () => void = () => undefined;
    const running = new Promise<void>((resolve, reject) => {
      fail = (error) => {
        state = 'FAILED';
        reject(error);
      };
      finish = () => {
        state = 'STOPPED';
        resolve();
      };
    });
    opened.worker = { fail, startPolling: () => (state = 'RUNNING') };
    if (opened.failAtStart) fail(opened.failAtStart);
    return Promise.resolve({
      run: () => running,
      getState: () => state,
      // As the SDK's: only a RUNNING worker can be shut down.
      shutdown: () => {
        if (state !== 'RUNNING') throw new Error(`Not running. Current state: ${state}`);
        finish();
      },
    } as unknown as Worker);
  },
}));

const settings: TemporalSettings = {
  address: '127.0.0.1:1',
  namespace: 'default',
  taskQueue: 'relay-e',
  tenantId: 'demo',
  tenantGiven: false,
};

function projectWith(config: Partial<ProjectConfig['config']>): ProjectConfig {
  return { file: 'relay-e.config.ts', config: { tools: [], payloadStore: { kind: 'memory' }, ...config } };
}

async function refusal(start: Promise<unknown>): Promise<unknown> {
  return start.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => error,
  );
}

beforeEach(() => {
  opened.connections.length = 0;
  opened.stores.length = 0;
  opened.worker = undefined;
  opened.workerOptions = undefined;
  opened.failAtStart = undefined;
  opened.pluginsStarting = false;
  opened.failConnectionClose = undefined;
  vi.spyOn(process.stdout, 'write').mockReturnValue(true);
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('startCliWorker', () => {
  it('refuses a config webhook URL without a scheme as a usage error, before it connects', async () => {
    const project = projectWith({ approvalWebhook: { url: 'hooks.example.com/relay', secret: 's'.repeat(16) } });

    const error = await refusal(startCliWorker(settings, project, { defaultFolderShared: false }));

    expect(RelayError.isInstance(error) && error.code).toBe('invalid_input');
    expect(String(error)).toContain('Approval webhook URL is not a URL');
    expect(toExitCode(error)).toBe(2);
    expect(opened).toMatchObject({ connections: [], stores: [] });
  });

  it('refuses the environment’s webhook without its secret, and a reminder without a webhook, before it connects', async () => {
    vi.stubEnv('RELAY_E_APPROVAL_WEBHOOK_URL', 'https://hooks.example.com/relay');
    const withoutSecret = await refusal(startCliWorker(settings, projectWith({}), { defaultFolderShared: false }));
    expect(String(withoutSecret)).toContain('RELAY_E_APPROVAL_WEBHOOK_SECRET is not set');

    vi.unstubAllEnvs();
    const reminder = projectWith({ remindApproversBeforeExpiry: '1h' });
    const withoutWebhook = await refusal(startCliWorker(settings, reminder, { defaultFolderShared: false }));
    expect(String(withoutWebhook)).toContain('An approval reminder needs an approval webhook');

    expect(opened.connections).toEqual([]);
  });

  it('refuses a payload store kind it does not know before it connects', async () => {
    const project = projectWith({ payloadStore: { kind: 'mongo' } as unknown as { kind: 'memory' } });

    const error = await refusal(startCliWorker(settings, project, { defaultFolderShared: false }));

    expect(String(error)).toContain('Unknown payload store kind "mongo"');
    expect(opened.connections).toEqual([]);
  });

  it('closes the payload store and the connection when stopped after the worker failed, then rethrows its error', async () => {
    const started = await startCliWorker(settings, projectWith({}), { defaultFolderShared: false });
    opened.worker?.fail(new Error('the worker failed'));

    await expect(started.stop()).rejects.toThrow('the worker failed');
    expect(opened).toMatchObject({ connections: [{ closed: true }], stores: [{ closed: true }] });
  });

  it('rethrows the failed worker’s error, not a close that failed after it, and writes that one out', async () => {
    opened.failConnectionClose = new Error('the connection would not close');
    const stderr = vi.spyOn(process.stderr, 'write').mockImplementation(() => true);
    try {
      const started = await startCliWorker(settings, projectWith({}), { defaultFolderShared: false });
      opened.worker?.fail(new Error('the worker failed'));

      await expect(started.stop()).rejects.toThrow('the worker failed');
      expect(stderr.mock.calls.map(([line]) => String(line))).toContain(
        "relay-e: closing the worker's payload store and connection failed too: the connection would not close\n",
      );
    } finally {
      stderr.mockRestore();
    }
  });

  it('shuts down a worker stopped while its plugins still start it, once it runs, and closes what it used', async () => {
    opened.pluginsStarting = true;
    const started = await startCliWorker(settings, projectWith({}), { defaultFolderShared: false });
    const stopping = started.stop();
    opened.worker?.startPolling();

    // Before, the stop found no RUNNING worker to shut down and waited for its run to end: for ever.
    await expect(stopping).resolves.toBeUndefined();
    expect(opened).toMatchObject({ connections: [{ closed: true }], stores: [{ closed: true }] });
  });
});

describe('startCliWorker with a PostgreSQL payload store it cannot use', () => {
  let server: LocalPostgres;

  beforeAll(async () => {
    server = await startLocalPostgres();
  }, 60_000);

  afterAll(async () => {
    await server?.stop();
  });

  /** The server's connection string as `user`, to `database`. */
  function connectionAs(user: string, database = 'postgres'): string {
    const url = new URL(server.connectionString);
    url.username = user;
    url.password = 'hunter2-secret';
    url.pathname = `/${database}`;
    return url.href;
  }

  function postgresProject(connectionString: string): ProjectConfig {
    return projectWith({ payloadStore: { kind: 'postgres', connectionString } });
  }

  it('refuses to start with exit 5, before it connects to Temporal, when the database cannot be reached', async () => {
    const port = await freePort();
    const project = postgresProject(`postgres://relay:hunter2-secret@127.0.0.1:${port}/relay`);

    const error = await refusal(startCliWorker(settings, project, { defaultFolderShared: false }));

    expect(String(error)).toBe(
      `CliError: The payload store (PostgreSQL relay@127.0.0.1:${port}/relay (table relay_payloads)) cannot be ` +
        `used: connect ECONNREFUSED 127.0.0.1:${port}`,
    );
    expect(toExitCode(error)).toBe(5);
    expect(opened).toMatchObject({ connections: [], stores: [{ closed: true }] });
  });

  it('refuses to start with exit 5 when the database takes the connection but does not answer in time', async () => {
    const silent = createServer(() => {}); // takes connections and never answers, as behind a silent firewall
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const { port } = silent.address() as AddressInfo;
    const connectionString = `postgres://relay:hunter2-secret@127.0.0.1:${port}/relay`;
    const project = projectWith({ payloadStore: { kind: 'postgres', connectionString, connectTimeoutMs: 300 } });
    try {
      const error = await refusal(startCliWorker(settings, project, { defaultFolderShared: false }));

      expect(String(error)).toBe(
        `CliError: The payload store (PostgreSQL relay@127.0.0.1:${port}/relay (table relay_payloads)) cannot be ` +
          'used: PostgreSQL gave the payload store no connection within 300 ms (the database did not answer, or ' +
          "every connection of the store's pool stayed busy)",
      );
      expect(toExitCode(error)).toBe(5);
      expect(opened).toMatchObject({ connections: [], stores: [{ closed: true }] });
    } finally {
      silent.close();
    }
  });

  it('refuses to start with exit 2 when the database refuses the user', async () => {
    const project = postgresProject(connectionAs('nobody_here'));

    const error = await refusal(startCliWorker(settings, project, { defaultFolderShared: false }));

    expect(String(error)).toContain('cannot be used: role "nobody_here" does not exist');
    expect(String(error)).not.toContain('hunter2');
    expect(toExitCode(error)).toBe(2);
    expect(opened).toMatchObject({ connections: [], stores: [{ closed: true }] });
  });

  it('refuses to start with exit 2 when the user may not create the tables, and says what to grant', async () => {
    const admin = new pg.Pool({ connectionString: server.connectionString });
    await admin.query('CREATE DATABASE no_create');
    await admin.query('CREATE ROLE row_rights_only LOGIN');
    await admin.end();
    const owner = new pg.Pool({ connectionString: connectionAs('relay', 'no_create') });
    await owner.query('REVOKE CREATE ON SCHEMA public FROM PUBLIC');
    await owner.end();
    const project = postgresProject(connectionAs('row_rights_only', 'no_create'));

    const error = await refusal(startCliWorker(settings, project, { defaultFolderShared: false }));

    expect(String(error)).toContain(
      'cannot be used: permission denied for schema public. Grant the user CREATE on the schema, or make the ' +
        "tables ahead and grant it SELECT, INSERT, UPDATE and DELETE on them (docs/configuration.md, 'Payload store')",
    );
    expect(toExitCode(error)).toBe(2);
    expect(opened.connections).toEqual([]);
  });
});

describe('startCliWorker’s shutdown grace', () => {
  it('lets running tools and model calls finish for 25 seconds by default before a stop cancels them', async () => {
    const started = await startCliWorker(settings, projectWith({}), { defaultFolderShared: false });
    await started.stop();

    // Before, the SDK's default of 0: a SIGTERM failed a running tool's attempt, and a retry ran it a second time.
    expect(opened.workerOptions?.['shutdownGraceTime']).toBe(25_000);
  });

  it('takes RELAY_E_SHUTDOWN_GRACE over the config’s shutdownGraceTime', async () => {
    const project = projectWith({ shutdownGraceTime: '90s' });
    const fromConfig = await startCliWorker(settings, project, { defaultFolderShared: false });
    await fromConfig.stop();
    expect(opened.workerOptions?.['shutdownGraceTime']).toBe(90_000);

    vi.stubEnv('RELAY_E_SHUTDOWN_GRACE', '2m');
    const fromEnv = await startCliWorker(settings, project, { defaultFolderShared: false });
    await fromEnv.stop();
    expect(opened.workerOptions?.['shutdownGraceTime']).toBe(120_000);
  });

  it.each(['a while', '-5s'])(
    'refuses RELAY_E_SHUTDOWN_GRACE=%s as a usage error, before it connects',
    async (value) => {
      vi.stubEnv('RELAY_E_SHUTDOWN_GRACE', value);

      const error = await refusal(startCliWorker(settings, projectWith({}), { defaultFolderShared: false }));

      expect(String(error)).toContain(`RELAY_E_SHUTDOWN_GRACE '${value}'`);
      expect(toExitCode(error)).toBe(2);
      expect(opened).toMatchObject({ connections: [], stores: [] });
    },
  );
});

describe('relay-e worker', () => {
  it('closes the payload store and the connection when the worker fails, and fails with its error', async () => {
    const running = workerCommand.run(['--json']);
    await vi.waitFor(() => expect(opened.worker).toBeDefined());
    opened.worker?.fail(new Error('the worker failed'));

    await expect(running).rejects.toThrow('the worker failed');
    expect(opened).toMatchObject({ connections: [{ closed: true }], stores: [{ closed: true }] });
  });

  it('listens for Ctrl-C before it prints that it is ready, so a caller stopping it then does not kill it', async () => {
    // Node ends a process at a SIGINT it has no listener for; a caller may send one as soon as it reads the line.
    const listenersAtReady: number[] = [];
    vi.spyOn(process.stdout, 'write').mockImplementation(() => {
      listenersAtReady.push(process.listenerCount('SIGINT'));
      return true;
    });
    const listening = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
    const before = listening.SIGINT.length;
    const running = workerCommand.run(['--json']);
    await vi.waitFor(() => expect(listenersAtReady).toHaveLength(1));
    expect(listenersAtReady[0]).toBeGreaterThan(before);
    opened.worker?.fail(new Error('the worker failed'));
    await expect(running).rejects.toThrow('the worker failed');
    for (const signal of ['SIGINT', 'SIGTERM'] as const) {
      for (const listener of process.listeners(signal).filter((added) => !listening[signal].includes(added))) {
        process.off(signal, listener);
      }
    }
  });

  it('refuses --tenant, which a worker serving every tenant would ignore', async () => {
    // Were the flag taken, the worker would start; failing at once, it ends the command rather than waiting for Ctrl-C.
    opened.failAtStart = new Error('the worker started');

    const error = await refusal(workerCommand.run(['--tenant', 'acme', '--json']));

    expect(toExitCode(error)).toBe(2);
    expect(String(error)).toContain("Unknown option '--tenant'");
    expect(workerCommand.help).not.toContain('--tenant');
    expect(opened.connections).toEqual([]);
  });
});
