import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createPayloadStore } from '../../../src/worker/index.js';

const scope = { tenantId: 'acme', runId: 'run-1' };
const data = new TextEncoder().encode('a model call context');
const plainRef = `sha256:${createHash('sha256').update(data).digest('hex')}`;

describe('createPayloadStore', () => {
  const folders: string[] = [];
  afterEach(async () => {
    await Promise.all(folders.splice(0).map((folder) => rm(folder, { recursive: true, force: true })));
  });

  it('builds a memory store that encrypts and sweeps with the retention the config names', async () => {
    const store = createPayloadStore({ kind: 'memory', encryption: { keys: { k: randomBytes(32) } }, retentionMs: 10 });
    const ref = await store.put(scope, data);
    const closedAt = new Date();
    await store.markRunClosed(scope, closedAt);

    expect(ref).not.toBe(plainRef);
    expect(await store.get(scope, ref)).toEqual(data);
    expect(await store.sweep({ now: new Date(closedAt.getTime() + 11) })).toBe(1);
  });

  it('builds a file store in the folder the config names', async () => {
    const directory = await mkdtemp(path.join(tmpdir(), 'relay-store-config-'));
    folders.push(directory);
    const store = createPayloadStore({ kind: 'file', directory });

    expect(await store.put(scope, data)).toBe(plainRef);
    expect(await readdir(directory)).toHaveLength(1);
    expect(await createPayloadStore({ kind: 'file', directory }).get(scope, plainRef as `sha256:${string}`)).toEqual(
      data,
    );
  });

  it('refuses a file store without a directory and a PostgreSQL one without a connection string, before any use', () => {
    // As a JavaScript caller or a config without types could give them.
    const untyped = (config: object) => () => createPayloadStore(config as Parameters<typeof createPayloadStore>[0]);
    expect(untyped({ kind: 'file' })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    expect(untyped({ kind: 'postgres', connectionString: '' })).toThrow(/needs a connectionString/);
    expect(untyped({ kind: 'postgres' })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
  });
});
