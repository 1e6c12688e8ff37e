import { execFile, execFileSync } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { cp, mkdir, mkdtemp, readdir, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir, userInfo } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Client, Connection, WorkflowFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { freePort, holdPort } from '../helpers/free-port.js';
import type { RunEvent, RunSnapshot } from '../../src/shared/run-types.js';
import { spawnRelayE as spawnRelayEProcess } from '../helpers/relay-e-process.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cliArgs = ['--import', path.join(root, 'node_modules/tsx/dist/loader.mjs'), path.join(root, 'src/cli/main.ts')];
const taskQueue = `cli-${randomUUID()}`;

function cliEnv(extra: Record<string, string> = {}): NodeJS.ProcessEnv {
  return { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), RELAY_E_TASK_QUEUE: taskQueue, ...extra };
}

/** Runs `relay-e` to completion, from the repository's root unless told otherwise. */
function relayE(
  args: string[],
  options: { env?: NodeJS.ProcessEnv; cwd?: string; stdin?: string; cliArgs?: string[] } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [...(options.cliArgs ?? cliArgs), ...args],
      { env: options.env ?? cliEnv(), cwd: options.cwd ?? root },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
        resolve({ code, stdout, stderr });
      },
    );
    child.stdin?.end(options.stdin ?? '');
  });
}

/** Starts `relay-e` in the background and hands out its stdout line by line. */
function spawnRelayE(args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}) {
  return spawnRelayEProcess(args, { env: options.env ?? cliEnv(), cwd: options.cwd ?? root });
}

type RunLine = { runId: string; event: RunEvent } | { runId: string; snapshot: RunSnapshot };

async function readUntil(next: () => Promise<string>, predicate: (line: RunLine) => boolean): Promise<RunLine> {
  for (;;) {
    const line = JSON.parse(await next()) as RunLine;
    if (predicate(line)) return line;
  }
}

async function balanceOf(account: string): Promise<number> {
  const { code, stdout } = await relayE(['run', '--json', `balance of ${account}`]);
  expect(code).toBe(0);
  const lines = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as RunLine);
  const succeeded = lines.find((line) => 'event' in line && line.event.type === 'tool_succeeded');
  if (!succeeded || !('event' in succeeded) || succeeded.event.type !== 'tool_succeeded') throw new Error(stdout);
  return (succeeded.event.output as { balance_usd: number }).balance_usd;
}

async function stopChild(child: ChildProcess, exited: Promise<unknown>): Promise<void> {
  if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
  await exited;
}

let worker: ReturnType<typeof spawnRelayE>;
let workerFolder: string;

beforeAll(async () => {
  // The worker keeps its demo bank under the folder it runs in: a fresh one per test file.
  workerFolder = await mkdtemp(path.join(tmpdir(), 'relay-e-cli-worker-'));
  worker = spawnRelayE(['worker', '--json'], { cwd: workerFolder });
  expect(JSON.parse(await worker.nextLine())).toMatchObject({ status: 'ready', taskQueue });
});

afterAll(async () => {
  await stopChild(worker.child, worker.exited);
  await rm(workerFolder, { recursive: true, force: true });
});

describe('relay-e run, approve and reject (scripts)', () => {
  it('waits for an approval given by relay-e approve, then reports the transfer and exits 0', async () => {
    const before = await balanceOf('ACC-3');
    const run = spawnRelayE(['run', '--json', '--no-interactive', 'transfer 50 from ACC-1 to ACC-3']);
    const awaiting = await readUntil(
      run.nextLine,
      (line) => 'event' in line && line.event.type === 'tool_awaiting_approval',
    );
    if (!('event' in awaiting) || awaiting.event.type !== 'tool_awaiting_approval') throw new Error('unreachable');
    expect(awaiting.event).toMatchObject({ toolName: 'transfer_funds', input: { amount_usd: 50 } });

    const { runId, event } = awaiting;
    // A decision made on another request of the call (a run id used again, say) is refused; this request's is not.
    const unreadable = await relayE(['approve', runId, event.toolCallId, '--requested-at', 'yesterday']);
    expect(unreadable.code).toBe(2);
    expect(unreadable.stderr).toContain('--requested-at needs a time');
    const stale = await relayE(['approve', runId, event.toolCallId, '--requested-at', '2026-01-01T00:00:00Z']);
    expect(stale.code).toBe(4);
    expect(stale.stderr).toContain('not at 2026-01-01T00:00:00.000Z: the decision was made on another request');
    const requestedAt = ['--requested-at', event.at];
    const approve = await relayE(['approve', runId, event.toolCallId, ...requestedAt, '--reason', 'ok', '--json']);
    expect(approve.code).toBe(0);
    expect(JSON.parse(approve.stdout)).toMatchObject({ decision: 'approve', toolName: 'transfer_funds' });

    const end = await readUntil(run.nextLine, (line) => 'snapshot' in line);
    expect(await run.exited).toBe(0);
    expect('snapshot' in end && end.snapshot.status).toBe('completed');
    expect('snapshot' in end && end.snapshot.output).toContain('Transferred $50.00');
    expect(await balanceOf('ACC-3')).toBeCloseTo(before + 50, 2);
  });

  it('tells the model about a rejection made with relay-e reject, and moves no money', async () => {
    const before = await balanceOf('ACC-2');
    const run = spawnRelayE(['run', '--json', '--no-interactive', 'transfer 75 from ACC-2 to ACC-3']);
    const awaiting = await readUntil(
      run.nextLine,
      (line) => 'event' in line && line.event.type === 'tool_awaiting_approval',
    );
    if (!('event' in awaiting) || awaiting.event.type !== 'tool_awaiting_approval') throw new Error('unreachable');

    const bad = await relayE(['approve', awaiting.runId, awaiting.event.toolCallId, '--input', '{"amount_usd":-1}']);
    expect(bad.code).toBe(4);
    expect((await relayE(['reject', awaiting.runId, awaiting.event.toolCallId, '--reason', 'too much'])).code).toBe(0);

    const end = await readUntil(run.nextLine, (line) => 'snapshot' in line);
    expect(await run.exited).toBe(0);
    expect('snapshot' in end && end.snapshot.output).toContain('rejected');
    expect(await balanceOf('ACC-2')).toBe(before);
  });

  it('lists runs by status with relay-e runs, the waiting call with relay-e approvals, and a timeline with relay-e inspect', async () => {
    const run = spawnRelayE([
      'run',
      '--json',
      '--no-interactive',
      '--tenant',
      'cli-list',
      'transfer 5 from ACC-1 to ACC-2',
    ]);
    const awaiting = await readUntil(
      run.nextLine,
      (line) => 'event' in line && line.event.type === 'tool_awaiting_approval',
    );
    const { runId } = awaiting;

    await expect
      .poll(
        async () =>
          JSON.parse(
            (await relayE(['runs', '--json', '--tenant', 'cli-list', '--status', 'awaiting_approval'])).stdout,
          ) as Array<{ runId: string }>,
        { timeout: 10_000 },
      )
      .toEqual([
        expect.objectContaining({ runId, status: 'awaiting_approval', tenantId: 'cli-list', pendingApprovalCount: 1 }),
      ]);
    // Scoped to the project's task queue: another project's commands list none of its runs or waiting calls.
    const otherProject = ['--tenant', 'cli-list', '--task-queue', `${taskQueue}-other`];
    expect(JSON.parse((await relayE(['runs', '--json', ...otherProject])).stdout)).toEqual([]);
    expect(JSON.parse((await relayE(['approvals', '--json', ...otherProject])).stdout)).toMatchObject({
      approvals: [],
    });

    const inspect = await relayE(['inspect', runId, '--json']);
    expect(inspect.code).toBe(0);
    const shown = JSON.parse(inspect.stdout) as { snapshot: RunSnapshot; events: RunEvent[] };
    const { snapshot, events } = shown;
    expect(snapshot.pendingApprovals).toHaveLength(1);
    // The worker is not versioned: nothing is said of a version.
    expect(snapshot).not.toHaveProperty('versioning');
    expect(events.map((event) => event.type)).toEqual([
      'run_started',
      'model_responded',
      'tool_call_validated',
      'tool_awaiting_approval',
    ]);
    const readable = await relayE(['inspect', runId]);
    expect(readable.stdout).toContain(
      `npm run relay-e -- approve ${runId} ${snapshot.pendingApprovals[0]?.toolCallId ?? ''}`,
    );

    // The tenant's waiting calls, exactly as the run's snapshot has them; another tenant sees none of them.
    const approvals = await relayE(['approvals', '--json', '--tenant', 'cli-list']);
    expect(approvals.code).toBe(0);
    expect(JSON.parse(approvals.stdout)).toEqual({
      approvals: snapshot.pendingApprovals.map((pending) => ({
        ...pending,
        runId,
        model: snapshot.model,
        ...(snapshot.userId !== undefined ? { userId: snapshot.userId } : {}),
      })),
      unanswered: [],
      hasMore: false,
    });
    const table = await relayE(['approvals', '--tenant', 'cli-list']);
    expect(table.stdout).toMatch(
      new RegExp(`^${runId}\\s+${snapshot.pendingApprovals[0]?.toolCallId ?? ''}\\s+transfer_funds\\s`, 'm'),
    );
    expect((await relayE(['approvals', '--json', '--tenant', 'cli-other'])).stdout.trim()).toBe(
      JSON.stringify({ approvals: [], unanswered: [], hasMore: false }),
    );

    await relayE(['reject', runId, snapshot.pendingApprovals[0]?.toolCallId ?? '']);
    expect(await run.exited).toBe(0);
  });

  it('exits 3 for an unknown run and 2 for a bad flag or an argument a command does not take', async () => {
    expect((await relayE(['inspect', 'run_does_not_exist'])).code).toBe(3);
    expect((await relayE(['runs', '--status', 'sleeping'])).code).toBe(2);
    expect((await relayE(['run', '--frobnicate', 'hi'])).code).toBe(2);
    // Before, `runs acme` dropped the argument and listed every tenant's runs.
    expect((await relayE(['runs', 'acme'])).code).toBe(2);
  });

  it("prints each command's own help for --help or -h anywhere before --, without touching Temporal", async () => {
    const commands = [
      'dev',
      'run',
      'approve',
      'reject',
      'approvals',
      'runs',
      'inspect',
      'worker',
      'serve',
      'codec-server',
    ];
    const helps = await Promise.all(commands.map((command) => relayE([command, '--help'])));
    helps.forEach(({ code, stdout }, index) => {
      expect(code, commands[index]).toBe(0);
      expect(stdout, commands[index]).toMatch(new RegExp(`^Usage: (npm run )?relay-e (-- )?${commands[index]} `));
    });
    const short = await relayE(['approve', 'run_1', '-h', '--frobnicate']);
    expect(short).toMatchObject({ code: 0, stdout: helps[2]?.stdout });
    // After --, `--help` is a run id like any other.
    expect((await relayE(['inspect', '--', '--help'])).code).toBe(3);
  }, 180_000);
});

/** Polls `relay-e inspect` until the run waits for an approval, and returns that call's id. */
async function pendingCallOf(runId: string): Promise<string> {
  let toolCallId: string | undefined;
  await expect
    .poll(
      async () => {
        const inspect = await relayE(['inspect', runId, '--json']);
        if (inspect.code !== 0) return undefined;
        toolCallId = (JSON.parse(inspect.stdout) as { snapshot: RunSnapshot }).snapshot.pendingApprovals[0]?.toolCallId;
        return toolCallId;
      },
      { timeout: 20_000 },
    )
    .toBeDefined();
  return toolCallId ?? '';
}

/** A project that installed the package: its sources under node_modules/@relay-e/engine, the dependencies beside them. */
async function installInProject(): Promise<{ project: string; cliArgs: string[] }> {
  const project = await mkdtemp(path.join(tmpdir(), 'relay-e-project-'));
  const installed = path.join(project, 'node_modules', '@relay-e', 'engine');
  await mkdir(installed, { recursive: true });
  await writeFile(path.join(project, 'package.json'), '{"name":"shop","private":true,"type":"module"}\n');
  for (const entry of ['package.json', 'src', 'workflows', 'activities']) {
    await cp(path.join(root, entry), path.join(installed, entry), { recursive: true });
  }
  for (const entry of await readdir(path.join(root, 'node_modules'))) {
    if (entry === '.bin' || entry === '@relay-e') continue;
    await symlink(path.join(root, 'node_modules', entry), path.join(project, 'node_modules', entry));
  }
  return { project, cliArgs: [cliArgs[0] ?? '', cliArgs[1] ?? '', path.join(installed, 'src/cli/main.ts')] };
}

describe('relay-e worker and a run it cannot serve', () => {
  // Started with the plain Temporal client, as a service may: nothing asks the workers' catalog at the door, so
  // the worker is the one that refuses.
  it('fails the run with one run_failed event and logs one line for it, with no stack trace', async () => {
    const connection = await Connection.connect({ address: inject('temporalAddress') });
    try {
      const client = new Client({ connection });
      const workflowId = `cannot-serve-${randomUUID()}`;
      const handle = await client.workflow.start('agentRun', {
        taskQueue,
        workflowId,
        args: [{ tenantId: 'default', model: 'nobody:serves', prompt: 'hi' }],
      });
      const failure = await handle.result().then(
        () => undefined,
        (error: unknown) => error,
      );
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect((failure as WorkflowFailedError).cause).toMatchObject({ type: 'model_not_configured' });

      const inspect = await relayE(['inspect', workflowId, '--json']);
      const events = (JSON.parse(inspect.stdout) as { events: RunEvent[] }).events;
      expect(events).toEqual([expect.objectContaining({ seq: 1, type: 'run_failed', code: 'model_not_configured' })]);
      await expect.poll(() => worker.stderr().includes(workflowId), { timeout: 10_000 }).toBe(true);
      const lines = worker.stderr().split('\n');
      expect(lines.filter((line) => line.includes(workflowId))).toEqual([
        expect.stringMatching(
          /\[WARN\] Workflow failed workflowId=cannot-serve-\S+ workflowType=agentRun error=.*No model provider 'nobody'/,
        ),
      ]);
      expect(lines.filter((line) => /^\s+at /.test(line))).toEqual([]);
    } finally {
      await connection.close();
    }
  });
});

describe('relay-e for a newcomer', () => {
  it('prints hints with `npm run relay-e --` in a clone of the repository, where plain relay-e is not on PATH', async () => {
    expect((await relayE(['--help'])).stdout).toContain('Usage: npm run relay-e -- <command> [options]');
    const noPrompt = await relayE(['run']);
    expect(noPrompt.code).toBe(2);
    expect(noPrompt.stderr).toContain('e.g. npm run relay-e -- run "balance of ACC-1"');
    expect((await relayE(['inspect', '--bogus'])).stderr).toContain("See 'npm run relay-e -- inspect --help'.");
  });

  it('prints hints with `npx relay-e` in a project that installed the package', async () => {
    const { project, cliArgs: installedCli } = await installInProject();
    try {
      const help = await relayE(['--help'], { cwd: project, cliArgs: installedCli });
      expect(help.stdout).toContain('Usage: npx relay-e <command> [options]');
      const noPrompt = await relayE(['run'], { cwd: project, cliArgs: installedCli });
      expect(noPrompt.stderr).toContain('e.g. npx relay-e run "balance of ACC-1"');
    } finally {
      await rm(project, { recursive: true, force: true });
    }
  });

  it('prints only the run id with run --detach, so RUN=$(relay-e run --detach …) works', async () => {
    const detached = await relayE(['run', '--detach', 'balance of ACC-1']);
    expect(detached.code).toBe(0);
    expect(detached.stdout).toMatch(/^run_[0-9a-f-]{36}\n$/);
    expect((await relayE(['inspect', detached.stdout.trim()])).code).toBe(0);
  });

  it('reads the prompt from standard input with run -', async () => {
    const { code, stdout } = await relayE(['run', '--json', '-'], { stdin: 'balance of ACC-3\n' });
    expect(code).toBe(0);
    const end = JSON.parse(stdout.trim().split('\n').at(-1) ?? '') as { snapshot: RunSnapshot };
    expect(end.snapshot.output).toContain('ACC-3 (Joint Checking) has');
    expect((await relayE(['run', '-'], { stdin: '  \n' })).stderr).toContain('standard input held no prompt');
  });

  it('lists runs newest first, a finished run started later before an older one that still waits', async () => {
    const tenant = `cli-order-${randomUUID().slice(0, 8)}`;
    const older = (
      await relayE(['run', '--detach', '--tenant', tenant, 'transfer 5 from ACC-1 to ACC-2'])
    ).stdout.trim();
    const olderCall = await pendingCallOf(older);
    const newer = await relayE(['run', '--json', '--tenant', tenant, 'balance of ACC-1']);
    expect(newer.code).toBe(0);
    const newerId = (JSON.parse(newer.stdout.split('\n')[0] ?? '') as { runId: string }).runId;
    await expect
      .poll(
        async () =>
          (JSON.parse((await relayE(['runs', '--json', '--tenant', tenant])).stdout) as Array<{ runId: string }>).map(
            (run) => run.runId,
          ),
        { timeout: 10_000 },
      )
      .toEqual([newerId, older]);
    expect((await relayE(['reject', older, olderCall])).code).toBe(0);
  });

  it("says in runs --help what it does without --tenant: every tenant's runs, newest first", async () => {
    const { stdout } = await relayE(['runs', '--help']);
    expect(stdout).toContain('Lists the newest runs first');
    expect(stdout).toContain('default: runs of every tenant');
    expect(stdout).not.toContain('default demo');
  });

  it("records the OS account's name as the approver when $USER is unset, as the help says", async () => {
    const runId = (await relayE(['run', '--detach', 'transfer 1 from ACC-1 to ACC-2'])).stdout.trim();
    const toolCallId = await pendingCallOf(runId);
    const { USER: _user, ...withoutUser } = cliEnv();
    expect((await relayE(['approve', runId, toolCallId], { env: withoutUser })).code).toBe(0);
    const { events } = JSON.parse((await relayE(['inspect', runId, '--json'])).stdout) as { events: RunEvent[] };
    expect(events.find((event) => event.type === 'tool_approved')).toMatchObject({ approver: userInfo().username });
    expect((await relayE(['approve', '--help'])).stdout).toContain("default $USER, else this OS account's name");
  });
});

describe('relay-e run in a terminal', () => {
  const keeper = `relay-e-keeper-${randomUUID().slice(0, 8)}`;
  beforeAll(() => {
    try {
      execFileSync('tmux', ['-V']);
    } catch {
      throw new Error(
        'tmux is required for the interactive CLI tests and was not found. Install it: ' +
          '`apt-get update && apt-get install -y tmux` (Debian/Ubuntu) or `brew install tmux` (macOS).',
      );
    }
    // tmux's server exits with its last session, so one test's close could race the next test's start ("server
    // exited unexpectedly"): a session of the block's own keeps the server up until the block ends.
    execFileSync('tmux', ['new-session', '-d', '-s', keeper, 'sleep 3600']);
  });
  afterAll(() => {
    execFileSync('tmux', ['kill-session', '-t', keeper]);
  });

  async function startInTmux(...args: string[]) {
    const session = `relay-e-${randomUUID().slice(0, 8)}`;
    const quoted = [process.execPath, ...cliArgs, 'run', ...args].map((arg) => `'${arg}'`).join(' ');
    const command = `env TEMPORAL_ADDRESS='${inject('temporalAddress')}' RELAY_E_TASK_QUEUE='${taskQueue}' ${quoted}; echo "EXIT=$?"; sleep 600`;
    execFileSync('tmux', ['new-session', '-d', '-s', session, '-x', '220', '-y', '60', '-c', root, command]);
    const screen = () => execFileSync('tmux', ['capture-pane', '-p', '-J', '-t', session], { encoding: 'utf8' });
    const waitFor = async (text: string) => {
      const deadline = Date.now() + 30_000;
      while (!screen().includes(text)) {
        if (Date.now() > deadline) throw new Error(`'${text}' never appeared; the screen shows:\n${screen()}`);
        await sleep(100);
      }
      return screen();
    };
    const keys = (...keys: string[]) => execFileSync('tmux', ['send-keys', '-t', session, ...keys]);
    const close = () => execFileSync('tmux', ['kill-session', '-t', session]);
    return { waitFor, keys, close };
  }

  it('asks before the transfer, runs it on y and prints the answer', async () => {
    const before = await balanceOf('ACC-2');
    const terminal = await startInTmux('transfer 50 from ACC-1 to ACC-2');
    try {
      const prompt = await terminal.waitFor('[y]es/[n]o/[e]dit');
      expect(prompt).toContain('Approve transfer_funds {"from_account":"ACC-1","to_account":"ACC-2","amount_usd":50}?');
      terminal.keys('y', 'Enter');
      const screen = await terminal.waitFor('EXIT=');
      expect(screen).toContain('Transferred $50.00 from ACC-1 to ACC-2');
      expect(screen).toContain('EXIT=0');
    } finally {
      terminal.close();
    }
    expect(await balanceOf('ACC-2')).toBeCloseTo(before + 50, 2);
  });

  it('closes the prompt when the call is decided elsewhere, and follows the run to its end', async () => {
    const terminal = await startInTmux('transfer 5 from ACC-1 to ACC-2');
    try {
      const prompt = await terminal.waitFor('[y]es/[n]o/[e]dit');
      const runId = /Run (run_\S+) started/.exec(prompt)?.[1] ?? '';
      const toolCallId = /tool_awaiting_approval\s+transfer_funds \[(\S+)\]/.exec(prompt)?.[1] ?? '';
      expect((await relayE(['reject', runId, toolCallId, '--reason', 'not today'])).code).toBe(0);
      const screen = await terminal.waitFor('EXIT=');
      expect(screen).toContain('The call no longer waits for a decision: the prompt is closed.');
      expect(screen).toMatch(/tool_rejected\s+transfer_funds/);
      expect(screen).toContain('EXIT=0');
    } finally {
      terminal.close();
    }
  });

  it('reads a prompt typed on the terminal after run -, up to Ctrl-D', async () => {
    const terminal = await startInTmux('-');
    try {
      await terminal.waitFor('end it with Ctrl-D');
      terminal.keys('balance of ACC-1', 'Enter', 'C-d');
      const screen = await terminal.waitFor('EXIT=');
      expect(screen).toContain('ACC-1 (Everyday Checking) has');
      expect(screen).toContain('EXIT=0');
    } finally {
      terminal.close();
    }
  });

  it('runs the call with the input edited at the prompt', async () => {
    const before = await balanceOf('ACC-3');
    const terminal = await startInTmux('transfer 50 from ACC-2 to ACC-3');
    try {
      await terminal.waitFor('[y]es/[n]o/[e]dit');
      terminal.keys('e', 'Enter');
      await terminal.waitFor('Input as JSON');
      terminal.keys('C-u', '{"from_account":"ACC-2","to_account":"ACC-3","amount_usd":7}', 'Enter');
      const screen = await terminal.waitFor('EXIT=');
      expect(screen).toContain('edited to {"from_account":"ACC-2","to_account":"ACC-3","amount_usd":7}');
      expect(screen).toContain('Transferred $7.00 from ACC-2 to ACC-3');
    } finally {
      terminal.close();
    }
    expect(await balanceOf('ACC-3')).toBeCloseTo(before + 7, 2);
  });
});

describe('relay-e dev', () => {
  it('starts Temporal with its UI, a worker and the API, serves the printed key and stops cleanly on Ctrl-C', async () => {
    const workdir = await mkdtemp(path.join(tmpdir(), 'relay-e-dev-'));
    const [temporalPort, uiPort] = [await freePort(), await freePort()];
    const { TEMPORAL_ADDRESS: _address, RELAY_E_API_KEYS: _keys, ...env } = process.env;
    const dev = spawnRelayE(
      ['dev', '--temporal-address', `127.0.0.1:${temporalPort}`, '--ui-port', String(uiPort), '--port', '0'],
      { cwd: workdir, env },
    );
    try {
      let printed = '';
      while (!printed.includes('Ctrl-C stops')) printed += `${await dev.nextLine()}\n`;
      const apiUrl = /API\s+(http:\/\/\S+)/.exec(printed)?.[1];
      const apiKey = /API key\s+(\S+)/.exec(printed)?.[1];
      expect(printed).toContain(`Temporal UI  http://127.0.0.1:${uiPort}`);
      expect(printed).toContain(`curl -s -X POST ${apiUrl}/v1/runs`);
      expect(printed).toContain('run --address');
      if (!apiUrl || !apiKey) throw new Error(printed);

      expect((await fetch(`${apiUrl}/healthz`)).status).toBe(200);
      // The check below could not fail if it missed the running server: it sees it now.
      expect(temporalProcessesOn(temporalPort)).toHaveLength(1);
      const started = await fetch(`${apiUrl}/v1/runs`, {
        method: 'POST',
        headers: { authorization: `Bearer ${apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify({ model: 'scripted:demo', prompt: 'balance of ACC-1' }),
      });
      expect(started.status).toBe(201);
      const { runId } = (await started.json()) as { runId: string };
      await expect
        .poll(
          async () => {
            const response = await fetch(`${apiUrl}/v1/runs/${runId}`, {
              headers: { authorization: `Bearer ${apiKey}` },
            });
            return ((await response.json()) as RunSnapshot).output;
          },
          { timeout: 20_000 },
        )
        .toContain('ACC-1 (Everyday Checking) has');

      dev.child.kill('SIGINT');
      expect(await dev.exited).toBe(0);
      expect(temporalProcessesOn(temporalPort)).toEqual([]);
    } finally {
      await stopChild(dev.child, dev.exited);
      await rm(workdir, { recursive: true, force: true });
    }
  });

  it('names the busy Web UI port and the flag that moves it, and exits 2', async () => {
    const workdir = await mkdtemp(path.join(tmpdir(), 'relay-e-dev-busy-'));
    const held = await holdPort();
    const uiPort = held.port;
    const temporalPort = await freePort();
    const { TEMPORAL_ADDRESS: _address, RELAY_E_API_KEYS: _keys, ...env } = process.env;
    try {
      const args = ['dev', '--temporal-address', `127.0.0.1:${temporalPort}`, '--ui-port', String(uiPort)];
      const { code, stderr } = await relayE([...args, '--port', '0'], { cwd: workdir, env });
      expect(stderr).toContain(`the Web UI port ${uiPort}: change it with --ui-port N`);
      expect(code).toBe(2);
      expect(temporalProcessesOn(temporalPort)).toEqual([]);
    } finally {
      held.close();
      await rm(workdir, { recursive: true, force: true });
    }
  });
});

/** Temporal dev servers listening on `port` (`relay-e dev` passes its address's port as `--port N`). */
function temporalProcessesOn(port: number): string[] {
  return execFileSync('ps', ['-eo', 'pid,args'], { encoding: 'utf8' })
    .split('\n')
    .filter((line) => line.includes('start-dev') && new RegExp(`--port ${port}(\\s|$)`).test(line));
}
