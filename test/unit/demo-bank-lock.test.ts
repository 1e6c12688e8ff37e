import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, rm, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DemoBank } from '../../src/demo/demo-bank.js';
import { DemoBankFile } from '../../src/demo/demo-bank-file.js';

// In a restarted container pids start over, so the pid a killed worker left in the bank's lock often names a live
// process: the new worker itself, or another. Such a lock is taken over; one whose holder lives is not.

let folder: string;
let file: string;
let lock: string;
const children: ChildProcess[] = [];

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-bank-lock-'));
  file = path.join(folder, 'demo-bank.json');
  lock = `${file}.lock`;
});

afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  await rm(folder, { recursive: true, force: true });
});

const transfer = (bank: DemoBank) => bank.transfer({ from_account: 'ACC-1', to_account: 'ACC-2', amount_usd: 1 });
const balance = (bank: DemoBank) => bank.getBalance('ACC-1').balance_usd;

/** What this process writes in the locks it takes, read from the lock while it holds it. */
async function ownLockRecord(): Promise<Record<string, unknown>> {
  let text = '';
  await new DemoBankFile(file).update(() => {
    text = readFileSync(lock, 'utf8');
  });
  return JSON.parse(text) as Record<string, unknown>;
}

/** Runs `update` and returns how long it took, in milliseconds. */
async function timedTransfer(bank: DemoBankFile): Promise<number> {
  const started = performance.now();
  await bank.update(transfer);
  return performance.now() - started;
}

/** A child process that takes the bank's lock through DemoBankFile and holds it until killed. */
async function lockHolder(): Promise<ChildProcess> {
  const script = path.join(folder, 'hold-lock.mts');
  const bankModule = path.resolve(import.meta.dirname, '../../src/demo/demo-bank-file.ts');
  await writeFile(
    script,
    `import { writeSync } from 'node:fs';
import { DemoBankFile } from ${JSON.stringify(bankModule)};
await new DemoBankFile(process.argv[2]).update(() => {
  writeSync(1, 'holding\\n');
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 60_000);
});
`,
  );
  const child = spawn(process.execPath, ['--import', 'tsx', script, file], { stdio: ['ignore', 'pipe', 'inherit'] });
  children.push(child);
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (chunk: Buffer) => chunk.toString().includes('holding') && resolve());
    child.once('exit', (code) => reject(new Error(`the lock holder exited with ${code} before holding the lock`)));
  });
  return child;
}

const hasProc = existsSync('/proc/self/stat');

describe('the demo bank’s lock', () => {
  it('takes over a lock of an earlier release naming its own pid, which an earlier process with that pid left', async () => {
    const bank = new DemoBankFile(file);
    await writeFile(lock, String(process.pid));

    await bank.update(transfer);
    expect(await bank.read(balance)).toBe(4230.55);
  });

  it.runIf(hasProc)('takes over at once a lock naming its own pid with an earlier start', async () => {
    const bank = new DemoBankFile(file);
    const own = await ownLockRecord();
    await writeFile(lock, JSON.stringify({ ...own, started: String(Number(own['started']) - 1) }));

    // At once: not after the 2 s a lock it cannot read is given to be written.
    expect(await timedTransfer(bank)).toBeLessThan(1_000);
  });

  it.runIf(hasProc)(
    'takes over at once a lock whose pid now belongs to a live process that started after the lock’s writer',
    async () => {
      const own = await ownLockRecord();
      const later = spawn(process.execPath, ['-e', 'setInterval(() => {}, 60_000)'], { stdio: 'ignore' });
      children.push(later);
      await new Promise((resolve) => later.once('spawn', resolve));

      // The lock records this test's start, as its writer's; its pid is now the later process's.
      await writeFile(lock, JSON.stringify({ ...own, pid: later.pid }));
      expect(await timedTransfer(new DemoBankFile(file))).toBeLessThan(1_000);
      expect(later.exitCode).toBeNull();
    },
  );

  it('waits for a lock a live process holds, fails after lockTimeoutMs, and takes it over once it is killed', async () => {
    const holder = await lockHolder();
    expect(JSON.parse(readFileSync(lock, 'utf8'))).toMatchObject({ pid: holder.pid });
    const bank = new DemoBankFile(file, { lockTimeoutMs: 300 });

    await expect(bank.update(transfer)).rejects.toThrow(`The demo bank stayed locked by ${lock} for 300 ms`);
    const exited = new Promise((resolve) => holder.once('exit', resolve));
    holder.kill('SIGKILL');
    await exited;
    await bank.update(transfer);
    expect(await bank.read(balance)).toBe(4230.55);
  }, 30_000);

  it('waits for a fresh lock taken on another host, whose pid it cannot check, and takes over a stale one', async () => {
    const own = await ownLockRecord();
    const bank = new DemoBankFile(file, { lockTimeoutMs: 300 });
    await writeFile(lock, JSON.stringify({ ...own, host: 'another-container' }));

    await expect(bank.update(transfer)).rejects.toThrow('stayed locked');
    const minuteAgo = new Date(Date.now() - 60_000);
    await utimes(lock, minuteAgo, minuteAgo);
    await bank.update(transfer);
    expect(await bank.read(balance)).toBe(4230.55);
  });
});
