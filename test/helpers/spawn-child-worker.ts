import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';

const childWorkers = new Set<ChildProcess>();

/** Registers an `afterAll` hook in the calling test file that SIGKILLs the child workers still alive. */
export function killChildWorkersAfterAll(): void {
  afterAll(() => {
    for (const child of childWorkers) child.kill('SIGKILL');
    childWorkers.clear();
  });
}

/** Starts a TypeScript worker script in its own process and resolves once it prints `ready`. */
export function spawnChildWorker(script: string, env: Record<string, string>): Promise<ChildProcess> {
  const child = spawn(process.execPath, ['--import', 'tsx', script], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  childWorkers.add(child);
  return new Promise((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`child worker exited early with ${code}`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve(child);
    });
  });
}

/** SIGKILLs a child worker and resolves once it is gone. */
export function killChildWorker(child: ChildProcess): Promise<void> {
  return new Promise((resolve) => {
    child.removeAllListeners('exit');
    child.once('exit', () => resolve());
    child.kill('SIGKILL');
    childWorkers.delete(child);
  });
}
