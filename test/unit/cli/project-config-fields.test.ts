import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadProjectConfig } from '../../../src/cli/project-config.js';
import { createPayloadStore } from '../../../src/store/create-payload-store.js';
import type { PayloadStoreConfig } from '../../../src/store/create-payload-store.js';

let folder = '';
beforeAll(async () => {
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-config-fields-'));
});
afterAll(() => rm(folder, { recursive: true, force: true }));

/** Loads a JavaScript config (no tsx, as a `.ts` one is: without type checking) whose default export is `fields`. */
async function load(name: string, fields: string): Promise<unknown> {
  const file = path.join(folder, `${name}.config.mjs`);
  await writeFile(file, `export default { tools: [], ${fields} };\n`);
  return loadProjectConfig(file, folder).catch((error: unknown) => error);
}

describe('a project config', () => {
  it.each([
    ['a misspelt field', "taskqueue: 'orders'", 'unknown field taskqueue (known: tools, models, executor'],
    ['an empty task queue', "taskQueue: ''", "'taskQueue' must be a non-empty string"],
    ['a payload store of an unknown kind', "payloadStore: { kind: 'postgresql' }", 'not kind "postgresql"'],
    ['a duration that is neither text nor a number', 'modelCallStartTimeout: {}', "must be a duration ('30s')"],
    ['a webhook that is neither an object nor a function', "approvalWebhook: 'https://x'", 'must be a webhook'],
  ])('refuses %s, naming the field', async (name, fields, named) => {
    const refused = await load(name.replaceAll(' ', '-'), fields);
    expect(refused).toBeInstanceOf(Error);
    expect((refused as Error).message).toContain(named);
  });

  it('loads one whose fields are all of their kinds', async () => {
    const fields = "taskQueue: 'orders', payloadStore: { kind: 'memory' }, modelCallStartTimeout: '30s'";
    expect(await load('good', fields)).toMatchObject({ config: { taskQueue: 'orders' } });
  });
});

describe('createPayloadStore', () => {
  it('refuses a kind it does not know instead of answering with no store', () => {
    const config = { kind: 'postgresql', connectionString: 'postgres://x' } as unknown as PayloadStoreConfig;
    expect(() => createPayloadStore(config)).toThrow(
      "Unknown payload store kind \"postgresql\": expected 'memory', 'file' or 'postgres'",
    );
  });
});
