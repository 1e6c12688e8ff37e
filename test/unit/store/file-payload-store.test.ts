import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readFile, readdir, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createFilePayloadStore } from '../../../src/store/file-payload-store.js';
import type { PayloadRef } from '../../../src/store/payload-store.js';
import { describePayloadStoreBehaviour } from './payload-store-behaviour.js';

const sha256Hex = (text: string) => createHash('sha256').update(text).digest('hex');
const payloadsFolder = (directory: string, tenantId: string) => path.join(directory, sha256Hex(tenantId), 'payloads');
const payloadPath = (directory: string, tenantId: string, ref: PayloadRef) =>
  path.join(payloadsFolder(directory, tenantId), ref.slice('sha256:'.length));
const runFile = (directory: string, scope: { tenantId: string; runId: string }, name: string) =>
  path.join(directory, sha256Hex(scope.tenantId), 'runs', sha256Hex(scope.runId), name);
const day = 24 * 60 * 60 * 1000;
const writerScript = path.join(import.meta.dirname, '../../helpers/file-store-writer.ts');

describePayloadStoreBehaviour(
  'file store',
  async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'relay-file-store-'));
    return {
      open: (options) => createFilePayloadStore({ directory, ...options }),
      atRest: {
        read: (tenantId, ref) => readFile(payloadPath(directory, tenantId, ref)),
        write: (tenantId, ref, bytes) => writeFile(payloadPath(directory, tenantId, ref), bytes),
      },
      remove: () => rm(directory, { recursive: true, force: true }),
    };
  },
  { persistent: true },
);

describe('file store', () => {
  const scope = { tenantId: 'acme', runId: 'run-1' };
  let directory: string;

  beforeEach(async () => {
    directory = await mkdtemp(path.join(tmpdir(), 'relay-file-store-'));
  });

  afterEach(async () => {
    await rm(directory, { recursive: true, force: true });
  });

  it('makes its folder when a worker prepares it, and refuses one it cannot make', async () => {
    const nested = path.join(directory, 'state', 'payloads');
    await createFilePayloadStore({ directory: nested }).prepare?.();
    expect((await stat(nested)).isDirectory()).toBe(true);

    await writeFile(path.join(directory, 'a-file'), '');
    const underAFile = createFilePayloadStore({ directory: path.join(directory, 'a-file', 'payloads') });
    await expect(underAFile.prepare?.()).rejects.toMatchObject({ code: 'ENOTDIR' });
  });

  it('keeps a tenant id that looks like a path inside its own hashed folder', async () => {
    const store = createFilePayloadStore({ directory: path.join(directory, 'store') });
    const tenantId = '../../escaped';

    const ref = await store.put({ tenantId, runId: '../run' }, new TextEncoder().encode('contained'));

    expect(await readdir(directory)).toEqual(['store']);
    expect(await readdir(path.join(directory, 'store'))).toEqual([sha256Hex(tenantId)]);
    expect(new TextDecoder().decode(await store.get({ tenantId, runId: 'other' }, ref))).toBe('contained');
  });

  it('never reads the temporary file of an interrupted put, and a later put of the same bytes completes it', async () => {
    const store = createFilePayloadStore({ directory });
    const data = new TextEncoder().encode('a payload whose first write was cut short '.repeat(100));
    const ref = await store.put(scope, data);
    const file = payloadPath(directory, 'acme', ref);
    const record = await readFile(file);
    await rm(file);
    await writeFile(path.join(path.dirname(file), `.partial-${path.basename(file)}-crashed`), record.subarray(0, 100));

    await expect(store.get(scope, ref)).rejects.toMatchObject({ code: 'payload_not_found' });
    expect(await store.put(scope, data)).toBe(ref);
    expect(await store.get(scope, ref)).toEqual(data);
  });

  it('reports a payload file cut short as payload_corrupt, never as fewer bytes', async () => {
    const store = createFilePayloadStore({ directory });
    const ref = await store.put(scope, new TextEncoder().encode('whole'));
    const file = payloadPath(directory, 'acme', ref);
    const record = await readFile(file);

    for (const length of [0, 5, record.length - 1]) {
      await writeFile(file, record.subarray(0, length));
      await expect(store.get(scope, ref)).rejects.toMatchObject({ code: 'payload_corrupt' });
    }
  });

  it('leaves only whole payloads behind a writer killed mid-put', async () => {
    const child = spawn(process.execPath, ['--import', 'tsx', writerScript, directory], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    const returned: string[] = [];
    child.stdout.on('data', (chunk: Buffer) => returned.push(...chunk.toString().split('\n').filter(Boolean)));
    child.once('exit', (code) => expect.fail(`the writer exited by itself with ${code}`));
    // Killed once some puts have returned and, as far as polling can tell, while the next one writes its temporary file.
    await expect.poll(() => returned.length, { timeout: 20_000, interval: 5 }).toBeGreaterThanOrEqual(3);
    await expect
      .poll(
        async () => (await readdir(payloadsFolder(directory, 'acme'))).some((name) => name.startsWith('.partial-')),
        {
          timeout: 5_000,
          interval: 1,
        },
      )
      .toBe(true);
    child.removeAllListeners('exit');
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.kill('SIGKILL');
    await exited;

    const store = createFilePayloadStore({ directory });
    const names = await readdir(payloadsFolder(directory, 'acme'));
    const whole = names.filter((name) => !name.startsWith('.partial-'));
    for (const ref of returned) expect(whole).toContain(ref.slice('sha256:'.length));
    for (const name of whole) {
      const data = await store.get(scope, `sha256:${name}`);
      expect(createHash('sha256').update(data).digest('hex')).toBe(name);
    }
  });

  it('leaves a damaged run record out of the unclosed runs with a warning naming its file, and lists the others', async () => {
    const warnings: string[] = [];
    const store = createFilePayloadStore({ directory, logger: { warn: (line: string) => warnings.push(line) } });
    const ref = await store.put(scope, new TextEncoder().encode('stored'));
    await store.put({ tenantId: 'globex', runId: 'run-2' }, new TextEncoder().encode('stored too'));
    const record = runFile(directory, scope, 'run.json');
    expect(JSON.parse(await readFile(record, 'utf8'))).toMatchObject({ tenantId: 'acme', runId: 'run-1' });

    await writeFile(record, '{"version": 1, "tenantId": "acme"');

    expect((await store.listUnclosedRuns({ limit: 10 })).map((run) => run.runId)).toEqual(['run-2']);
    expect(warnings).toEqual([expect.stringContaining(record)]);
    // The run's uses still keep its payload: an unreadable record never costs a run that may be open its payloads.
    expect(await store.sweep({ now: new Date(Date.now() + 365 * day), retentionMs: day })).toBe(0);
    expect(await store.get(scope, ref)).toEqual(new TextEncoder().encode('stored'));
  });

  it('counts a run whose close mark is damaged as open, with a warning naming the file, until it is marked again', async () => {
    const warnings: string[] = [];
    const store = createFilePayloadStore({ directory, logger: { warn: (line: string) => warnings.push(line) } });
    const ref = await store.put(scope, new TextEncoder().encode('stored'));
    const closedAt = new Date();
    await store.markRunClosed(scope, closedAt);
    const mark = runFile(directory, scope, 'closed');

    await writeFile(mark, 'not a time');

    expect(await store.sweep({ now: new Date(closedAt.getTime() + 2 * day), retentionMs: day })).toBe(0);
    expect(await store.get(scope, ref)).toEqual(new TextEncoder().encode('stored'));
    expect((await store.listUnclosedRuns({ limit: 10 })).map((run) => run.runId)).toEqual(['run-1']);
    expect(warnings).toEqual([expect.stringContaining(mark), expect.stringContaining(mark)]);
    // What a janitor does once Temporal says the run closed: the payload then expires from the real close.
    await store.markRunClosed(scope, closedAt);
    expect(await store.sweep({ now: new Date(closedAt.getTime() + 2 * day), retentionMs: day })).toBe(1);
  });

  it('deletes temporary files older than the retention period when it sweeps, and counts only payloads', async () => {
    const store = createFilePayloadStore({ directory, retentionMs: 1_000 });
    await store.put(scope, new TextEncoder().encode('kept while the run is open'));
    const folder = payloadsFolder(directory, 'acme');
    await mkdir(folder, { recursive: true });
    const stale = path.join(folder, '.partial-stale');
    await writeFile(stale, 'left by a crash');
    // Times from the file's own mtime, not from the clock after writing it: a loaded machine can take milliseconds.
    const { mtimeMs } = await stat(stale);

    expect(await store.sweep({ now: new Date(mtimeMs + 500) })).toBe(0);
    expect(await readdir(folder)).toContain('.partial-stale');
    expect(await store.sweep({ now: new Date(mtimeMs + 2_000) })).toBe(0);
    expect(await readdir(folder)).not.toContain('.partial-stale');
    expect(await readdir(folder)).toHaveLength(1);
  });
});
