import { mkdir, open, readFile, rename, rm, stat } from 'node:fs/promises';
import { hostname } from 'node:os';
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
/** How long a lock may stay empty while its creator writes who it is. */
const emptyLockGraceMs = 2_000;
/**
 * How old a lock taken on another host (another container sharing the folder) must be to count as abandoned: its pid
 * cannot be checked from here, and a change holds the lock for milliseconds.
 */
const foreignLockStaleMs = 5_000;

/**
 * What a lock file records of its holder: the host its pid belongs to (the host name, and the boot where `/proc` tells
 * it), the pid, and the process's start where `/proc` tells it (see `processStart`).
 */
const lockHolderSchema = z.object({
  host: z.string(),
  pid: z.number().int().positive(),
  started: z.string().optional(),
});

type LockHolder = z.infer<typeof lockHolderSchema>;

/** How a `DemoBankFile` waits for its lock. */
export interface DemoBankFileOptions {
  /**
   * How long a change waits for a lock held by a live process before it fails.
   * @default 10_000
   */
  lockTimeoutMs?: number;
}

/**
 * A demo bank kept in a JSON file, so its balances and the idempotency keys of its transfers survive a restart.
 * Every read loads the file and every change is made under a lock file and written atomically (a temporary
 * file, fsync, rename), so several workers in one folder share one bank.
 */
export class DemoBankFile implements DemoBankAccess {
  readonly file: string;
  readonly #lockTimeoutMs: number;

  constructor(file: string, options: DemoBankFileOptions = {}) {
    this.file = path.resolve(file);
    this.#lockTimeoutMs = options.lockTimeoutMs ?? 10_000;
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

  /**
   * Runs `work` holding `<file>.lock`; a lock left by a process that is gone, or whose pid another process now has, is
   * taken over.
   */
  private async locked<T>(work: () => Promise<T>): Promise<T> {
    const lock = `${this.file}.lock`;
    await mkdir(path.dirname(lock), { recursive: true });
    const deadline = Date.now() + this.#lockTimeoutMs;
    const holder = JSON.stringify(await ownLockHolder());
    for (;;) {
      try {
        const handle = await open(lock, 'wx');
        await handle.writeFile(holder);
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
            `The demo bank stayed locked by ${lock} for ${this.#lockTimeoutMs} ms`,
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

/**
 * True when the lock's holder is gone: its pid no longer runs or now belongs to a process that started later (pids
 * are reused, and a restarted container's worker often gets the very pid its killed predecessor had), the lock stayed
 * empty (its writer died before writing), or it was taken on another host {@link foreignLockStaleMs} ago. Without
 * `/proc` (macOS, Windows) no start is recorded, so a live pid is taken to hold the lock. A lock of an earlier release
 * records a bare pid: one naming this process is abandoned, any other is judged by whether its pid runs.
 */
async function isAbandoned(lock: string): Promise<boolean> {
  const holder = readLockHolder(await readFile(lock, 'utf8').catch(() => ''));
  if (!holder) return (await lockAge(lock)) > emptyLockGraceMs;
  if (holder.host === undefined) {
    // An earlier release's lock: one naming this process was left by an earlier process that had its pid.
    if (holder.pid === process.pid) return true;
  } else if (holder.host !== (await ownLockHolder()).host) {
    return (await lockAge(lock)) > foreignLockStaleMs;
  }
  try {
    process.kill(holder.pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
  if (holder.started === undefined) return false;
  const started = await processStart(holder.pid);
  return started !== undefined && started !== holder.started;
}

/** Milliseconds since the lock was written; 0 once it is gone. */
async function lockAge(lock: string): Promise<number> {
  const modified = await stat(lock).then(
    (stats) => stats.mtimeMs,
    () => Date.now(),
  );
  return Date.now() - modified;
}

function readLockHolder(text: string): (Partial<LockHolder> & { pid: number }) | undefined {
  if (/^\d+$/.test(text.trim())) return { pid: Number(text) };
  const parsed = lockHolderSchema.safeParse(parseJson(text));
  return parsed.success ? parsed.data : undefined;
}

/**
 * When process `pid` started, in clock ticks since boot (`/proc/<pid>/stat` field 22): the same for a process's whole
 * life, later for any process given its pid afterwards. `undefined` without `/proc` or when the process is gone.
 */
async function processStart(pid: number): Promise<string | undefined> {
  const line = await readFile(`/proc/${pid}/stat`, 'utf8').catch(() => undefined);
  // Field 2, the command name in parentheses, may hold spaces and parentheses itself: count from the last `)`.
  const ticks = line?.slice(line.lastIndexOf(')') + 2).split(' ')[19];
  return ticks && /^\d+$/.test(ticks) ? ticks : undefined;
}

let ownHolder: Promise<LockHolder> | undefined;

/** What this process records in the locks it takes, read once. */
function ownLockHolder(): Promise<LockHolder> {
  ownHolder ??= Promise.all([
    readFile('/proc/sys/kernel/random/boot_id', 'utf8').catch(() => undefined),
    processStart(process.pid),
  ]).then(([bootId, started]) => ({
    // A boot id keeps a lock of the previous boot, whose pid may name a process of this one, from counting as local.
    host: bootId ? `${hostname()}/${bootId.trim()}` : hostname(),
    pid: process.pid,
    ...(started === undefined ? {} : { started }),
  }));
  return ownHolder;
}
