import { request } from 'node:http';
import { createServer } from 'node:net';
import type { AddressInfo, Server } from 'node:net';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as TemporalSettingsModule from '../../../src/cli/temporal-settings.js';
import type * as CreatePayloadStoreModule from '../../../src/store/create-payload-store.js';
import { toExitCode } from '../../../src/cli/cli-error.js';
import { codecServerCommand } from '../../../src/cli/codec-server-command.js';
import { serveCommand } from '../../../src/cli/serve-command.js';
import { explainListenError } from '../../../src/cli/server-port.js';
import { waitForShutdownSignal } from '../../../src/cli/shutdown-signal.js';

// `relay-e serve` and `relay-e codec-server` set up: a mistake in a flag or setting is a usage error (exit 2) found
// before anything connects. Connecting to Temporal is a stand-in that records each attempt and finds no server.

const opened = vi.hoisted(() => ({ connects: 0, stores: [] as Array<{ closed: boolean }> }));

vi.mock('../../../src/cli/temporal-settings.js', async (importOriginal) => ({
  ...(await importOriginal<typeof TemporalSettingsModule>()),
  connectRelayClient: () => {
    opened.connects++;
    return Promise.reject(new Error('Failed to connect before the deadline'));
  },
}));

vi.mock('../../../src/cli/shutdown-signal.js', () => ({ waitForShutdownSignal: vi.fn() }));

vi.mock('../../../src/store/create-payload-store.js', async (importOriginal) => {
  const { recordingPayloadStores } = await import('../../helpers/recording-payload-stores.js');
  return recordingPayloadStores(await importOriginal<typeof CreatePayloadStoreModule>(), opened.stores);
});

async function refusal(run: Promise<number>): Promise<{ exitCode: number; message: string }> {
  return run.then(
    () => expect.fail('expected a refusal'),
    (error: unknown) => ({ exitCode: toExitCode(error), message: String(error) }),
  );
}

beforeEach(() => {
  opened.connects = 0;
  opened.stores.length = 0;
  vi.stubEnv('RELAY_E_API_KEYS', 'key-demo-0123456789:demo');
  vi.spyOn(process.stdout, 'write').mockReturnValue(true);
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('relay-e serve', () => {
  it('refuses a port that is not a number before it connects, not as a Temporal it cannot reach', async () => {
    expect(await refusal(serveCommand.run(['--port', 'abc']))).toEqual({
      exitCode: 2,
      message: "CliError: Invalid port 'abc'",
    });
    expect(opened).toEqual({ connects: 0, stores: [] });
  });

  it('refuses an inbox URL that is not http or https before it connects', async () => {
    vi.stubEnv('RELAY_E_INBOX_URL', 'inbox.example.com');

    expect(await refusal(serveCommand.run([]))).toEqual({
      exitCode: 2,
      message: "CliError: RELAY_E_INBOX_URL: The inbox URL 'inbox.example.com' is not an http or https URL",
    });
    expect(opened.connects).toBe(0);
  });

  it('names a keys file that does not exist and where its path came from, exit 2', async () => {
    const refused = await refusal(serveCommand.run(['--api-keys-file', '/nonexistent/relay-e-keys.json']));

    expect(refused).toEqual({
      exitCode: 2,
      message:
        'CliError: API keys file /nonexistent/relay-e-keys.json does not exist: give its path with ' +
        '--api-keys-file PATH or RELAY_E_API_KEYS_FILE',
    });
    expect(opened.connects).toBe(0);
  });

  it('refuses a key shorter than 16 characters before it connects, exit 2, naming its entry and not the key', async () => {
    vi.stubEnv('RELAY_E_API_KEYS', 'key-demo-0123456789:demo,key-acme-012345:acme');
    const refused = await refusal(serveCommand.run([]));

    expect(refused.exitCode).toBe(2);
    expect(refused.message).toContain('RELAY_E_API_KEYS entry 2: key: Expected 16 to 512 characters');
    expect(refused.message).not.toContain('key-acme-012345');
    expect(opened.connects).toBe(0);
  });

  it('says Temporal cannot be reached, exit 5, and closes the payload store it made', async () => {
    expect(await refusal(serveCommand.run(['--address', '127.0.0.1:1']))).toEqual({
      exitCode: 5,
      message: 'CliError: Temporal at 127.0.0.1:1 cannot be reached: Failed to connect before the deadline',
    });
    expect(opened).toEqual({ connects: 1, stores: [{ closed: true }] });
  });

  it('refuses --tenant, which the API would ignore: it takes each caller’s tenant from their key', async () => {
    const refused = await refusal(serveCommand.run(['--tenant', 'acme']));

    expect(refused.exitCode).toBe(2);
    expect(refused.message).toContain("Unknown option '--tenant'");
    expect(serveCommand.help).not.toContain('--tenant');
    expect(opened.connects).toBe(0);
  });
});

describe('relay-e codec-server', () => {
  let busy: Server;

  beforeEach(async () => {
    busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  });

  afterEach(async () => {
    await new Promise((resolve) => busy.close(resolve));
  });

  it('names a busy port with the flag and the variable that move it, exit 2', async () => {
    vi.stubEnv('RELAY_E_ENCRYPTION_KEYS', `k1:${Buffer.alloc(32, 1).toString('base64')}`);
    const { port } = busy.address() as AddressInfo;

    expect(await refusal(codecServerCommand.run(['--port', String(port)]))).toEqual({
      exitCode: 2,
      message:
        `CliError: Port ${port} on 127.0.0.1 is already in use (another relay-e codec-server?). ` +
        'Pick another with --port N or RELAY_E_CODEC_PORT=N (0 picks a free one).',
    });
  });
});

describe('relay-e codec-server’s allowed host names', () => {
  beforeEach(() => {
    vi.stubEnv('RELAY_E_ENCRYPTION_KEYS', `k1:${Buffer.alloc(32, 1).toString('base64')}`);
    vi.stubEnv('RELAY_E_CODEC_TOKENS', '');
    vi.stubEnv('RELAY_E_CODEC_ALLOWED_HOSTS', '');
  });

  /** Runs the command until the returned `stop`, with the statuses it answers `POST /decode` for a Host header. */
  async function startCommand(argv: string[]) {
    let stop = () => {};
    vi.mocked(waitForShutdownSignal).mockReturnValue(new Promise((resolve) => (stop = () => resolve('SIGINT'))));
    const ready = new Promise<string>((resolve) =>
      vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
        resolve(String(chunk));
        return true;
      }),
    );
    const running = codecServerCommand.run(['--port', '0', '--json', ...argv]);
    const { url } = JSON.parse(await Promise.race([ready, running.then(() => expect.fail('it stopped'))])) as {
      url: string;
    };
    const statusFor = (host: string, authorization?: string) =>
      new Promise<number>((resolve, reject) => {
        const headers = { host, 'content-type': 'application/json', ...(authorization ? { authorization } : {}) };
        request(`${url}/decode`, { method: 'POST', headers }, (response) => {
          response.resume();
          resolve(response.statusCode ?? 0);
        })
          .once('error', reject)
          .end('{"payloads":[]}');
      });
    return {
      statusFor,
      stop: () => {
        stop();
        return running;
      },
    };
  }

  it('answers localhost, IP addresses and the names --allowed-host gives, and refuses any other name (403)', async () => {
    const codec = await startCommand(['--allowed-host', 'codec.example.com', '--allowed-host', 'ui.example.com']);
    try {
      expect(await codec.statusFor('codec.example.com')).toBe(200);
      expect(await codec.statusFor('ui.example.com:443')).toBe(200);
      expect(await codec.statusFor('localhost:8788')).toBe(200);
      expect(await codec.statusFor('127.0.0.1:8788')).toBe(200);
      expect(await codec.statusFor('evil.example:8788')).toBe(403);
    } finally {
      expect(await codec.stop()).toBe(0);
    }
  });

  it('takes the names from RELAY_E_CODEC_ALLOWED_HOSTS without --allowed-host, and the flag over it', async () => {
    vi.stubEnv('RELAY_E_CODEC_ALLOWED_HOSTS', 'codec.example.com, ui.example.com');
    const fromEnv = await startCommand([]);
    try {
      expect(await fromEnv.statusFor('ui.example.com')).toBe(200);
      expect(await fromEnv.statusFor('evil.example')).toBe(403);
    } finally {
      await fromEnv.stop();
    }
    const fromFlag = await startCommand(['--allowed-host', 'other.example.com']);
    try {
      expect(await fromFlag.statusFor('other.example.com')).toBe(200);
      expect(await fromFlag.statusFor('ui.example.com')).toBe(403);
    } finally {
      await fromFlag.stop();
    }
  });

  it('answers any name when RELAY_E_CODEC_TOKENS is set and no name is given: a rebinding page has no token', async () => {
    vi.stubEnv('RELAY_E_CODEC_TOKENS', 'ops-token-0123456789');
    const codec = await startCommand([]);
    try {
      expect(await codec.statusFor('codec.cluster.internal', 'Bearer ops-token-0123456789')).toBe(200);
      expect(await codec.statusFor('evil.example')).toBe(401);
    } finally {
      await codec.stop();
    }
  });

  it('refuses an --allowed-host with a scheme or a port before it listens, exit 2', async () => {
    vi.mocked(waitForShutdownSignal).mockClear();
    expect(await refusal(codecServerCommand.run(['--allowed-host', 'https://codec.example.com']))).toEqual({
      exitCode: 2,
      message:
        "CliError: --allowed-host: 'https://codec.example.com' is not a host name; give the name alone, without a " +
        'scheme or a port',
    });
    vi.stubEnv('RELAY_E_CODEC_ALLOWED_HOSTS', 'codec.example.com:443');
    expect(String((await refusal(codecServerCommand.run([]))).message)).toContain(
      "RELAY_E_CODEC_ALLOWED_HOSTS: 'codec.example.com:443' is not a host name",
    );
    expect(waitForShutdownSignal).not.toHaveBeenCalled();
  });
});

describe('explainListenError', () => {
  const listen = { port: 8787, host: '127.0.0.1', hostFromFlag: true };

  it('names the API’s flag and variable unless told another server’s', () => {
    const busy = Object.assign(new Error('listen EADDRINUSE'), { code: 'EADDRINUSE', syscall: 'listen' });

    expect(String(explainListenError(busy, listen))).toBe(
      'CliError: Port 8787 on 127.0.0.1 is already in use (another relay-e dev or serve?). ' +
        'Pick another with --port N or RELAY_E_PORT=N (0 picks a free one).',
    );
  });

  it('names a host name that does not resolve as the variable gave it, exit 2', () => {
    const unresolved = Object.assign(new Error('getaddrinfo ENOTFOUND api.invalid'), {
      code: 'ENOTFOUND',
      syscall: 'getaddrinfo',
    });
    const explained = explainListenError(unresolved, { ...listen, host: 'api.invalid', hostFromFlag: false });

    // Before, Node's own `getaddrinfo ENOTFOUND api.invalid`, exit 1.
    expect(toExitCode(explained)).toBe(2);
    expect(String(explained)).toBe(
      'CliError: Cannot listen on RELAY_E_HOST=api.invalid: the name does not resolve (ENOTFOUND). Give an address ' +
        'of this machine with --host IP or RELAY_E_HOST=IP (127.0.0.1 for this machine only, 0.0.0.0 for every interface).',
    );
  });

  it('names a port this user may not listen on and the flag that moves it, exit 2', () => {
    const denied = Object.assign(new Error('listen EACCES: permission denied 127.0.0.1:80'), {
      code: 'EACCES',
      syscall: 'listen',
    });
    const explained = explainListenError(denied, { ...listen, port: 80 });

    // Before, Node's own `listen EACCES: permission denied`, exit 1.
    expect(toExitCode(explained)).toBe(2);
    expect(String(explained)).toBe(
      'CliError: This user may not listen on port 80 (EACCES: ports below 1024 need privileges). Pick another with ' +
        '--port N or RELAY_E_PORT=N, and put a proxy in front for port 80.',
    );
  });

  it('passes on a listen error that is neither the port’s nor the host’s', () => {
    const denied = Object.assign(new Error('listen EMFILE'), { code: 'EMFILE', syscall: 'listen' });

    expect(explainListenError(denied, listen)).toBe(denied);
  });
});
