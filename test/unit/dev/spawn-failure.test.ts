import { chmod, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTemporalDevServer } from '../../../src/dev/temporal-dev-server.js';

let folder: string;
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-spawn-failure-'));
});
afterAll(async () => {
  await rm(folder, { recursive: true, force: true });
});

const hookedEvents = ['SIGINT', 'SIGTERM', 'SIGHUP', 'SIGQUIT', 'SIGUSR2', 'exit'] as const;

function listenerCounts(): number[] {
  return hookedEvents.map((event) => process.listenerCount(event));
}

describe('startTemporalDevServer when the CLI cannot be spawned', () => {
  it('fails with the spawn error and leaves no exit or signal hooks behind', async () => {
    // An executable file the OS cannot run: its interpreter does not exist, so spawn emits 'error' and never 'exit'.
    const cli = path.join(folder, 'temporal');
    await writeFile(cli, '#!/nonexistent/interpreter\n');
    await chmod(cli, 0o755);
    const before = listenerCounts();

    await expect(startTemporalDevServer({ executablePath: cli, dbFilename: path.join(folder, 'db') })).rejects.toThrow(
      `Could not run ${cli}: spawn ${cli} ENOENT`,
    );
    // Before, the child stayed tracked as live, so its SIGINT/SIGTERM/SIGHUP and exit hooks stayed for good.
    await expect.poll(listenerCounts).toEqual(before);
  });
});
