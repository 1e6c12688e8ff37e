import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exitCodes, toExitCode } from '../../../src/cli/cli-error.js';
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

/** A 32-byte key, as base64. */
const key = `'${Buffer.alloc(32).toString('base64')}'`;

async function expectRefused(name: string, fields: string, named: string): Promise<void> {
  const refused = await load(name.replaceAll(' ', '-'), fields);
  expect(refused).toBeInstanceOf(Error);
  expect((refused as Error).message).toContain(named);
  expect(toExitCode(refused)).toBe(exitCodes.usage);
}

describe('a project config', () => {
  it.each([
    ['a misspelt field', "taskqueue: 'orders'", 'unknown field taskqueue (known: tools, models, executor'],
    ['an empty task queue', "taskQueue: ''", "'taskQueue' must be a non-empty string"],
    ['a payload store of an unknown kind', "payloadStore: { kind: 'postgresql' }", 'not kind "postgresql"'],
    ['a duration that is neither text nor a number', 'modelCallStartTimeout: {}', "must be a duration ('30s')"],
    ['text that is not a duration', "remindApproversBeforeExpiry: 'an hour'", "'an hour' is not a duration"],
    ['a webhook that is neither an object nor a function', "approvalWebhook: 'https://x'", 'must be a webhook'],
  ])('refuses %s, naming the field', expectRefused);

  it('loads one whose fields are all of their kinds', async () => {
    const fields = "taskQueue: 'orders', payloadStore: { kind: 'memory' }, modelCallStartTimeout: '30s'";
    expect(await load('good', fields)).toMatchObject({ config: { taskQueue: 'orders' } });
  });
});

describe("a project config's payload store", () => {
  it.each([
    [
      'a misspelt connection string',
      "{ kind: 'postgres', connectionstring: 'postgres://db.internal/relay' }",
      "'payloadStore' has unknown field connectionstring (known: kind, connectionString, tableName",
    ],
    ['no connection string', "{ kind: 'postgres' }", "'payloadStore.connectionString' must be a non-empty string"],
    [
      'a table name that is not text',
      "{ kind: 'postgres', connectionString: 'postgres://x', tableName: 1 }",
      "'payloadStore.tableName' must be a non-empty string",
    ],
    [
      'a misspelt folder',
      "{ kind: 'file', dir: 'payloads' }",
      "'payloadStore' has unknown field dir (known: kind, directory",
    ],
    ['no folder', "{ kind: 'file' }", "'payloadStore.directory' must be a non-empty string"],
    [
      'a field of another kind',
      "{ kind: 'memory', directory: 'payloads' }",
      "'payloadStore' has unknown field directory",
    ],
    [
      'a byte bound that is not a number',
      "{ kind: 'memory', maxBytes: '64MB' }",
      "'payloadStore.maxBytes' must be a positive",
    ],
    [
      'a retention that is not milliseconds',
      "{ kind: 'file', directory: 'payloads', retentionMs: '7d' }",
      "'payloadStore.retentionMs': A payload retention period must be 0 or more milliseconds",
    ],
    [
      'misspelt keys of its own',
      "{ kind: 'file', directory: 'payloads', encryption: { key: {} } }",
      "'payloadStore.encryption' has unknown field key",
    ],
  ])('refuses %s, naming the field', (name, store, named) => expectRefused(name, `payloadStore: ${store}`, named));

  it.each([
    ['postgres', `{ kind: 'postgres', connectionString: 'postgres://db.internal/relay', tableName: 'relay_payloads' }`],
    ['file', `{ kind: 'file', directory: 'payloads', retentionMs: 0, encryption: { keys: { k1: ${key} } } }`],
    ['memory', "{ kind: 'memory', maxBytes: 1024 }"],
  ])('loads a %s store with its fields', async (kind, store) => {
    expect(await load(`good-${kind}`, `payloadStore: ${store}`)).toMatchObject({ config: { payloadStore: { kind } } });
  });
});

describe("a project config's models and encryption", () => {
  it.each([
    [
      'a provider factory left uncalled',
      'models: { openai: function openaiProvider() { return { async generate() {} }; } }',
      "'models.openai' is a function, not a model provider; call the factory: openaiProvider(...)",
    ],
    ['a model name for a provider', "models: { openai: 'gpt-4.1' }", "'models.openai' must be a model provider"],
    [
      'misspelt keys',
      `encryption: { key: { k1: ${key} } }`,
      "'encryption' has unknown field key (known: keys, currentKeyId)",
    ],
    ['no keys', 'encryption: {}', "'encryption.keys' must map key ids to AES-256 keys"],
    ['a key that is not text or bytes', 'encryption: { keys: { k1: 32 } }', "'encryption.keys' must map key ids"],
    [
      'a current key id that is not text',
      `encryption: { keys: { k1: ${key} }, currentKeyId: 1 }`,
      "'encryption.currentKeyId' must be a non-empty string",
    ],
    [
      'a key that is too short',
      "encryption: { keys: { k1: 'AAAA' } }",
      "'encryption': Encryption key 'k1' must be 32 bytes",
    ],
    [
      'a current key id not among the keys',
      `encryption: { keys: { k1: ${key} }, currentKeyId: 'k2' }`,
      "'encryption': The current encryption key id 'k2' is not among the keys (k1)",
    ],
  ])('refuses %s, naming the field', expectRefused);

  it('loads model providers and keys of their kinds', async () => {
    const fields = `models: { scripted: { async generate() {} } }, encryption: { keys: { k1: ${key} }, currentKeyId: 'k1' }`;
    expect(await load('good-models', fields)).toMatchObject({ config: { encryption: { currentKeyId: 'k1' } } });
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
