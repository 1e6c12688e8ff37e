import { spawn } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { freePort } from '../helpers/free-port.js';
import type { RunSnapshot } from '../../src/shared/run-types.js';

const root = fileURLToPath(new URL('../..', import.meta.url));
const cliArgs = ['--import', path.join(root, 'node_modules/tsx/dist/loader.mjs'), path.join(root, 'src/cli/main.ts')];

let workdir: string;
let temporalPort: number;
let uiPort: number;

beforeAll(async () => {
  workdir = await mkdtemp(path.join(tmpdir(), 'relay-e-restart-'));
  [temporalPort, uiPort] = [await freePort(), await freePort()];
});

afterAll(async () => {
  await rm(workdir, { recursive: true, force: true });
});

/** `relay-e dev --json` in the test's folder, on the same Temporal port every time, once it says it is ready. */
async function startDev() {
  const { TEMPORAL_ADDRESS: _address, RELAY_E_API_KEYS: _keys, ...env } = process.env;
  const child = spawn(
    process.execPath,
    [
      ...cliArgs,
      'dev',
      '--json',
      '--temporal-address',
      `127.0.0.1:${temporalPort}`,
      '--ui-port',
      String(uiPort),
      '--port',
      '0',
    ],
    { cwd: workdir, env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const exited = new Promise<number | null>((resolve) => child.once('exit', resolve));
  const first = await createInterface({ input: child.stdout })[Symbol.asyncIterator]().next();
  if (first.done) throw new Error(`relay-e dev ended before it was ready; stderr:\n${stderr}`);
  const ready = JSON.parse(first.value) as { apiUrl: string; apiKey: string };
  const call = async (method: 'GET' | 'POST', route: string, body?: unknown) => {
    const response = await fetch(`${ready.apiUrl}${route}`, {
      method,
      headers: { authorization: `Bearer ${ready.apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as Record<string, unknown> };
  };
  const snapshotWhen = async (runId: string, predicate: (snapshot: RunSnapshot) => boolean) => {
    let snapshot: RunSnapshot | undefined;
    await expect
      .poll(
        async () => predicate((snapshot = (await call('GET', `/v1/runs/${runId}`)).body as unknown as RunSnapshot)),
        {
          timeout: 30_000,
        },
      )
      .toBe(true);
    return snapshot as RunSnapshot;
  };
  const stop = async () => {
    child.kill('SIGINT');
    expect(await exited).toBe(0);
  };
  return { call, snapshotWhen, stop };
}

async function transfer(dev: Awaited<ReturnType<typeof startDev>>, amount: number) {
  const started = await dev.call('POST', '/v1/runs', {
    model: 'scripted:demo',
    prompt: `transfer ${amount} from ACC-1 to ACC-2`,
  });
  expect(started.status).toBe(201);
  const runId = started.body['runId'] as string;
  const waiting = await dev.snapshotWhen(runId, (snapshot) => snapshot.pendingApprovals.length === 1);
  return { runId, toolCallId: waiting.pendingApprovals[0]?.toolCallId ?? '' };
}

it('applies a transfer approved after a restart of relay-e dev to the balances the earlier transfers left', async () => {
  const first = await startDev();
  let pending: { runId: string; toolCallId: string };
  try {
    const done = await transfer(first, 100);
    expect((await first.call('POST', `/v1/runs/${done.runId}/approve`, { toolCallId: done.toolCallId })).status).toBe(
      200,
    );
    await first.snapshotWhen(done.runId, (snapshot) => snapshot.status === 'completed');
    pending = await transfer(first, 50);
  } finally {
    await first.stop();
  }
  const kept = JSON.parse(await readFile(path.join(workdir, '.relay-e', 'demo-bank.json'), 'utf8')) as {
    balancesCents: Record<string, number>;
  };
  expect(kept.balancesCents).toMatchObject({ 'ACC-1': 413_155, 'ACC-2': 1_260_000 });

  const second = await startDev();
  try {
    const approved = await second.call('POST', `/v1/runs/${pending.runId}/approve`, {
      toolCallId: pending.toolCallId,
    });
    expect(approved.status).toBe(200);
    const end = await second.snapshotWhen(pending.runId, (snapshot) => snapshot.status === 'completed');
    expect(end.output).toContain('New balances: ACC-1 $4,081.55, ACC-2 $12,650.00.');
  } finally {
    await second.stop();
  }
}, 180_000);
