import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import { relayECliArgs, spawnRelayE } from '../helpers/relay-e-process.js';

/**
 * The CLI as an adopter runs it against a server that is not the default one: every command is given `--address`
 * and `--task-queue`, and nothing in the environment says either, so a hint that leaves them out reaches another
 * server (or none).
 */
const taskQueue = `cli-hints-${randomUUID()}`;
let address: string;
let connection: string[];
let workdir: string;
let worker: ReturnType<typeof spawnRelayE>;

/** The environment with no Temporal or Relay-E connection setting, so only flags choose the server. */
function bareEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  const env = { ...process.env, ...extra };
  for (const name of ['TEMPORAL_ADDRESS', 'TEMPORAL_NAMESPACE', 'TEMPORAL_PROFILE', 'RELAY_E_TASK_QUEUE']) {
    delete env[name];
  }
  delete env['RELAY_E_TENANT'];
  delete env['RELAY_E_API_KEYS'];
  return env;
}

function relayE(
  args: string[],
  env: NodeJS.ProcessEnv = bareEnv(),
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(process.execPath, [...relayECliArgs, ...args], { env, cwd: workdir }, (error, stdout, stderr) => {
      resolve({ code: error === null ? 0 : typeof error.code === 'number' ? error.code : 1, stdout, stderr });
    });
  });
}

/**
 * The arguments of a printed `relay-e <command> …` hint, without the invocation before the command's name, up to the
 * next hint on its line (`|`), and without the optional flags it shows in brackets.
 */
function hintArgs(line: string, command: 'approve' | 'reject' | 'inspect'): string[] {
  const at = line.indexOf(` ${command} `);
  if (at < 0) throw new Error(`No '${command}' hint in: ${line}`);
  return (line.slice(at + 1).split('|')[0] ?? '').split(/\s+/).filter((word) => word !== '' && !word.startsWith('['));
}

beforeAll(async () => {
  address = inject('temporalAddress');
  connection = ['--address', address, '--task-queue', taskQueue];
  workdir = await mkdtemp(path.join(tmpdir(), 'relay-e-cli-hints-'));
  worker = spawnRelayE(['worker', '--json', ...connection], { cwd: workdir, env: bareEnv() });
  expect(JSON.parse(await worker.nextLine())).toMatchObject({ status: 'ready', taskQueue });
});

afterAll(async () => {
  await worker?.stop();
  await rm(workdir, { recursive: true, force: true });
});

describe('hints of commands given --address and --task-queue', () => {
  it('relay-e run, approvals and inspect print approve/reject commands that work as printed', async () => {
    const run = spawnRelayE(['run', '--no-interactive', ...connection, 'transfer 5 from ACC-1 to ACC-2'], {
      cwd: workdir,
      env: bareEnv(),
    });
    try {
      let line = '';
      while (!line.includes('  reject:')) line = await run.nextLine();
      expect(line).toContain(`reject --address ${address} --task-queue ${taskQueue} run_`);
      const runId = /\b(run_\S+)/.exec(line)?.[1] ?? '';

      const approvals = await relayE(['approvals', ...connection]);
      expect(approvals.code).toBe(0);
      const decide = approvals.stdout.split('\n').find((text) => text.startsWith('  approve:')) ?? '';
      expect(decide).toContain(`approve --address ${address} --task-queue ${taskQueue} <run> <call>`);

      const inspect = await relayE(['inspect', runId, ...connection]);
      expect(inspect.code).toBe(0);
      const pending = inspect.stdout.split('\n').find((text) => text.includes(' approve ')) ?? '';
      // The approve command exactly as inspect printed it, with no environment to fall back on.
      const approve = await relayE(hintArgs(pending, 'approve'));
      expect(approve.stderr).toBe('');
      expect(approve.code).toBe(0);
      expect(approve.stdout).toContain(`Approved transfer_funds`);
      expect(await run.exited).toBe(0);
    } finally {
      await run.stop();
    }
  });
});

describe('relay-e dev on a Temporal server it reuses', () => {
  it('carries its flags into the printed run command, and says on Ctrl-C it stops the API and worker, not Temporal', async () => {
    const devQueue = `${taskQueue}-dev`;
    const dev = spawnRelayE(['dev', '--temporal-address', address, '--task-queue', devQueue, '--port', '0'], {
      cwd: workdir,
      env: bareEnv(),
    });
    try {
      let printed = '';
      while (!printed.includes('Ctrl-C stops')) printed += `${await dev.nextLine()}\n`;
      expect(printed).toContain('(an existing server, reused)');
      expect(printed).toContain(`run --address ${address} --task-queue ${devQueue} "transfer`);
      expect(printed).toContain('Ctrl-C stops the API and the worker; the reused Temporal server keeps running');
      expect(await dev.stop()).toBe(0);
      expect(dev.stderr()).toContain('Stopping Relay-E dev: API, worker; the reused Temporal server keeps running');
      expect(dev.stderr()).not.toContain('worker, Temporal');
    } finally {
      await dev.stop();
    }
  });
});

describe('relay-e dev with no Temporal CLI to start a server with', () => {
  it('says how to install one and exits 2, a set-up problem, not 5 (Temporal unreachable)', async () => {
    const port = await freePort();
    const env = bareEnv({ PATH: path.dirname(process.execPath) });
    delete env['TEMPORAL_CLI_PATH'];
    const { code, stderr } = await relayE(['dev', '--temporal-address', `127.0.0.1:${port}`, '--port', '0'], env);
    expect(stderr).toContain('No Temporal CLI found');
    expect(stderr).toContain('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
    expect(stderr).not.toMatch(/Run `bash scripts\/test\.sh`/);
    expect(code).toBe(2);
  });
});
