import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { freePort } from '../../helpers/free-port.js';
import { relayECliArgs } from '../../helpers/relay-e-process.js';
import { isRunning } from '../../helpers/process-running.js';

let folder: string;
let fakeCli: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-dev-signals-'));
  // A Temporal CLI that starts and never serves, so dev stays in its start-up; it says where it runs.
  fakeCli = path.join(folder, 'temporal');
  await writeFile(fakeCli, '#!/bin/sh\necho $$ > "$FAKE_TEMPORAL_PID_FILE"\nexec sleep 600\n');
  await chmod(fakeCli, 0o755);
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

/** `relay-e dev --json` on free ports with the fake CLI, once that fake server runs: its pid and what dev does. */
async function devStartingUp(name: string) {
  const pidFile = path.join(folder, `${name}.pid`);
  const [temporalPort, uiPort] = [await freePort(), await freePort()];
  const { TEMPORAL_ADDRESS: _address, ...env } = process.env;
  const args = ['dev', '--json', '--temporal-address', `127.0.0.1:${temporalPort}`, '--ui-port', String(uiPort)];
  const child = spawn(process.execPath, [...relayECliArgs, ...args, '--port', '0'], {
    cwd: folder,
    env: {
      ...env,
      TEMPORAL_CLI_PATH: fakeCli,
      FAKE_TEMPORAL_PID_FILE: pidFile,
      RELAY_E_API_KEYS: 'rk_test_0123456789abcdef:demo',
      RELAY_E_ENCRYPTION_KEYS: '',
    },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.once('exit', (code, signal) => resolve({ code, signal })),
  );
  let serverPid: number | undefined;
  for (const deadline = Date.now() + 20_000; serverPid === undefined; await sleep(50)) {
    if (Date.now() > deadline) throw new Error(`the fake Temporal CLI never ran; stderr:\n${stderr}`);
    const text = await readFile(pidFile, 'utf8').catch(() => '');
    if (text.trim() !== '') serverPid = Number(text);
  }
  /** Waits at most `ms` for dev to exit; undefined if it still runs (then it is killed, with the fake server). */
  const exitWithin = async (ms: number) => {
    const exit = await Promise.race([exited, sleep(ms, undefined)]);
    if (exit === undefined) {
      child.kill('SIGKILL');
      if (serverPid !== undefined && isRunning(serverPid)) process.kill(serverPid, 'SIGKILL');
    }
    return exit;
  };
  return { child, serverPid, exitWithin, output: () => ({ stdout, stderr }) };
}

describe('relay-e dev during its start-up', () => {
  it('stops the Temporal server it started on Ctrl-C and exits without printing ready', async () => {
    const dev = await devStartingUp('sigint');
    dev.child.kill('SIGINT');

    // Before, Ctrl-C took effect only after the start (here: its 60 s timeout), then printed ready or failed.
    expect(await dev.exitWithin(10_000), dev.output().stderr).toEqual({ code: 0, signal: null });
    expect(dev.output().stdout).toBe('');
    expect(isRunning(dev.serverPid)).toBe(false);
  }, 40_000);

  it.each(['SIGQUIT', 'SIGUSR2'] as const)(
    'ends on %s, which the Temporal SDK no longer takes to stop the worker, leaving no server behind',
    async (signal) => {
      const dev = await devStartingUp(signal);
      dev.child.kill(signal);

      // Before, the SDK's own hook took the signal (and later stopped the worker on it), so dev went on.
      expect(await dev.exitWithin(10_000)).toEqual({ code: null, signal });
      await expect.poll(() => isRunning(dev.serverPid), { timeout: 5_000 }).toBe(false);
    },
    40_000,
  );
});
