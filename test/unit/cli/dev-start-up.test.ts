import { createServer } from 'node:http';
import { createServer as createHttp2Server } from 'node:http2';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { CliError, toExitCode } from '../../../src/cli/cli-error.js';
import { errorMessage } from '../../../src/shared/error-message.js';
import { devCommand } from '../../../src/cli/dev-command.js';
import { waitForShutdownSignal } from '../../../src/cli/shutdown-signal.js';
import { startCliWorker } from '../../../src/cli/worker-command.js';
import type { CliWorker } from '../../../src/cli/worker-command.js';
import { startTemporalDevServer } from '../../../src/dev/temporal-dev-server.js';
import type * as DevServerModule from '../../../src/dev/temporal-dev-server.js';
import type { TemporalDevServerOptions } from '../../../src/dev/temporal-dev-server.js';
import type * as ApiServerModule from '../../../src/http/start-api-server.js';
import { startApiServer } from '../../../src/http/start-api-server.js';

// dev's parts are stand-ins, except where a test restores the real Temporal check: no server, worker or port.
vi.mock('../../../src/cli/shutdown-signal.js', () => ({ waitForShutdownSignal: vi.fn() }));
vi.mock('../../../src/cli/cli-invocation.js', () => ({ cliInvocation: () => 'relay-e-here' }));
vi.mock('../../../src/cli/worker-command.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  startCliWorker: vi.fn(),
}));
vi.mock('../../../src/http/start-api-server.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  startApiServer: vi.fn(),
}));
vi.mock('../../../src/cli/temporal-settings.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  connectRelayClient: vi.fn(async () => ({ close: async () => stopped.push('client') })),
}));
vi.mock('../../../src/cli/project-config.js', async (importOriginal) => ({
  ...(await importOriginal<object>()),
  loadProjectConfig: vi.fn(async () => undefined),
}));
vi.mock('../../../src/dev/temporal-dev-server.js', async (importOriginal) => {
  const actual = await importOriginal<typeof DevServerModule>();
  return {
    ...actual,
    startTemporalDevServer: vi.fn(actual.startTemporalDevServer),
    findTemporalExecutable: vi.fn(async () => '/opt/temporal'),
  };
});

const actualDevServer = await vi.importActual<typeof DevServerModule>('../../../src/dev/temporal-dev-server.js');
const stopped: string[] = [];
let printed: string;
let said: string;
let signalShutdown: () => void;

/** A Temporal dev server start that serves at `address`, or waits for dev's abort when `address` is undefined. */
function temporalStart(address: string | undefined) {
  return async (options?: TemporalDevServerOptions) => {
    if (address === undefined) {
      await new Promise<void>((resolve) => options?.signal?.addEventListener('abort', () => resolve()));
      options?.signal?.throwIfAborted();
    }
    return { address: address ?? '', namespace: 'default', stop: async () => void stopped.push('temporal') };
  };
}

/** A worker that runs until stopped, or until `failure` rejects; `stop` settles as `finished` does, as the real one. */
function fakeWorker(failure?: Promise<never>): CliWorker {
  let stop = () => {};
  const finished = Promise.race([new Promise<void>((resolve) => (stop = resolve)), ...(failure ? [failure] : [])]);
  return {
    worker: {} as CliWorker['worker'],
    providers: ['scripted'],
    toolNames: ['get_balance'],
    source: 'the banking demo',
    approvalWebhook: undefined,
    payloadStore: {} as CliWorker['payloadStore'],
    payloadStoreFacts: {
      store: 'files in .relay-e/payloads',
      currentKeyId: 'k2',
      retentionMs: 7 * 86_400_000,
      janitorIntervalMs: 600_000,
    },
    shutdownGraceMs: 25_000,
    finished,
    stop: async () => {
      stopped.push('worker');
      stop();
      await finished;
    },
  };
}

beforeEach(() => {
  stopped.length = 0;
  printed = '';
  said = '';
  vi.stubEnv('RELAY_E_API_KEYS', 'rk_test_0123456789abcdef:demo');
  vi.stubEnv('RELAY_E_ENCRYPTION_KEYS', '');
  vi.stubEnv('RELAY_E_PORT', '');
  vi.stubEnv('RELAY_E_HOST', '');
  vi.stubEnv('TEMPORAL_ADDRESS', '');
  const shutdown = new Promise<NodeJS.Signals>((resolve) => (signalShutdown = () => resolve('SIGINT')));
  vi.mocked(waitForShutdownSignal).mockReturnValue(shutdown);
  vi.mocked(startTemporalDevServer).mockImplementation(actualDevServer.startTemporalDevServer);
  vi.mocked(startCliWorker).mockResolvedValue(fakeWorker());
  vi.mocked(startApiServer).mockResolvedValue({
    url: 'http://127.0.0.1:18787',
    close: async () => void stopped.push('api'),
  });
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    printed += String(chunk);
    // Ctrl-C once the banner is out, as a user would.
    if (printed.includes('Ctrl-C stops')) signalShutdown();
    return true;
  });
  vi.spyOn(process.stderr, 'write').mockImplementation((chunk) => (said += String(chunk)) !== '');
});

afterEach(() => {
  vi.restoreAllMocks();
  vi.unstubAllEnvs();
  vi.mocked(startTemporalDevServer).mockClear();
  vi.mocked(startCliWorker).mockClear();
  vi.mocked(startApiServer).mockClear();
});

describe('relay-e dev ready banner', () => {
  it('prints commands in the form that works where it runs, with no --address on a default start', async () => {
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:7233'));
    vi.spyOn(await import('../../../src/dev/temporal-dev-server.js'), 'isListening').mockResolvedValue(false);

    expect(await devCommand.run(['--port', '0'])).toBe(0);
    // Before: `npm run relay-e -- run --address 127.0.0.1:7233 …`, from any folder, for the default address.
    expect(printed).toContain('relay-e-here run "transfer 50 from ACC-1 to ACC-2"');
    expect(printed).toContain('relay-e-here runs --status awaiting_approval');
    expect(printed).not.toMatch(/relay-e-here \w+ --address/);
  });

  it('names the payload store, its current encryption key and its janitor, as relay-e worker does', async () => {
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:7233'));
    vi.spyOn(await import('../../../src/dev/temporal-dev-server.js'), 'isListening').mockResolvedValue(false);

    expect(await devCommand.run(['--port', '0'])).toBe(0);
    expect(printed).toContain(
      '  Payloads     files in .relay-e/payloads, encrypted (current key k2); janitor every 10 minutes, payloads kept ' +
        '7 days after their runs close\n',
    );
  });

  it('repeats the address it was given', async () => {
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:17233'));
    vi.spyOn(await import('../../../src/dev/temporal-dev-server.js'), 'isListening').mockResolvedValue(false);

    expect(await devCommand.run(['--temporal-address', '127.0.0.1:17233'])).toBe(0);
    expect(printed).toContain('relay-e-here run --address 127.0.0.1:17233 "transfer 50');
  });
});

describe('relay-e dev flags', () => {
  it.each([
    [['--port', 'abc'], "Invalid port 'abc'"],
    [['--port', '99999'], "Invalid port '99999'"],
    [['--host', 'not an address'], "Invalid --host 'not an address'"],
    [['--ui-port', '0'], "Invalid --ui-port '0': give a port from 1 to 65535"],
    [['--ui-port', 'abc'], "Invalid --ui-port 'abc'"],
  ])('refuses %j before anything starts, exit 2', async (argv, message) => {
    signalShutdown();
    const failure = devCommand.run(argv);
    await failure.catch(() => {});

    // Before, the port was read only once Temporal and the worker had started; the host and --ui-port 0 never.
    expect(startTemporalDevServer).not.toHaveBeenCalled();
    expect(startCliWorker).not.toHaveBeenCalled();
    await expect(failure).rejects.toThrow(message);
    await expect(failure).rejects.toMatchObject({ exitCode: 2 });
  });
});

describe('relay-e dev on an API --host this machine does not have', () => {
  it('names --host and the address once the API cannot listen there, exit 2, and stops what started', async () => {
    const actualApi = await vi.importActual<typeof ApiServerModule>('../../../src/http/start-api-server.js');
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:17233'));
    vi.spyOn(await import('../../../src/dev/temporal-dev-server.js'), 'isListening').mockResolvedValue(false);
    vi.mocked(startApiServer).mockImplementation(actualApi.startApiServer);
    // TEST-NET-3 (RFC 5737): never an address of this machine, so the real listen fails with EADDRNOTAVAIL.
    const failure = devCommand.run(['--host', '203.0.113.9', '--port', '0']);

    // Before, Node's own `listen EADDRNOTAVAIL: address not available 203.0.113.9`, exit 1.
    await expect(failure).rejects.toMatchObject({ exitCode: 2 });
    await expect(failure).rejects.toThrow(
      'Cannot listen on --host 203.0.113.9: it is not an address of this machine (EADDRNOTAVAIL). ' +
        'Give an address of this machine with --host IP or RELAY_E_HOST=IP',
    );
    expect(stopped).toEqual(['client', 'worker', 'temporal']);
    expect(printed).toBe('');
  });
});

describe('relay-e dev on a --temporal-address of another machine where nothing answers', () => {
  it('says it starts a dev server only on this machine, exit 5, without running the Temporal CLI', async () => {
    vi.spyOn(await import('../../../src/dev/temporal-dev-server.js'), 'isListening').mockResolvedValue(false);
    const failure = devCommand.run(['--temporal-address', '203.0.113.9:7233']);

    // Before, the Temporal CLI was started on that address and its bind failure shown as its log, exit 5.
    await expect(failure).rejects.toMatchObject({ exitCode: 5 });
    await expect(failure).rejects.toThrow(
      'Nothing answers at 203.0.113.9:7233, and dev starts a Temporal dev server only on an address of this ' +
        'machine: start Temporal there, or give --temporal-address 127.0.0.1:N for a dev server here',
    );
    expect(startTemporalDevServer).not.toHaveBeenCalled();
    expect(startCliWorker).not.toHaveBeenCalled();
  });
});

describe('relay-e dev with an API key the API would refuse', () => {
  it('says so, exit 2, before it starts or reuses Temporal', async () => {
    vi.stubEnv('RELAY_E_API_KEYS', 'short-key:demo');
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:7999'));
    const error: unknown = await devCommand.run([]).catch((thrown: unknown) => thrown);

    // Before, Temporal and the worker started first, and the refusal came from the API's start.
    expect(toExitCode(error)).toBe(2);
    expect(errorMessage(error)).toContain('RELAY_E_API_KEYS entry 1: key: Expected 16 to 512 characters');
    expect(startTemporalDevServer).not.toHaveBeenCalled();
    expect(startCliWorker).not.toHaveBeenCalled();
  });
});

describe('relay-e dev on a --temporal-address held by something that is not Temporal', () => {
  it('names the flag that moves it at once, exit 2', async () => {
    const web = createServer((_, response) => response.end('hello'));
    await new Promise<void>((resolve) => web.listen(0, '127.0.0.1', resolve));
    const address = `127.0.0.1:${(web.address() as AddressInfo).port}`;
    try {
      const failure = devCommand.run(['--temporal-address', address]);

      // Before, dev took it for a Temporal server to reuse and waited out 60 s, then exit 5.
      await expect(failure).rejects.toBeInstanceOf(CliError);
      await expect(failure).rejects.toMatchObject({ exitCode: 2 });
      await expect(failure).rejects.toThrow(/not as a Temporal server .*change it with --temporal-address H:P/);
      expect(startCliWorker).not.toHaveBeenCalled();
    } finally {
      web.close();
    }
  });
});

describe('relay-e dev with TLS on for a --temporal-address whose server does not speak it', () => {
  it('names TEMPORAL_TLS at once, exit 2', async () => {
    vi.stubEnv('TEMPORAL_TLS', 'true');
    const plain = createHttp2Server();
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    const address = `127.0.0.1:${(plain.address() as AddressInfo).port}`;
    try {
      const failure = devCommand.run(['--temporal-address', address]);

      // Before, dev retried the TLS handshake for 60 s, then said the server did not accept connections, exit 5.
      await expect(failure).rejects.toMatchObject({ exitCode: 2 });
      await expect(failure).rejects.toThrow(
        `TLS is on for the connection to ${address}, but the server there does not speak TLS: turn it off with ` +
          'TEMPORAL_TLS=false',
      );
      expect(startCliWorker).not.toHaveBeenCalled();
    } finally {
      plain.close();
    }
  });
});

describe('relay-e dev interrupted during its start-up', () => {
  beforeEach(async () => {
    vi.spyOn(await import('../../../src/dev/temporal-dev-server.js'), 'isListening').mockResolvedValue(false);
  });

  it('stops the Temporal start on Ctrl-C and exits without printing ready', async () => {
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart(undefined));
    const run = devCommand.run(['--port', '0']);
    await vi.waitFor(() => expect(startTemporalDevServer).toHaveBeenCalled());
    signalShutdown();

    // Before, the start went on (up to 60 s), and the banner printed before the stack stopped.
    expect(await run).toBe(0);
    expect(printed).toBe('');
    expect(said).toContain('Stopping Relay-E dev before it was ready');
    expect(startCliWorker).not.toHaveBeenCalled();
  });

  it('stops what had started once the running step ends, and starts nothing more', async () => {
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:17233'));
    vi.mocked(startCliWorker).mockImplementation(async () => {
      signalShutdown();
      await sleep(50);
      return fakeWorker();
    });

    expect(await devCommand.run(['--port', '0'])).toBe(0);
    expect(printed).toBe('');
    expect(startApiServer).not.toHaveBeenCalled();
    expect(stopped).toEqual(['worker', 'temporal']);
  });

  it('stops everything in order when the worker fails while the API starts, and fails with its error', async () => {
    const unhandled: unknown[] = [];
    const onUnhandled = (reason: unknown) => unhandled.push(reason);
    process.on('unhandledRejection', onUnhandled);
    vi.mocked(startTemporalDevServer).mockImplementation(temporalStart('127.0.0.1:17233'));
    vi.mocked(startCliWorker).mockImplementation(async () =>
      fakeWorker(sleep(10).then(() => Promise.reject(new Error('crashed')))),
    );
    vi.mocked(startApiServer).mockImplementation(async () => {
      await sleep(100);
      return { url: 'http://127.0.0.1:18787', close: async () => void stopped.push('api') };
    });
    try {
      await expect(devCommand.run(['--port', '0'])).rejects.toThrow('crashed');
      await sleep(10);
      // Before, the failure was an unhandled rejection while the API started: Node's crash, with no orderly stop.
      expect(unhandled).toEqual([]);
      expect(stopped).toEqual(['api', 'client', 'worker', 'temporal']);
      expect(printed).toBe('');
    } finally {
      process.off('unhandledRejection', onUnhandled);
    }
  });
});
