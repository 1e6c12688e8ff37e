import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { toExitCode } from '../../../src/cli/cli-error.js';
import { exitCodes } from '../../../src/cli/exit-codes.js';
import { findTemporalExecutable } from '../../../src/dev/temporal-dev-server.js';

let emptyFolder: string;
beforeAll(async () => {
  emptyFolder = await mkdtemp(path.join(tmpdir(), 'relay-e-no-temporal-'));
  await writeFile(path.join(emptyFolder, 'temporal'), 'not executable', { mode: 0o644 });
});
afterAll(async () => {
  await rm(emptyFolder, { recursive: true, force: true });
});
afterEach(() => {
  vi.unstubAllEnvs();
});

/** What `findTemporalExecutable` throws on a machine with no Temporal CLI: TEMPORAL_CLI_PATH unset, none on PATH. */
async function notFound(): Promise<Error> {
  vi.stubEnv('TEMPORAL_CLI_PATH', '');
  vi.stubEnv('PATH', emptyFolder);
  return findTemporalExecutable().then(
    () => {
      throw new Error('a Temporal CLI was found');
    },
    (error: unknown) => error as Error,
  );
}

describe('no Temporal CLI on this machine', () => {
  it('says how to install one in a project that installed the package, and how to point at one', async () => {
    const { message } = await notFound();
    expect(message).toContain('No Temporal CLI found');
    expect(message).toContain('https://docs.temporal.io/cli');
    expect(message).toContain('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
    expect(message).toContain('set TEMPORAL_CLI_PATH');
    // The repository's scripts exist only in a checkout of Relay-E, and are named as such.
    expect(message).not.toMatch(/Run `bash scripts\/test\.sh`/);
    expect(message).toMatch(/In a Relay-E checkout, `\. scripts\/env\.sh && relay_e_ensure_temporal`/);
  });

  it('says the same of a TEMPORAL_CLI_PATH that is not an executable', async () => {
    vi.stubEnv('TEMPORAL_CLI_PATH', path.join(emptyFolder, 'temporal'));
    const failure = findTemporalExecutable();
    await expect(failure).rejects.toThrow(/TEMPORAL_CLI_PATH is .*, which is not an executable file/);
    await expect(failure).rejects.toThrow('go install github.com/temporalio/cli/cmd/temporal@v1.5.1');
  });

  it('says the same of a TEMPORAL_CLI_PATH that names a folder, which passes a plain check for execute permission', async () => {
    // Before, the folder was taken for the CLI, and its spawn failed with EACCES: exit 5 and no install hint.
    vi.stubEnv('TEMPORAL_CLI_PATH', emptyFolder);
    await expect(findTemporalExecutable()).rejects.toThrow(/TEMPORAL_CLI_PATH is .*, which is not an executable file/);
  });

  it('passes over a folder named temporal on PATH', async () => {
    const withFolder = await mkdtemp(path.join(tmpdir(), 'relay-e-temporal-folder-'));
    try {
      await mkdir(path.join(withFolder, 'temporal'));
      vi.stubEnv('TEMPORAL_CLI_PATH', '');
      vi.stubEnv('PATH', withFolder);
      await expect(findTemporalExecutable()).rejects.toThrow('No Temporal CLI found');
    } finally {
      await rm(withFolder, { recursive: true, force: true });
    }
  });

  it('is a set-up problem the CLI exits 2 for, not an unreachable Temporal (5)', async () => {
    expect(toExitCode(await notFound())).toBe(exitCodes.usage);
    expect(exitCodes.usage).toBe(2);
  });
});
