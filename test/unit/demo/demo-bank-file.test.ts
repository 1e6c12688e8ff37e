import { spawnSync } from 'node:child_process';
import { mkdtemp, readdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { DemoBank } from '../../../src/demo/demo-bank.js';
import { DemoBankFile } from '../../../src/demo/demo-bank-file.js';
import { RelayError } from '../../../src/shared/errors.js';

let folder: string;
let file: string;

beforeEach(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-bank-'));
  file = path.join(folder, '.relay-e', 'demo-bank.json');
});

afterEach(async () => {
  await rm(folder, { recursive: true, force: true });
});

const transfer = (amount: number, key?: string) => (bank: DemoBank) =>
  bank.transfer({ from_account: 'ACC-1', to_account: 'ACC-2', amount_usd: amount }, key);
const balance = (account: string) => (bank: DemoBank) => bank.getBalance(account).balance_usd;

describe('a demo bank kept in a file', () => {
  it('starts from the seeded balances when the file does not exist yet', async () => {
    expect(await new DemoBankFile(file).read(balance('ACC-1'))).toBe(4231.55);
  });

  it('keeps balances and transfers for the next process that opens the same file', async () => {
    await new DemoBankFile(file).update(transfer(100));
    const reopened = new DemoBankFile(file);
    expect(await reopened.read(balance('ACC-1'))).toBe(4131.55);
    expect(await reopened.read(balance('ACC-2'))).toBe(12600);
    const transfers = await reopened.read((bank) => bank.searchTransactions({ merchant: 'Transfer' }));
    expect(transfers.matches.map((entry) => entry.amount_usd).sort()).toEqual([-100, 100]);
  });

  it('remembers idempotency keys across a restart: a retried transfer returns the first receipt and moves nothing', async () => {
    const first = await new DemoBankFile(file).update(transfer(40, 'run_1/call_1'));
    const retried = await new DemoBankFile(file).update(transfer(40, 'run_1/call_1'));
    expect(retried).toEqual(first);
    expect(await new DemoBankFile(file).read(balance('ACC-1'))).toBe(4191.55);
  });

  it('keeps nothing of a change that fails', async () => {
    const bank = new DemoBankFile(file);
    await expect(bank.update(transfer(1_000_000))).rejects.toThrow(/Insufficient funds/);
    expect(await bank.read(balance('ACC-1'))).toBe(4231.55);
  });

  it('loses no transfer when two banks on one file change it at the same time', async () => {
    const [one, two] = [new DemoBankFile(file), new DemoBankFile(file)];
    await Promise.all(
      Array.from({ length: 20 }, (_, index) => (index % 2 === 0 ? one : two).update(transfer(1, `key-${index}`))),
    );
    expect(await one.read(balance('ACC-1'))).toBe(4211.55);
    expect(await readdir(path.dirname(file))).toEqual(['demo-bank.json']);
  });

  it('takes over a lock left by a process that is gone', async () => {
    const gone = spawnSync(process.execPath, ['-e', 'process.stdout.write(String(process.pid))'], { encoding: 'utf8' });
    const bank = new DemoBankFile(file);
    await bank.update(transfer(1));
    await writeFile(`${file}.lock`, gone.stdout);
    await bank.update(transfer(1));
    expect(await bank.read(balance('ACC-1'))).toBe(4229.55);
  });

  it('refuses a file that is not a demo bank with an error that says how to start over', async () => {
    const bank = new DemoBankFile(file);
    await bank.update(transfer(1));
    await writeFile(file, '{"version":2}');
    const error: unknown = await bank.read(balance('ACC-1')).catch((caught: unknown) => caught);
    expect(RelayError.isInstance(error) && error.code).toBe('invalid_input');
    expect((error as Error).message).toContain('delete it to start over');
    expect(await readFile(file, 'utf8')).toBe('{"version":2}');
  });
});
