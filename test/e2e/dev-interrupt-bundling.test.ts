import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { isListening } from '../../src/dev/temporal-dev-server.js';
import { freePort } from '../helpers/free-port.js';
import { relayECliArgs } from '../helpers/relay-e-process.js';

let folder: string;
let announceBundling: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-dev-bundling-'));
  // Loaded into dev before its CLI: the SDK's bundler says on stderr when it starts and how it ends, and with
  // SIGINT_WHEN_BUNDLED set, Ctrl-C comes as it ends.
  const bundler = path.join(
    path.dirname(createRequire(import.meta.url).resolve('@temporalio/worker')),
    'workflow/bundler.js',
  );
  announceBundling = path.join(folder, 'announce-bundling.cjs');
  await writeFile(
    announceBundling,
    `const { WorkflowCodeBundler } = require(${JSON.stringify(bundler)});
const createBundle = WorkflowCodeBundler.prototype.createBundle;
WorkflowCodeBundler.prototype.createBundle = function (...args) {
  process.stderr.write('bundling started\\n');
  const bundling = createBundle.apply(this, args);
  bundling.then(
    () => {
      process.stderr.write('bundling finished\\n');
      if (process.env.SIGINT_WHEN_BUNDLED) process.kill(process.pid, 'SIGINT');
    },
    () => process.stderr.write('bundling stopped\\n'),
  );
  return bundling;
};
`,
  );
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** `relay-e dev` starting its own Temporal dev server on free ports, with what it prints. */
function startDev(temporalPort: number, uiPort: number, extraEnv: NodeJS.ProcessEnv = {}) {
  const { TEMPORAL_ADDRESS: _address, ...env } = process.env;
  const args = ['dev', '--temporal-address', `127.0.0.1:${temporalPort}`, '--ui-port', String(uiPort), '--port', '0'];
  const child = spawn(process.execPath, ['--require', announceBundling, ...relayECliArgs, ...args], {
    cwd: folder,
    env: { ...env, ...extraEnv, RELAY_E_API_KEYS: 'rk_test_0123456789abcdef:demo', RELAY_E_ENCRYPTION_KEYS: '' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const bundling = new Promise<void>((resolve) =>
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
      stderr += chunk;
      if (stderr.includes('bundling started\n')) resolve();
    }),
  );
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  /** Waits at most `ms` for dev to exit; undefined if it still runs (then a second signal makes it exit at once). */
  const exitWithin = async (ms: number) => {
    const exit = await Promise.race([exited, sleep(ms, undefined)]);
    if (exit === undefined) {
      child.kill('SIGTERM');
      await exited;
    }
    return exit;
  };
  return { child, bundling, exitWithin, output: () => ({ stdout, stderr }) };
}

describe('relay-e dev interrupted while its worker bundles the workflows', () => {
  it('stops the bundling and the Temporal server it started, and exits without printing ready', async () => {
    const [temporalPort, uiPort] = [await freePort(), await freePort()];
    const dev = startDev(temporalPort, uiPort);
    await Promise.race([
      dev.bundling,
      dev.exitWithin(60_000).then(() => expect.fail(`dev never bundled; stderr:\n${dev.output().stderr}`)),
    ]);
    dev.child.kill('SIGINT');

    expect(await dev.exitWithin(20_000), dev.output().stderr).toEqual({ code: 0, signal: null });
    const { stdout, stderr } = dev.output();
    // Before, Ctrl-C waited for the bundling to finish (seconds), then for the worker to start, and only then stopped.
    expect(stderr).not.toContain('bundling finished');
    expect(stderr).toMatch(/bundling stopped\n[^]*Stopping Relay-E dev before it was ready[^]*Stopped\./);
    expect(stdout).not.toContain('Relay-E dev is ready');
    expect(await isListening('127.0.0.1', temporalPort)).toBe(false);
  }, 90_000);

  it('stops a worker whose bundling has just ended before it polls, and exits without printing ready', async () => {
    const [temporalPort, uiPort] = [await freePort(), await freePort()];
    const dev = startDev(temporalPort, uiPort, { SIGINT_WHEN_BUNDLED: '1' });

    // Before, the stop found the worker not yet RUNNING, left it running, and waited for it: dev never exited.
    expect(await dev.exitWithin(60_000), dev.output().stderr).toEqual({ code: 0, signal: null });
    const { stdout, stderr } = dev.output();
    expect(stderr).toMatch(/bundling finished\n[^]*Stopping Relay-E dev before it was ready[^]*Stopped\./);
    expect(stdout).not.toContain('Relay-E dev is ready');
    expect(await isListening('127.0.0.1', temporalPort)).toBe(false);
  }, 120_000);
});
