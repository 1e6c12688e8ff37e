import { mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';

const lock = path.join(tmpdir(), 'relay-e-default-ports.lock');

/**
 * Runs `work` holding the machine's lock on Temporal's default ports (7233, 8233, 8787). The walkthrough's `npm start`
 * needs them free, and a worker given no connection connects to 7233: test files doing either run in parallel
 * workers, so each takes this lock (a directory, made atomically) rather than meet the other on those ports.
 */
export async function withDefaultPorts<T>(work: () => Promise<T>): Promise<T> {
  while (!(await tryTakeLock())) await sleep(250);
  try {
    return await work();
  } finally {
    await rm(lock, { recursive: true, force: true });
  }
}

async function tryTakeLock(): Promise<boolean> {
  try {
    await mkdir(lock);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    // A holder that died without releasing it (a killed test run) leaves it behind: take it over.
    if (await holderIsGone()) await rm(lock, { recursive: true, force: true });
    return false;
  }
  await writeFile(path.join(lock, 'pid'), String(process.pid));
  return true;
}

async function holderIsGone(): Promise<boolean> {
  const pid = Number(await readFile(path.join(lock, 'pid'), 'utf8').catch(() => ''));
  // No pid yet: the holder is between making the lock and writing its pid.
  if (!Number.isInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
    return false;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'ESRCH';
  }
}
