import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type * as TemporalSettingsModule from '../../../src/cli/temporal-settings.js';
import type { Worker } from '@temporalio/worker';
import { createCliPayloadStore } from '../../../src/cli/cli-payload-store.js';
import type { TemporalSettings } from '../../../src/cli/temporal-settings.js';
import { workerCommand } from '../../../src/cli/worker-command.js';

// What `relay-e worker`'s ready line says of its payload store. Temporal is a stand-in: a connection that opens and a
// worker that runs until the test fails it, which ends the command.

const running = vi.hoisted(() => ({ fail: undefined as ((error: Error) => void) | undefined }));

vi.mock('../../../src/cli/temporal-settings.js', async (importOriginal) => ({
  ...(await importOriginal<typeof TemporalSettingsModule>()),
  connectWorkerConnection: () => Promise.resolve({ plugins: [], close: () => Promise.resolve() }),
}));

vi.mock('../../../src/worker/create-worker.js', () => ({
  createWorker: () => {
    const run = new Promise<void>((_resolve, reject) => (running.fail = reject));
    return Promise.resolve({
      run: () => run,
      getState: () => 'RUNNING',
      shutdown: () => undefined,
    } as unknown as Worker);
  },
}));

const folder = mkdtempSync(path.join(tmpdir(), 'relay-ready-line-'));
const payloads = path.join(folder, 'payloads');
const config = path.join(folder, 'relay-e.config.mjs');
writeFileSync(
  config,
  `export default { tools: [], payloadStore: { kind: 'file', directory: ${JSON.stringify(payloads)} } };\n`,
);
const key = Buffer.alloc(32, 7).toString('base64');

let printed = '';

beforeEach(() => {
  printed = '';
  running.fail = undefined;
  vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    printed += String(chunk);
    return true;
  });
});

afterEach(() => {
  vi.unstubAllEnvs();
  vi.restoreAllMocks();
});

afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Runs `relay-e worker` with these flags until it has printed its ready line, then ends it; returns what it printed. */
async function readyLine(...flags: string[]): Promise<string> {
  const listening = { SIGINT: process.listeners('SIGINT'), SIGTERM: process.listeners('SIGTERM') };
  const command = workerCommand.run(['--config', config, ...flags]);
  await vi.waitFor(() => expect(printed).not.toBe(''));
  running.fail?.(new Error('the test ends the worker'));
  await expect(command).rejects.toThrow('the test ends the worker');
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    for (const listener of process.listeners(signal).filter((added) => !listening[signal].includes(added))) {
      process.off(signal, listener);
    }
  }
  return printed;
}

describe('relay-e worker’s ready line', () => {
  it('names the payload store, its current encryption key and its janitor', async () => {
    vi.stubEnv('RELAY_E_ENCRYPTION_KEYS', `k1:${key},k2:${key}`);
    vi.stubEnv('RELAY_E_ENCRYPTION_KEY_ID', 'k2');

    const line = await readyLine();

    expect(line).toContain(
      `\n  payloads: files in ${payloads}, encrypted (current key k2); janitor every 10 minutes, payloads kept 7 days ` +
        'after their runs close\n',
    );
  });

  it('says payloads are not encrypted without keys, and gives the same facts in its JSON', async () => {
    expect(await readyLine()).toContain(`  payloads: files in ${payloads}, not encrypted; janitor every 10 minutes`);

    printed = '';
    const json = JSON.parse(await readyLine('--json')) as { payloadStore: unknown };

    expect(json.payloadStore).toEqual({
      store: `files in ${payloads}`,
      retentionMs: 7 * 24 * 60 * 60 * 1000,
      janitorIntervalMs: 10 * 60 * 1000,
    });
  });
});

describe('relay-e worker’s shutdown grace on its ready line', () => {
  it('says how long running calls get on a stop: 25 seconds by default, RELAY_E_SHUTDOWN_GRACE when set', async () => {
    expect(await readyLine()).toContain('\n  on stop: running tools and model calls get 25 seconds to finish\n');

    printed = '';
    vi.stubEnv('RELAY_E_SHUTDOWN_GRACE', '90s');
    const json = JSON.parse(await readyLine('--json')) as { shutdownGraceMs: unknown };
    expect(json.shutdownGraceMs).toBe(90_000);
  });
});

describe('relay-e worker’s payload janitor setting', () => {
  it('passes every RELAY_E_PAYLOAD_JANITOR when it is a duration, and runs none when it is off', async () => {
    vi.stubEnv('RELAY_E_PAYLOAD_JANITOR', '30m');
    expect(await readyLine()).toContain('not encrypted; janitor every 30 minutes, payloads kept 7 days');

    printed = '';
    vi.stubEnv('RELAY_E_PAYLOAD_JANITOR', 'off');
    const json = JSON.parse(await readyLine('--json')) as { payloadStore: Record<string, unknown> };
    expect(json.payloadStore).not.toHaveProperty('janitorIntervalMs');

    printed = '';
    expect(await readyLine()).toContain(`  payloads: files in ${payloads}, not encrypted; no janitor\n`);
  });

  it("runs none when the config's payloadJanitorInterval is false, unless the environment sets one", async () => {
    const noJanitor = path.join(folder, 'no-janitor.config.mjs');
    writeFileSync(
      noJanitor,
      `export default { tools: [], payloadJanitorInterval: false, payloadStore: { kind: 'file', directory: ${JSON.stringify(payloads)} } };\n`,
    );

    expect(await readyLine('--config', noJanitor)).toContain('not encrypted; no janitor\n');
    printed = '';
    vi.stubEnv('RELAY_E_PAYLOAD_JANITOR', '1h');
    expect(await readyLine('--config', noJanitor)).toContain('not encrypted; janitor every 1 hour');
  });

  it.each([
    ['soon', "RELAY_E_PAYLOAD_JANITOR 'soon' is not a duration (as '30m' or ms)"],
    ['0s', "RELAY_E_PAYLOAD_JANITOR '0s' must be above zero and at most 24 days, or off"],
    ['30d', "RELAY_E_PAYLOAD_JANITOR '30d' must be above zero and at most 24 days, or off"],
  ])('refuses RELAY_E_PAYLOAD_JANITOR=%s before it connects', async (value, message) => {
    vi.stubEnv('RELAY_E_PAYLOAD_JANITOR', value);

    await expect(workerCommand.run(['--config', config])).rejects.toMatchObject({ code: 'invalid_input', message });
    expect(printed).toBe('');
  });
});

describe('the ready line’s words for a PostgreSQL store', () => {
  const settings: TemporalSettings = {
    address: '127.0.0.1:1',
    namespace: 'default',
    taskQueue: 'relay-e',
    tenantId: 'demo',
    tenantGiven: false,
  };

  it.each([
    {
      form: 'a URL',
      connectionString: 'postgres://relay:hunter2-secret@db.internal:6432/agents?sslmode=require',
      named: 'PostgreSQL relay@db.internal:6432/agents (table relay_payloads)',
    },
    {
      form: 'key=value pairs',
      connectionString: "host=db.internal dbname=agents user=relay password='hunter2-secret'",
      named: 'PostgreSQL relay@db.internal/agents (table relay_payloads)',
    },
  ])('name its user, host and database from $form, never its password', async ({ connectionString, named }) => {
    const project = {
      file: 'relay-e.config.ts',
      config: { tools: [], payloadStore: { kind: 'postgres' as const, connectionString } },
    };

    const store = createCliPayloadStore(settings, project, { defaultFolderShared: false });
    await store.close();

    expect(store.facts.store).toBe(named);
    expect(store.description).not.toContain('hunter2');
  });
});
