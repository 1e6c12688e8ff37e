import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { afterAll } from 'vitest';
import { useRelayTestKit } from './relay-test-kit.js';
import type { FileTestKit } from './relay-test-kit.js';

const childWorkers = new Set<ChildProcess>();

/**
 * Sets up a test file whose workers run in child processes: the file's test kit, and after its tests the child
 * workers still alive SIGKILLed before the kit closes (vitest runs `afterAll` hooks in reverse).
 */
export function setUpChildWorkerTests(): FileTestKit {
  const kit = useRelayTestKit();
  afterAll(() => {
    for (const child of childWorkers) child.kill('SIGKILL');
    childWorkers.clear();
  });
  return kit;
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
