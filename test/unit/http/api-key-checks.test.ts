import { Hono } from 'hono';
import { describe, expect, it } from 'vitest';
import { useUnconnectedClient } from '../../helpers/unconnected-client.js';
import { minApiKeyLength } from '../../../src/http/api-keys.js';
import type { ApiKeyTenant } from '../../../src/http/api-keys.js';
import { createApi } from '../../../src/http/create-api.js';
import type { ApiEnv } from '../../../src/http/create-api.js';
import { createErrorHandler } from '../../../src/http/error-handlers.js';
import { InboxSessions } from '../../../src/http/inbox/inbox-sessions.js';
import { requireApiKey } from '../../../src/http/require-api-key.js';
import { startApiServer } from '../../../src/http/start-api-server.js';

/** Building the API needs no Temporal: a client that never connects is enough. */
const client = useUnconnectedClient();

const badKeys: Array<[string, string, ApiKeyTenant]> = [
  ['an empty key', '', { tenantId: 'acme' }],
  ['a blank key', '   ', { tenantId: 'acme' }],
  ['a key with whitespace', 'key-acme-0123456789 one', { tenantId: 'acme' }],
  [`a key of ${minApiKeyLength - 1} characters`, 'k'.repeat(minApiKeyLength - 1), { tenantId: 'acme' }],
  ['a key over 512 characters', 'k'.repeat(513), { tenantId: 'acme' }],
  ['an empty tenant id', 'key-acme-0123456789', { tenantId: '' }],
  ['a tenant id with a ~', 'key-acme-0123456789', { tenantId: 'acme~other' }],
];

describe('createApi checks every key as loadApiKeys does', () => {
  it.each(badKeys)('refuses %s with invalid_input, naming the entry by position only', (_, key, tenant) => {
    const apiKeys = new Map<string, ApiKeyTenant>([
      ['key-good-0123456789', { tenantId: 'good' }],
      [key, tenant],
    ]);
    expect(() => createApi({ client: client(), apiKeys })).toThrow(/API key 2\b/);
    expect(() => createApi({ client: client(), apiKeys })).toThrow(expect.objectContaining({ code: 'invalid_input' }));
    // The key is a secret: the refusal never quotes it.
    if (key.trim() !== '') expect(() => createApi({ client: client(), apiKeys })).not.toThrow(key);
  });

  it('says the rule and how to make a good key when one is too short', () => {
    const apiKeys = new Map([['k'.repeat(minApiKeyLength - 1), { tenantId: 'acme' }]]);
    expect(() => createApi({ client: client(), apiKeys })).toThrow(
      /API key 1 of apiKeys is invalid \(key: Expected 16 to 512 characters and no whitespace: make each one random, e\.g\. node -e .*randomBytes\(32\)/,
    );
  });

  it('so startApiServer never listens with an empty key', async () => {
    await expect(
      startApiServer({ client: client(), apiKeys: new Map([['', { tenantId: 'acme' }]]) }),
    ).rejects.toMatchObject({ code: 'invalid_input' });
  });

  it('accepts keys of 16 to 512 characters and tenant ids the key loader accepts', () => {
    const apiKeys = new Map([
      ['k'.repeat(512), { tenantId: 'a.b_c:d@e-f', name: 'ops' }],
      ['k'.repeat(minApiKeyLength), { tenantId: 'acme' }],
    ]);
    expect(() => createApi({ client: client(), apiKeys })).not.toThrow();
  });
});

describe('a presented key that is absent or empty', () => {
  // Built around createApi's check, as code that handed the middleware a map of its own would.
  const openToEmpty = new Map([['', { tenantId: 'acme' }]]);

  function guarded(): Hono<ApiEnv> {
    const app = new Hono<ApiEnv>();
    app.onError(createErrorHandler({ error: () => undefined }));
    app.use('*', requireApiKey(openToEmpty));
    app.get('/v1/runs', (c) => c.json({ tenantId: c.get('caller').tenantId }));
    return app;
  }

  it('is refused before any lookup by requireApiKey', async () => {
    for (const headers of [{}, { 'x-api-key': '' }, { 'x-api-key': '   ' }, { authorization: 'Bearer ' }]) {
      const response = await guarded().request('/v1/runs', { headers });
      expect(response.status, JSON.stringify(headers)).toBe(401);
    }
  });

  it('signs no one in to the inbox', () => {
    const sessions = new InboxSessions(openToEmpty);
    expect(sessions.create('')).toBeUndefined();
  });
});
