import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { RelayError } from '../shared/errors.js';
import { maxTenantIdLength, tenantIdPattern } from '../shared/run-ids.js';
import { checkToolInput } from '../shared/tool-input.js';

/** Who an API key speaks for: its tenant, and a name recorded as the approver of its decisions. */
export interface ApiKeyTenant {
  tenantId: string;
  name?: string;
}

/** The name a key's decisions and cancels are recorded under: its own, or `tenant:<id>` for a key without one. */
export function callerName(caller: ApiKeyTenant): string {
  return caller.name ?? `tenant:${caller.tenantId}`;
}

/** API keys and the tenant each one maps to. */
export type ApiKeyTenants = ReadonlyMap<string, ApiKeyTenant>;

export interface LoadApiKeysOptions {
  /** A JSON file `{ "keys": [{ "key": "...", "tenantId": "...", "name": "..." }] }`. */
  file?: string;
  /** Where `RELAY_E_API_KEYS` (`key1:tenantA,key2:tenantB:name`) is read. @default process.env */
  env?: NodeJS.ProcessEnv;
}

const tenantIdRule = `Expected 1 to ${maxTenantIdLength} letters, digits or . _ : @ -`;
const tenantIdSchema = z.string().regex(tenantIdPattern, { message: tenantIdRule });
/** The fewest characters an API key may have: nothing limits guesses at the API, so a short key is refused at start. */
export const minApiKeyLength = 16;
const maxApiKeyLength = 512;
// The rule and how to follow it; never the key, which each refusal names by position.
const keyRule =
  `Expected ${minApiKeyLength} to ${maxApiKeyLength} characters and no whitespace: make each one random, ` +
  `e.g. node -e "console.log(crypto.randomBytes(32).toString('base64url'))"`;
const keySchema = z.string().regex(new RegExp(`^\\S{${minApiKeyLength},${maxApiKeyLength}}$`), { message: keyRule });
/**
 * Why `key` cannot be an API key (the rule it breaks, never the key), or undefined when it can. The codec server's
 * bearer tokens follow the same rule: they guard decryption as keys guard the API.
 */
export function apiKeyProblem(key: string): string | undefined {
  return keySchema.safeParse(key).success ? undefined : keyRule;
}

const keyEntrySchema = z.object({
  key: keySchema,
  tenantId: tenantIdSchema,
  name: z.string().min(1).max(128).optional(),
});
const keyFileSchema = z.object({ keys: z.array(keyEntrySchema) });

/** Reads the API keys from a JSON file and/or `RELAY_E_API_KEYS`; finding none is an error, since the API requires a key. */
export async function loadApiKeys(options: LoadApiKeysOptions): Promise<ApiKeyTenants> {
  const entries = [
    ...(options.file !== undefined ? await readKeyFile(options.file) : []),
    ...parseKeyList((options.env ?? process.env)['RELAY_E_API_KEYS'] ?? ''),
  ];
  const keys = new Map<string, ApiKeyTenant>();
  for (const { key, ...tenant } of entries) {
    const known = keys.get(key);
    if (known && known.tenantId !== tenant.tenantId) {
      throw new RelayError(
        'invalid_input',
        `An API key is mapped to two tenants ('${known.tenantId}', '${tenant.tenantId}')`,
      );
    }
    keys.set(key, { ...known, ...tenant });
  }
  if (keys.size === 0) {
    throw new RelayError('invalid_input', 'No API keys configured: set RELAY_E_API_KEYS or give a keys file');
  }
  return keys;
}

/**
 * Refuses a key map with an entry `loadApiKeys` would refuse: an empty key would let in every caller who sends none.
 * The entry is named by position, since its key is a secret.
 */
export function checkApiKeys(apiKeys: ApiKeyTenants, owner: string): void {
  [...apiKeys].forEach(([key, tenant], index) => {
    const check = keyEntrySchema.safeParse({ ...tenant, key });
    if (check.success) return;
    // Zod's messages state the rule, never the value.
    const issues = check.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`).join('; ');
    throw new RelayError('invalid_input', `${owner}: API key ${index + 1} of apiKeys is invalid (${issues})`);
  });
}

/**
 * Returns a lookup that finds a presented key's holder (its tenant) in time independent of where, or whether, it matches:
 * every stored key is compared, as SHA-256 digests of equal length, with `timingSafeEqual`.
 */
export function createApiKeyVerifier<Holder = ApiKeyTenant>(
  apiKeys: ReadonlyMap<string, Holder>,
): (presented: string) => Holder | undefined {
  const stored = [...apiKeys].map(([key, holder]) => ({ digest: sha256(key), holder }));
  return (presented) => {
    const digest = sha256(presented);
    let match: Holder | undefined;
    for (const entry of stored) {
      if (timingSafeEqual(entry.digest, digest)) match = entry.holder;
    }
    return match;
  };
}

/** Signs what the API hands out and checks it back (see {@link createApiKeyMac}). */
export interface ApiKeyMac {
  /** The MAC of `data`, base64url. */
  sign(data: string): string;
  /** Whether `signature` is {@link sign}'s for `data`, compared in constant time. */
  verify(data: string, signature: string): boolean;
}

/**
 * A MAC for what the API hands out to any caller (list cursors), keyed by a secret derived from every configured key
 * and the purpose: each API process that serves the same keys accepts the same signatures, forging one takes every
 * key, and changing the keys voids them all.
 */
export function createApiKeyMac(apiKeys: ApiKeyTenants, purpose: string): ApiKeyMac {
  return macWithSecret(
    createHmac('sha256', `relay-e ${purpose}`)
      .update([...apiKeys.keys()].sort().join('\n'))
      .digest(),
  );
}

/**
 * A MAC for what the API hands out to the holder of one key (an inbox session), keyed by that key and the purpose:
 * forging one takes the key, and only changing or removing that key voids them.
 */
export function createOneKeyMac(apiKey: string, purpose: string): ApiKeyMac {
  return macWithSecret(createHmac('sha256', `relay-e ${purpose}`).update(apiKey).digest());
}

function macWithSecret(secret: Buffer): ApiKeyMac {
  const sign = (data: string) => createHmac('sha256', secret).update(data).digest().toString('base64url');
  return {
    sign,
    verify(data, signature) {
      const given = Buffer.from(signature);
      const expected = Buffer.from(sign(data));
      return given.length === expected.length && timingSafeEqual(given, expected);
    },
  };
}

async function readKeyFile(file: string): Promise<Array<ApiKeyTenant & { key: string }>> {
  const check = checkToolInput(keyFileSchema, await readFile(file, 'utf8'));
  if (!check.success) {
    throw new RelayError(
      'invalid_input',
      `${file}: ${check.message.replace('Validation failed', 'invalid API key file')}`,
    );
  }
  return check.data.keys;
}

function parseKeyList(list: string): Array<ApiKeyTenant & { key: string }> {
  return list
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '')
    .map((item, index) => {
      const [key = '', tenantId = '', name, ...rest] = item.split(':');
      // The entry holds a secret, so the messages point at it by position instead of quoting it.
      const refuse = (reason: string) =>
        new RelayError('invalid_input', `RELAY_E_API_KEYS entry ${index + 1}: ${reason}`);
      if (rest.length > 0 || name === '' || tenantId === '') throw refuse("expected 'key:tenant' or 'key:tenant:name'");
      if (!keySchema.safeParse(key).success) throw refuse(`key: ${keyRule}`);
      if (!tenantIdSchema.safeParse(tenantId).success) throw refuse(`tenant: ${tenantIdRule}`);
      return { key, tenantId, ...(name !== undefined ? { name } : {}) };
    });
}

function sha256(text: string): Buffer {
  return createHash('sha256').update(text).digest();
}
