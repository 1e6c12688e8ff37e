import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { RelayError } from '../shared/errors.js';
import { DemoBank } from './demo-bank.js';
import type { DemoBankAccess, DemoBankState } from './demo-bank.js';

const receiptSchema = z.object({
  transfer_id: z.string(),
  status: z.literal('completed'),
  from_account: z.string(),
  to_account: z.string(),
  amount_usd: z.number(),
  from_balance_usd: z.number(),
  to_balance_usd: z.number(),
});

const stateSchema = z.object({
  version: z.literal(1),
  balancesCents: z.record(z.string(), z.number().int()),
  transfers: z.array(z.object({ key: z.string(), date: z.string(), receipt: receiptSchema })),
});

const lockRetryMs = 10;
const lockTimeoutMs = 10_000;
/** How long a lock may stay empty while its creator writes its pid. */
const emptyLockGraceMs = 2_000;

/**
 * A demo bank kept in a JSON file, so its balances and the idempotency keys of its transfers survive a restart.
 * Every read loads the file and every change is made under a lock file and written atomically (a temporary
 * file, fsync, rename), so several workers in one folder share one bank.
 */
export class DemoBankFile implements DemoBankAccess {
  readonly file: string;

  constructor(file: string) {
    this.file = path.resolve(file);
  }

  async read<T>(use: (bank: DemoBank) => T): Promise<T> {
    return use(await this.load());
  }

  async update<T>(change: (bank: DemoBank) => T): Promise<T> {
    return this.locked(async () => {
      const bank = await this.load();
      const result = change(bank);
      await this.save(bank.toState());
      return result;
    });
  }

  private async load(): Promise<DemoBank> {
    let text: string;
    try {
      text = await readFile(this.file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return new DemoBank();
      throw error;
    }
    const parsed = stateSchema.safeParse(parseJson(text));
    if (!parsed.success) {
      throw new RelayError(
        'invalid_input',
        `${this.file} does not hold a demo bank (${parsed.error.issues[0]?.message ?? 'invalid'}); delete it to start over`,
      );
    }
    return new DemoBank(parsed.data satisfies DemoBankState);
  }

  private async save(state: DemoBankState): Promise<void> {
    await mkdir(path.dirname(this.file), { recursive: true });
    const temporary = `${this.file}.${process.pid}.tmp`;
    const handle = await open(temporary, 'w');
    try {
      await handle.writeFile(`${JSON.stringify(state, null, 2)}\n`);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temporary, this.file);
  }

  /** Runs `work` holding `<file>.lock`; a lock left by a process that is gone is taken over. */
  private async locked<T>(work: () => Promise<T>): Promise<T> {
    const lock = `${this.file}.lock`;
    await mkdir(path.dirname(lock), { recursive: true });
    const deadline = Date.now() + lockTimeoutMs;
    for (;;) {
      try {
        const handle = await open(lock, 'wx');
        await handle.writeFile(String(process.pid));
        await handle.close();
        break;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
        if (await isAbandoned(lock)) {
          await rm(lock, { force: true });
          continue;
        }
        if (Date.now() > deadline) {
          throw new RelayError(
            'tool_execution_failed',
            `The demo bank stayed locked by ${lock} for ${lockTimeoutMs} ms`,
          );
        }
        await sleep(lockRetryMs);
      }
    }
    try {
      return await work();
    } finally {
      await rm(lock, { force: true });
    }
  }
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

/** True when the lock names a process that no longer runs, or stayed empty (its writer died before writing). */
async function isAbandoned(lock: string): Promise<boolean> {
  const text = await readFile(lock, 'utf8').catch(() => '');
  const pid = Number(text);
  if (text === '' || !Number.isSafeInteger(pid) || pid <= 0) {
    const modified = await stat(lock).then(
      (stats) => stats.mtimeMs,
      () => Date.now(),
    );
    return Date.now() - modified > emptyLockGraceMs;
  }
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
