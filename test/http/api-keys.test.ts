import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createApiKeyVerifier, loadApiKeys, minApiKeyLength } from '../../src/http/api-keys.js';

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
    const file = await keyFile({ keys: [{ key: 'key-file-0123456789', tenantId: 'acme', name: 'ops-bot' }] });
    const env = { RELAY_E_API_KEYS: ' key-env-a-0123456789:acme , key-env-b-0123456789:globex:bob ,' };
    const keys = await loadApiKeys({ file, env });
    expect([...keys]).toEqual([
      ['key-file-0123456789', { tenantId: 'acme', name: 'ops-bot' }],
      ['key-env-a-0123456789', { tenantId: 'acme' }],
      ['key-env-b-0123456789', { tenantId: 'globex', name: 'bob' }],
    ]);
  });

  it('refuses to start with no key at all, since the API requires one', async () => {
    await expect(loadApiKeys({ env: {} })).rejects.toMatchObject({ code: 'invalid_input' });
    const empty = await keyFile({ keys: [] });
    await expect(loadApiKeys({ file: empty, env: { RELAY_E_API_KEYS: '' } })).rejects.toThrow(/No API keys/);
  });

  it('refuses one key mapped to two tenants', async () => {
    const file = await keyFile({ keys: [{ key: 'key-shared-0123456789', tenantId: 'acme' }] });
    const env = { RELAY_E_API_KEYS: 'key-shared-0123456789:globex' };
    await expect(loadApiKeys({ file, env })).rejects.toThrow(/two tenants/);
  });

  it('names a malformed entry by position without echoing the secret', async () => {
    const attempt = loadApiKeys({ env: { RELAY_E_API_KEYS: 'key-acme-0123456789:acme,super-secret-value' } });
    await expect(attempt).rejects.toThrow(/entry 2: expected 'key:tenant'/);
    await expect(attempt).rejects.not.toThrow(/super-secret-value/);
  });

  it('refuses a key file whose tenant id could break out of a visibility query', async () => {
    const file = await keyFile({ keys: [{ key: 'key-acme-0123456789', tenantId: "acme' OR 1=1" }] });
    await expect(loadApiKeys({ file, env: {} })).rejects.toThrow(/tenantId/);
    const env = { RELAY_E_API_KEYS: "key-acme-0123456789:acme'" };
    await expect(loadApiKeys({ env })).rejects.toThrow(/entry 1: tenant: Expected 1 to \d+ letters/);
  });
});

describe('loadApiKeys and the length of a key', () => {
  // One character short of minApiKeyLength.
  const short = 'key-acme-012345';
  const rule = 'Expected 16 to 512 characters and no whitespace: make each one random, e.g. node -e';

  it(`refuses a key of ${minApiKeyLength - 1} characters in RELAY_E_API_KEYS, naming its entry and the rule, never the key`, async () => {
    expect(short).toHaveLength(minApiKeyLength - 1);
    const attempt = loadApiKeys({ env: { RELAY_E_API_KEYS: `key-globex-0123456789:globex,${short}:acme` } });
    await expect(attempt).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(attempt).rejects.toThrow(`RELAY_E_API_KEYS entry 2: key: ${rule}`);
    await expect(attempt).rejects.not.toThrow(short);
  });

  it(`refuses a key of ${minApiKeyLength - 1} characters in a key file, naming the file, the entry and the rule`, async () => {
    const file = await keyFile({
      keys: [
        { key: 'key-globex-0123456789', tenantId: 'globex' },
        { key: short, tenantId: 'acme' },
      ],
    });
    const attempt = loadApiKeys({ file, env: {} });
    await expect(attempt).rejects.toMatchObject({ code: 'invalid_input' });
    await expect(attempt).rejects.toThrow(`${file}: invalid API key file: ${rule}`);
    await expect(attempt).rejects.toThrow(/at 'keys\[1\]\.key'/);
    await expect(attempt).rejects.not.toThrow(short);
  });

  it(`accepts a key of ${minApiKeyLength} characters from either`, async () => {
    const key = `${short}6`;
    const file = await keyFile({ keys: [{ key, tenantId: 'acme' }] });
    expect([...(await loadApiKeys({ file, env: {} }))]).toEqual([[key, { tenantId: 'acme' }]]);
    expect([...(await loadApiKeys({ env: { RELAY_E_API_KEYS: `${key}:acme` } }))]).toEqual([
      [key, { tenantId: 'acme' }],
    ]);
  });

  it('refuses an empty key in RELAY_E_API_KEYS with the same rule', async () => {
    await expect(loadApiKeys({ env: { RELAY_E_API_KEYS: ':acme' } })).rejects.toThrow(`entry 1: key: ${rule}`);
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
