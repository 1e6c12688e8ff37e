import { spawn } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Connection } from '@temporalio/client';
import { afterAll, afterEach, beforeAll, describe, expect, inject, it } from 'vitest';
import { DevServerPortClashError, startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServerOptions } from '../../src/dev/temporal-dev-server.js';
import { holdPort } from '../helpers/free-port.js';
import { isRunning } from '../helpers/process-running.js';

const root = fileURLToPath(new URL('../..', import.meta.url));

let held: Awaited<ReturnType<typeof holdPort>>;

beforeAll(async () => {
  held = await holdPort();
});

afterAll(() => {
  held.close();
});

/** Starts a dev server that cannot bind, and counts the clashes its output reports (one a start). */
async function failedStart(options: TemporalDevServerOptions): Promise<{ error: unknown; clashes: number }> {
  let clashes = 0;
  const error = await startTemporalDevServer({
    ...options,
    onOutput: (chunk) => (clashes += chunk.match(/address already in use/g)?.length ?? 0),
  }).catch((caught: unknown) => caught);
  return { error, clashes };
}

describe('startTemporalDevServer on a busy port', () => {
  it('starts again on a clash of a port it did not get from its caller, and names the port when every start fails', async () => {
    // The HTTP port comes through extraArgs, so it is not one of the caller's ports the start leaves alone.
    const { error, clashes } = await failedStart({ extraArgs: ['--http-port', String(held.port)] });

    expect(error).toBeInstanceOf(DevServerPortClashError);
    expect((error as DevServerPortClashError).port).toBe(held.port);
    expect(clashes).toBe(3);
  });

  it('gives up at once on a clash of the port its caller chose', async () => {
    const { error, clashes } = await failedStart({ port: held.port });

    expect(error).toBeInstanceOf(DevServerPortClashError);
    expect((error as DevServerPortClashError).port).toBe(held.port);
    expect(clashes).toBe(1);
  });
});

describe('startTemporalDevServer reusing a running server', () => {
  it('checks that server with the credentials it is given, as the worker will connect', async () => {
    const address = inject('temporalAddress');
    await expect(startTemporalDevServer({ reuseAddress: address })).resolves.toMatchObject({ address });

    // The shared dev server speaks plain gRPC: a check over TLS fails on it, which shows the setting is used, and
    // says why at once (before, it was retried until the start timeout, then "did not accept connections"). Before
    // that, the check ignored the setting, and relay-e dev waited out 60 s on a Temporal Cloud address it could reach.
    const overTls = startTemporalDevServer({
      reuseAddress: address,
      reuseCredentials: { tls: true },
      startTimeoutMs: 3_000,
    });
    await expect(overTls).rejects.toThrow(
      `TLS is on for the connection to ${address}, but the server there does not speak TLS`,
    );
  });

  it("fails at once, with the server's answer, for a namespace that server does not have", async () => {
    const address = inject('temporalAddress');
    const started = Date.now();
    // Before, the NOT_FOUND was retried like a server still coming up, for the whole start timeout.
    const missing = startTemporalDevServer({ reuseAddress: address, namespace: 'no-such-namespace' });

    await expect(missing).rejects.toThrow(/refused namespace "no-such-namespace" \(5 NOT_FOUND: .*no-such-namespace/);
    expect(Date.now() - started).toBeLessThan(10_000);
  });
});

/**
 * What a process that starts a persistent dev server does on Ctrl-C (`mode`): `handles` the signal itself like
 * relay-e dev (stops the server when told to, through stdin); `exits` from its handler without calling `stop()`;
 * or has `none` of its own. Ctrl-C is SIGINT to the whole foreground process group, which the script leads.
 */
const signalScript = (mode: 'handles' | 'exits' | 'none') => `
import { startTemporalDevServer } from ${JSON.stringify(pathToFileURL(path.join(root, 'src/dev/temporal-dev-server.ts')).href)};
const server = await startTemporalDevServer({ dbFilename: process.argv[2] });
if (${JSON.stringify(mode)} === 'handles') {
  process.on('SIGINT', () => process.stdout.write('signalled\\n'));
  process.stdin.once('data', () => void server.stop().then(() => process.exit(0)));
}
if (${JSON.stringify(mode)} === 'exits') process.on('SIGINT', () => process.exit(130));
process.stdout.write(JSON.stringify({ pid: server.pid, address: server.address }) + '\\n');
process.kill(-process.pid, 'SIGINT');
`;

async function stopsWithin(pid: number, ms: number): Promise<boolean> {
  for (const deadline = Date.now() + ms; Date.now() < deadline; await sleep(100)) {
    if (!isRunning(pid)) return true;
  }
  return false;
}

/** Whether the server answers a call; with `withinMs`, only one that answers within it (else the call is retried). */
async function serves(address: string, withinMs?: number): Promise<boolean> {
  const connection = Connection.lazy({ address, connectTimeout: 2_000 });
  const ask = () => connection.workflowService.describeNamespace({ namespace: 'default' });
  try {
    await (withinMs === undefined ? ask() : connection.withDeadline(Date.now() + withinMs, ask));
    return true;
  } catch {
    return false;
  } finally {
    await connection.close();
  }
}

describe('startTemporalDevServer on Ctrl-C', () => {
  let folder: string;
  const leftovers: number[] = [];

  beforeAll(async () => {
    folder = await mkdtemp(path.join(tmpdir(), 'relay-e-dev-signal-'));
  });

  afterEach(() => {
    for (const pid of leftovers.splice(0)) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        // already gone
      }
    }
  });

  afterAll(async () => {
    await rm(folder, { recursive: true, force: true });
  });

  /** Runs the script in its own process group, so its Ctrl-C does not reach the test runner. */
  async function runScript(mode: 'handles' | 'exits' | 'none') {
    const script = path.join(folder, `${mode}.mts`);
    await writeFile(script, signalScript(mode));
    const child = spawn(
      process.execPath,
      ['--import', path.join(root, 'node_modules/tsx/dist/loader.mjs'), script, path.join(folder, `${mode}.db`)],
      { detached: true, stdio: ['pipe', 'pipe', 'pipe'] },
    );
    if (child.pid !== undefined) leftovers.push(child.pid);
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
    const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
      child.once('exit', (code, signal) => resolve({ code, signal })),
    );
    const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
    const nextLine = async (): Promise<string> => {
      const next = await lines.next();
      if (next.done) throw new Error(`the ${mode} script ended early; stderr:\n${stderr}`);
      return next.value;
    };
    const server = JSON.parse(await nextLine()) as { pid: number; address: string };
    leftovers.push(server.pid);
    return { child, exited, nextLine, server };
  }

  it('keeps serving a caller that handles the signal itself until it calls stop()', async () => {
    const { child, exited, nextLine, server } = await runScript('handles');
    expect(await nextLine()).toBe('signalled');

    // The caller still needs the server: relay-e dev stops its API and lets its worker finish first. Before, the
    // module's own handler stopped it at once, and a Ctrl-C reached it directly through the process group. So the
    // test keeps asking it, on a new connection each time, from the Ctrl-C until it sends stop itself: for longer
    // than the graceful stop (about 3 s) of a server the Ctrl-C had reached, every answer must come.
    const answers: boolean[] = [];
    const stopAfter = Date.now() + 5_000;
    while (Date.now() < stopAfter) answers.push(await serves(server.address));
    expect(answers.length).toBeGreaterThan(1);
    expect(answers.filter((answered) => !answered)).toEqual([]);
    expect(isRunning(server.pid)).toBe(true);

    child.stdin.end('stop\n');
    expect(await exited).toEqual({ code: 0, signal: null });
    expect(isRunning(server.pid)).toBe(false);
    expect(await serves(server.address, 2_000)).toBe(false);
  });

  it.each(['none', 'exits'] as const)(
    'leaves no server behind a process that exits on the signal (own handling: %s)',
    async (mode) => {
      const { exited, server } = await runScript(mode);

      expect(await exited).toEqual(mode === 'none' ? { code: null, signal: 'SIGINT' } : { code: 130, signal: null });
      // A persistent server gets SIGTERM and finishes its graceful stop (about 3 s) on its own.
      expect(await stopsWithin(server.pid, 20_000)).toBe(true);
    },
  );
});
