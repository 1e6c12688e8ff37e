import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

/** `node` arguments that run the relay-e CLI from source. */
export const relayECliArgs = [
  '--import',
  path.join(root, 'node_modules/tsx/dist/loader.mjs'),
  path.join(root, 'src/cli/main.ts'),
];

/** Starts `relay-e` in the background and hands out its stdout line by line. */
export function spawnRelayE(args: string[], options: { cwd: string; env: NodeJS.ProcessEnv }) {
  const child = spawn(process.execPath, [...relayECliArgs, ...args], {
    env: options.env,
    cwd: options.cwd,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  const lines = createInterface({ input: child.stdout })[Symbol.asyncIterator]();
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return {
    child,
    exited,
    stderr: () => stderr,
    nextLine: async (): Promise<string> => {
      const next = await lines.next();
      if (next.done) throw new Error(`relay-e ${args.join(' ')} ended early; stderr:\n${stderr}`);
      return next.value;
    },
    /** Sends Ctrl-C's SIGINT (unless it has exited) and resolves to the exit code. */
    stop: async (): Promise<number | null> => {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGINT');
      return exited;
    },
  };
}
