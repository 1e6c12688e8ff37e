import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repository = path.join(import.meta.dirname, '..', '..', '..');
const folder = mkdtempSync(path.join(tmpdir(), 'relay-e-cli-path-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** Runs relay_e_ensure_temporal with TEMPORAL_CLI_PATH set; answers its status and the path it settled on. */
function ensureTemporal(cliPath: string): { status: number | null; chosen: string; stderr: string } {
  const result = spawnSync('bash', ['-c', '. scripts/env.sh && relay_e_ensure_temporal && echo "$TEMPORAL_CLI_PATH"'], {
    cwd: repository,
    env: { ...process.env, TEMPORAL_CLI_PATH: cliPath },
    encoding: 'utf8',
  });
  return { status: result.status, chosen: result.stdout.trim(), stderr: result.stderr };
}

describe('relay_e_ensure_temporal given TEMPORAL_CLI_PATH', () => {
  it('uses an executable file it names', () => {
    const binary = path.join(folder, 'temporal');
    writeFileSync(binary, '#!/bin/sh\n');
    chmodSync(binary, 0o755);
    expect(ensureTemporal(binary)).toMatchObject({ status: 0, chosen: binary });
  });

  it('refuses a folder or a missing file, naming it, instead of using another CLI in its place', () => {
    for (const wrong of [folder, path.join(folder, 'missing')]) {
      const { status, chosen, stderr } = ensureTemporal(wrong);
      expect(status).toBe(1);
      expect(chosen).toBe('');
      expect(stderr).toContain(`TEMPORAL_CLI_PATH is ${wrong}, which is not an executable file`);
    }
  });
});
