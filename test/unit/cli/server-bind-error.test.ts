import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as TemporalSettingsModule from '../../../src/cli/temporal-settings.js';
import type * as CreatePayloadStoreModule from '../../../src/store/create-payload-store.js';
import type { RelayClient } from '../../../src/client/relay-client.js';
import { toExitCode } from '../../../src/cli/cli-error.js';
import { codecServerCommand } from '../../../src/cli/codec-server-command.js';
import { serveCommand } from '../../../src/cli/serve-command.js';
import { waitForShutdownSignal } from '../../../src/cli/shutdown-signal.js';

// `relay-e serve` and `relay-e codec-server` told to listen on an address that is not this machine's. TEST-NET-3
// (RFC 5737) is never an address of a machine, so the real listen fails with EADDRNOTAVAIL; Temporal is a stand-in.

const unboundAddress = '203.0.113.9';
const opened = vi.hoisted(() => ({
  clients: [] as Array<{ closed: boolean }>,
  stores: [] as Array<{ closed: boolean }>,
}));

vi.mock('../../../src/cli/temporal-settings.js', async (importOriginal) => ({
  ...(await importOriginal<typeof TemporalSettingsModule>()),
  connectRelayClient: async () => {
    const client = { closed: false };
    opened.clients.push(client);
    // Its namespace is described at once, as serve asks before it listens.
    const connection = {
      withDeadline: (_deadline: number, call: () => Promise<unknown>) => call(),
      workflowService: { describeNamespace: async () => ({}) },
    };
    const temporal = { connection, options: { namespace: 'default' } };
    return { temporal, close: async () => void (client.closed = true) } as unknown as RelayClient;
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

const giveAnAddress =
  'Give an address of this machine with --host IP or RELAY_E_HOST=IP ' +
  '(127.0.0.1 for this machine only, 0.0.0.0 for every interface).';

beforeEach(() => {
  opened.clients.length = 0;
  opened.stores.length = 0;
  vi.stubEnv('RELAY_E_API_KEYS', 'key-demo-0123456789:demo');
  vi.stubEnv('RELAY_E_HOST', '');
  vi.mocked(waitForShutdownSignal).mockReturnValue(new Promise(() => {}));
  vi.spyOn(process.stdout, 'write').mockReturnValue(true);
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

describe('relay-e serve on an address this machine does not have', () => {
  it('names --host and the address, exit 2, and closes the client and store', async () => {
    const refused = await refusal(serveCommand.run(['--host', unboundAddress, '--port', '0']));

    // Before, Node's own `listen EADDRNOTAVAIL: address not available 203.0.113.9`, exit 1.
    expect(refused).toEqual({
      exitCode: 2,
      message: `CliError: Cannot listen on --host ${unboundAddress}: it is not an address of this machine (EADDRNOTAVAIL). ${giveAnAddress}`,
    });
    expect(opened).toEqual({ clients: [{ closed: true }], stores: [{ closed: true }] });
  });

  it('names RELAY_E_HOST when the variable gave the address', async () => {
    vi.stubEnv('RELAY_E_HOST', unboundAddress);

    expect(await refusal(serveCommand.run(['--port', '0']))).toEqual({
      exitCode: 2,
      message: `CliError: Cannot listen on RELAY_E_HOST=${unboundAddress}: it is not an address of this machine (EADDRNOTAVAIL). ${giveAnAddress}`,
    });
  });
});

describe('relay-e codec-server on an address this machine does not have', () => {
  it('names --host and the address, exit 2', async () => {
    vi.stubEnv('RELAY_E_ENCRYPTION_KEYS', `k1:${Buffer.alloc(32, 1).toString('base64')}`);

    // Before, Node's own `listen EADDRNOTAVAIL: address not available 203.0.113.9`, exit 1.
    expect(await refusal(codecServerCommand.run(['--host', unboundAddress, '--port', '0']))).toEqual({
      exitCode: 2,
      message:
        `CliError: Cannot listen on --host ${unboundAddress}: it is not an address of this machine (EADDRNOTAVAIL). ` +
        'Give an address of this machine with --host IP (127.0.0.1 for this machine only, 0.0.0.0 for every interface).',
    });
  });
});
