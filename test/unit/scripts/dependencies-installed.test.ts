import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const repository = path.join(import.meta.dirname, '..', '..', '..');
const folders: string[] = [];

/** A project folder holding the scripts' env.sh, a lock and, when asked, npm's own copy of it in node_modules. */
function project({ installed }: { installed: boolean }): string {
  const folder = mkdtempSync(path.join(tmpdir(), 'relay-e-deps-'));
  folders.push(folder);
  mkdirSync(path.join(folder, 'scripts'));
  copyFileSync(path.join(repository, 'scripts', 'env.sh'), path.join(folder, 'scripts', 'env.sh'));
  writeFileSync(path.join(folder, 'package-lock.json'), '{"lockfileVersion":3}\n');
  if (installed) {
    mkdirSync(path.join(folder, 'node_modules'));
    writeFileSync(path.join(folder, 'node_modules', '.package-lock.json'), '{}\n');
  }
  return folder;
}

function installed(folder: string): boolean {
  const result = spawnSync('bash', ['-c', '. scripts/env.sh && relay_e_dependencies_installed'], { cwd: folder });
  return result.status === 0;
}

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

describe('relay_e_dependencies_installed (whether the test command runs npm ci)', () => {
  it('reads an install as current by the lock’s content, so a lock only touched later installs nothing', () => {
    const folder = project({ installed: true });
    const lock = path.join(folder, 'package-lock.json');
    utimesSync(lock, 0, 0);
    expect(installed(folder)).toBe(true);
    expect(readFileSync(path.join(folder, 'node_modules', '.relay-e-lock.sha256'), 'utf8')).toMatch(/^[0-9a-f]{64}\n$/);
    utimesSync(lock, new Date(Date.now() + 60_000), new Date(Date.now() + 60_000));
    expect(installed(folder)).toBe(true);
  });

  it('asks for an install when the lock’s content changed, when nothing is installed, or a hand install is older', () => {
    const changed = project({ installed: true });
    utimesSync(path.join(changed, 'package-lock.json'), 0, 0);
    expect(installed(changed)).toBe(true);
    writeFileSync(path.join(changed, 'package-lock.json'), '{"lockfileVersion":3,"packages":{}}\n');
    expect(installed(changed)).toBe(false);

    expect(installed(project({ installed: false }))).toBe(false);

    const stale = project({ installed: true });
    utimesSync(path.join(stale, 'node_modules', '.package-lock.json'), 0, 0);
    expect(installed(stale)).toBe(false);
  });
});
