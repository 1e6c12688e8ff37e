import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, readlinkSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';

const repository = path.join(import.meta.dirname, '..', '..', '..');
const dockerfile = readFileSync(path.join(repository, 'Dockerfile'), 'utf8');

/** The shell of the Dockerfile's RUN step that links /usr/local/bin/relay-e, joined across its continued lines. */
function linkStep(): string {
  const step = /^RUN (.*(?:\\\n.*)*ln -sf.*)$/m.exec(dockerfile)?.[1];
  if (step === undefined) throw new Error('the Dockerfile has no RUN step that links relay-e');
  return step.replace(/\\\n/g, '\n');
}

const folders: string[] = [];

afterEach(() => {
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** Runs the link step in a folder standing for /app, with a folder standing for /usr/local/bin; returns the link. */
function runLinkStep(app: string): string {
  const bin = path.join(app, 'usr-local-bin');
  mkdirSync(bin);
  const script = linkStep().replaceAll('/usr/local/bin', bin).replaceAll('/app/', `${app}/`);
  execFileSync('sh', ['-c', script], { cwd: app });
  return readlinkSync(path.join(bin, 'relay-e'));
}

function folder(): string {
  const created = mkdtempSync(path.join(tmpdir(), 'relay-image-'));
  folders.push(created);
  return created;
}

function writeFile(file: string): void {
  mkdirSync(path.dirname(file), { recursive: true });
  writeFileSync(file, '');
}

describe('the worker image', () => {
  it('runs node itself as its entry, so a supervisor’s SIGTERM reaches the worker rather than npx', () => {
    const entrypoint = /^ENTRYPOINT (.*)$/m.exec(dockerfile)?.[1];

    // Before: ["npx", "--no-install", "relay-e"], where npm exec took the signal and left node polling.
    expect(JSON.parse(entrypoint ?? 'null')).toEqual(['node', '/usr/local/bin/relay-e']);
  });

  it('links relay-e to the CLI of a project’s @relay-e/engine dependency', () => {
    const app = folder();
    const main = path.join(app, 'node_modules', '@relay-e', 'engine', 'dist', 'src', 'cli', 'main.js');
    writeFile(main);
    mkdirSync(path.join(app, 'node_modules', '.bin'));
    symlinkSync('../@relay-e/engine/dist/src/cli/main.js', path.join(app, 'node_modules', '.bin', 'relay-e'));

    expect(runLinkStep(app)).toBe(main);
  });

  it('links relay-e to this repository’s own build, which has no bin of its own in node_modules', () => {
    const app = folder();
    const main = path.join(app, 'dist', 'src', 'cli', 'main.js');
    writeFile(main);
    mkdirSync(path.join(app, 'node_modules', '.bin'), { recursive: true });

    expect(runLinkStep(app)).toBe(main);
  });

  it('fails the build when there is neither', () => {
    expect(() => runLinkStep(folder())).toThrow();
  });
});
