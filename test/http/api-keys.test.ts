import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyVerifier, loadApiKeys } from '../../src/http/api-keys.js';

let directory: string;

beforeAll(async () => {
  directory = await mkdtemp(join(tmpdir(), 'relay-e-keys-'));
});

afterAll(async () => {
  await rm(directory, { recursive: true, force: true });
});

async function keyFile(content: unknown): Promise<string> {
  const file = join(directory, `${Math.random().toString(36).slice(2)}.json`);
  await writeFile(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('loadApiKeys', () => {
  it('merges the keys of a file and of RELAY_E_API_KEYS, names included', async () => {
    const file = await keyFile({ keys: [{ key: 'file-key', tenantId: 'acme', name: 'ops-bot' }] });
    const keys = await loadApiKeys({ file, env: { RELAY_E_API_KEYS: ' env-a:acme , env-b:globex:bob ,' } });
    expect([...keys]).toEqual([
      ['file-key', { tenantId: 'acme', name: 'ops-bot' }],
      ['env-a', { tenantId: 'acme' }],
      ['env-b', { tenantId: 'globex', name: 'bob' }],
    ]);
  });

  it('refuses to start with no key at all, since the API requires one', async () => {
    await expect(loadApiKeys({ env: {} })).rejects.toMatchObject({ code: 'invalid_input' });
    const empty = await keyFile({ keys: [] });
    await expect(loadApiKeys({ file: empty, env: { RELAY_E_API_KEYS: '' } })).rejects.toThrow(/No API keys/);
  });

  it('refuses one key mapped to two tenants', async () => {
    const file = await keyFile({ keys: [{ key: 'shared', tenantId: 'acme' }] });
    await expect(loadApiKeys({ file, env: { RELAY_E_API_KEYS: 'shared:globex' } })).rejects.toThrow(/two tenants/);
  });

  it('names a malformed entry by position without echoing the secret', async () => {
    const attempt = loadApiKeys({ env: { RELAY_E_API_KEYS: 'ok:acme,super-secret-value' } });
    await expect(attempt).rejects.toThrow(/entry 2/);
    await expect(attempt).rejects.not.toThrow(/super-secret-value/);
  });

  it('refuses a key file whose tenant id could break out of a visibility query', async () => {
    const file = await keyFile({ keys: [{ key: 'k', tenantId: "acme' OR 1=1" }] });
    await expect(loadApiKeys({ file, env: {} })).rejects.toThrow(/tenantId/);
  });
});

describe('createApiKeyVerifier', () => {
  it('finds the tenant of a known key and nothing for an unknown, empty or longer one', () => {
    const verify = createApiKeyVerifier(
      new Map([
        ['alpha-key', { tenantId: 'acme', name: 'alice' }],
        ['beta-key', { tenantId: 'globex' }],
      ]),
    );
    expect(verify('alpha-key')).toEqual({ tenantId: 'acme', name: 'alice' });
    expect(verify('beta-key')).toEqual({ tenantId: 'globex' });
    expect([verify(''), verify('alpha-key2'), verify('alpha')]).toEqual([undefined, undefined, undefined]);
  });
});
