import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { relayECliArgs, spawnRelayE } from '../helpers/relay-e-process.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// The review's scenarios, run as a user would: a mistake in `worker`'s or `serve`'s settings is a usage error (exit 2)
// said before connecting, not "Temporal unreachable" (exit 5). Nothing listens on the address they are given.
const unreachable = '127.0.0.1:1';
let folder = '';

beforeAll(async () => {
  // No project config here: the worker is the demo's.
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-set-up-'));
});

afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/**
 * Runs `relay-e` to completion in an empty folder with `extra` added to the environment; one still running after 30 s
 * (a server that started) is stopped.
 */
function relayE(args: string[], extra: Record<string, string> = {}): Promise<{ code: number; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [...relayECliArgs, ...args],
      { env: { ...process.env, RELAY_E_API_KEYS: 'key-demo-0123456789:demo', ...extra }, cwd: folder, timeout: 30_000 },
      (error, _stdout, stderr) => {
        resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stderr });
      },
    );
  });
}

describe('relay-e worker and serve set-up mistakes', () => {
  it('worker: an approval webhook URL without its secret is exit 2, before connecting', async () => {
    const worker = await relayE(['worker', '--address', unreachable], {
      RELAY_E_APPROVAL_WEBHOOK_URL: 'https://hooks.example.com/relay',
    });

    expect(worker.code).toBe(2);
    expect(worker.stderr).toContain('RELAY_E_APPROVAL_WEBHOOK_SECRET is not set');
  });

  it('serve: a port that is not a number is exit 2, before connecting', async () => {
    const serve = await relayE(['serve', '--port', 'abc', '--address', unreachable]);

    expect(serve).toEqual({ code: 2, stderr: expect.stringContaining("Invalid port 'abc'") as unknown });
  });

  it('worker and serve: --tenant, which neither uses, is exit 2', async () => {
    const [worker, serve] = await Promise.all([
      relayE(['worker', '--tenant', 'acme', '--address', unreachable]),
      relayE(['serve', '--tenant', 'acme', '--address', unreachable]),
    ]);

    expect(worker).toEqual({ code: 2, stderr: expect.stringContaining("Unknown option '--tenant'") as unknown });
    expect(serve).toEqual({ code: 2, stderr: expect.stringContaining("Unknown option '--tenant'") as unknown });
  });
});

describe('relay-e worker against a Temporal without its namespace', () => {
  it('refuses to start naming the namespace, exit 5 as dev and serve, not 1', async () => {
    const namespace = `relay-prd-${randomUUID().slice(0, 8)}`;

    const worker = await relayE(['worker', '--address', inject('temporalAddress'), '--namespace', namespace]);

    expect(worker).toEqual({ code: 5, stderr: `relay-e worker: Namespace ${namespace} is not found.\n` });
  });
});

describe('relay-e serve against a Temporal without its namespace', () => {
  it('refuses to start with a sentence naming the namespace, exit 5, instead of listening', async () => {
    const address = inject('temporalAddress');
    const namespace = `relay-prd-${randomUUID().slice(0, 8)}`;

    const serve = await relayE(['serve', '--address', address, '--namespace', namespace, '--port', '0']);

    expect(serve).toEqual({
      code: 5,
      stderr:
        `relay-e serve: Temporal at ${address} has no namespace '${namespace}': correct --namespace or ` +
        `TEMPORAL_NAMESPACE, or create it (temporal operator namespace create --namespace ${namespace})\n`,
    });
  });
});

describe('relay-e serve once Temporal cannot be reached', () => {
  it('answers a request 503 temporal_unavailable within a few seconds, not after the SDK’s 20 seconds of retries', async () => {
    const proxy = await startTcpProxy(`http://${inject('temporalAddress')}`);
    const serve = spawnRelayE(['serve', '--address', new URL(proxy.url).host, '--port', '0', '--json'], {
      cwd: folder,
      env: {
        ...process.env,
        RELAY_E_API_KEYS: 'key-demo-0123456789:demo',
        TEMPORAL_NAMESPACE: inject('temporalNamespace'),
      },
    });
    try {
      const { url } = JSON.parse(await serve.nextLine()) as { url: string };
      proxy.refuse();
      const asked = Date.now();

      const response = await fetch(`${url}/v1/runs`, { headers: { authorization: 'Bearer key-demo-0123456789' } });

      // Six attempts: about 3 s of backoff (the SDK's ten take about 20 s).
      expect(Date.now() - asked).toBeLessThan(10_000);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('5');
      expect(await response.json()).toMatchObject({ code: 'temporal_unavailable' });
    } finally {
      await serve.stop();
      await proxy.close();
    }
  });
});
