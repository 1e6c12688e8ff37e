import { execFile } from 'node:child_process';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { promisify } from 'node:util';
import { beforeAll, describe, expect, it } from 'vitest';

const repository = path.resolve(import.meta.dirname, '../../..');
const read = (file: string) => readFileSync(path.join(repository, file), 'utf8');

/** What `npm pack` puts in the tarball, listed without building or packing anything. */
async function packedFiles(): Promise<string[]> {
  const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--ignore-scripts'], {
    cwd: repository,
    maxBuffer: 16 * 1024 * 1024,
  });
  const [pack] = JSON.parse(stdout) as Array<{ files: Array<{ path: string }> }>;
  return pack?.files.map((file) => file.path) ?? [];
}

/** The relative link targets of a Markdown file, resolved from the repository's root, without their anchors. */
function linkTargets(markdownFile: string): string[] {
  return [...read(markdownFile).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((match) => (match[1] ?? '').replace(/#.*$/, ''))
    .filter((target) => target !== '' && !/^[a-z]+:/i.test(target))
    .map((target) => path.posix.normalize(path.posix.join(path.posix.dirname(markdownFile), target)));
}

let packed: string[];

beforeAll(async () => {
  packed = await packedFiles();
}, 60_000);

describe('the package’s file list', () => {
  it('ships the licence package.json names', () => {
    expect(packed).toContain('LICENSE');
    expect(JSON.parse(read('package.json'))).toMatchObject({ license: 'MIT' });
    expect(read('LICENSE')).toMatch(/^MIT License\n\nCopyright \(c\) \d{4} /);
  });

  it('ships docker-compose.yml, its Dockerfile and every folder the compose file bind-mounts', () => {
    expect(packed).toEqual(expect.arrayContaining(['docker-compose.yml', 'Dockerfile', '.dockerignore']));
    const mounted = [...read('docker-compose.yml').matchAll(/^\s*-\s*\.\/([^:\s]+):/gm)].map((match) => match[1] ?? '');
    expect(mounted).toContain('deploy/temporal');
    for (const folder of mounted) {
      const inRepository = filesUnder(folder);
      expect(inRepository.length).toBeGreaterThan(0);
      expect(packed).toEqual(expect.arrayContaining(inRepository));
    }
  });

  it('ships every doc and example that the shipped Markdown links to', () => {
    const markdown = packed.filter((file) => file.endsWith('.md'));
    expect(markdown).toEqual(expect.arrayContaining(['README.md', 'docs/your-own-project.md', 'docs/mcp.md']));
    const targets = markdown
      .flatMap(linkTargets)
      .filter((target) => target.startsWith('docs/') || target.startsWith('examples/'));
    expect(targets).toContain('examples/approval-flow.ts');
    const missing = targets.filter(
      (target) => !packed.includes(target) && !packed.some((file) => file.startsWith(`${target.replace(/\/$/, '')}/`)),
    );
    expect(missing).toEqual([]);
  });

  it('leaves out the state a run of Relay-E keeps in .relay-e folders', () => {
    expect(packed.filter((file) => file.split('/').includes('.relay-e'))).toEqual([]);
  });
});

/** The files under a folder of the repository, as paths from its root. */
function filesUnder(folder: string): string[] {
  return readdirSync(path.join(repository, folder), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => path.relative(repository, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'))
    .sort();
}
