import type { Payload } from '@temporalio/common';
import { encodeErrorToFailure, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { describe, expect, it } from 'vitest';
import {
  AesGcmPayloadCodec,
  encryptedEncoding,
  encryptionWorkflowIdMetadataKey,
  payloadWorkflowId,
} from '../../src/security/aes-gcm-payload-codec.js';
import { createCodecServer } from '../../src/security/codec-server.js';
import { encryptionOptionsFromEnv } from '../../src/security/encryption-keys.js';
import { withEncryption } from '../../src/security/with-encryption.js';
import { newKey } from './security-test-kit.js';

const jsonPayload = (value: unknown) => ({
  metadata: { encoding: Buffer.from('json/plain').toString('base64') },
  data: Buffer.from(JSON.stringify(value)).toString('base64'),
});

const toJson = (payload: Payload) => ({
  metadata: Object.fromEntries(
    Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
  ),
  data: Buffer.from(payload.data ?? []).toString('base64'),
});

const uiOrigin = 'http://localhost:8233';
const encryption = { keys: { k1: newKey() } };
const codec = new AesGcmPayloadCodec(encryption);
const app = createCodecServer({ codec, authorize: (authorization) => authorization === 'Bearer let-me-in' });

function post(path: string, body: unknown, headers: Record<string, string> = { authorization: 'Bearer let-me-in' }) {
  return app.request(path, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: uiOrigin, 'x-namespace': 'default', ...headers },
    body: JSON.stringify(body),
  });
}

describe('codec server', () => {
  it('round-trips payloads through POST /encode and POST /decode in the codec server format', async () => {
    const original = [jsonPayload({ prompt: 'hello' }), jsonPayload([1, 2, 3])];
    const encoded = await post('/encode', { payloads: original });
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    const { payloads } = (await encoded.json()) as {
      payloads: Array<{ metadata: Record<string, string>; data: string }>;
    };
    expect(payloads).toHaveLength(2);
    expect(Buffer.from(payloads[0]?.metadata['encoding'] ?? '', 'base64').toString()).toBe(encryptedEncoding);
    expect(Buffer.from(payloads[0]?.metadata['encryption-key-id'] ?? '', 'base64').toString()).toBe('k1');
    expect(Buffer.from(payloads[0]?.data ?? '', 'base64').toString('latin1')).not.toContain('hello');

    const decoded = await post('/decode', { payloads });
    expect(await decoded.json()).toEqual({ payloads: original });
  });

  it('decodes the message and stack trace of a failure an encrypting worker wrote, which the UI sends as a payload', async () => {
    const converter = loadDataConverter(withEncryption(undefined, encryption));
    const failure = await encodeErrorToFailure(converter, new Error('HTTP 402 for jane.doe@example.com'));
    expect(failure.message).toBe('Encoded failure');
    const response = await post('/decode', { payloads: [toJson(failure.encodedAttributes ?? {})] });
    expect(response.status).toBe(200);
    const { payloads } = (await response.json()) as { payloads: Array<{ data: string }> };
    const attributes = JSON.parse(Buffer.from(payloads[0]?.data ?? '', 'base64').toString()) as {
      message: string;
      stack_trace: string;
    };
    expect(attributes.message).toBe('HTTP 402 for jane.doe@example.com');
    expect(attributes.stack_trace).toContain('codec-server.test.ts');
  });

  it('passes payloads that were never encrypted through /decode unchanged', async () => {
    const response = await post('/decode', { payloads: [jsonPayload('plain')] });
    expect(await response.json()).toEqual({ payloads: [jsonPayload('plain')] });
  });

  it('answers the Temporal UI’s CORS preflight without credentials, and no other origin', async () => {
    const preflight = (origin: string) =>
      app.request('/decode', {
        method: 'OPTIONS',
        headers: {
          origin,
          'access-control-request-method': 'POST',
          'access-control-request-headers': 'content-type,x-namespace',
        },
      });
    const allowed = await preflight(uiOrigin);
    expect(allowed.status).toBe(204);
    expect(allowed.headers.get('access-control-allow-origin')).toBe(uiOrigin);
    expect(allowed.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('x-namespace');
    const other = await preflight('http://evil.example');
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('refuses a request without the authorization it requires, as problem+json', async () => {
    const response = await post('/decode', { payloads: [] }, { authorization: 'Bearer wrong' });
    expect(response.status).toBe(401);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
  });

  it('says which key is missing when a payload was encrypted with a key the server does not hold', async () => {
    const [foreign] = await new AesGcmPayloadCodec({ keys: { 'k-gone': newKey() } }).encode([
      { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"x"') } satisfies Payload,
    ]);
    const body = {
      payloads: [
        {
          metadata: Object.fromEntries(
            Object.entries(foreign?.metadata ?? {}).map(([key, value]) => [key, Buffer.from(value).toString('base64')]),
          ),
          data: Buffer.from(foreign?.data ?? []).toString('base64'),
        },
      ],
    };
    const response = await post('/decode', body);
    expect(response.status).toBe(422);
    const problem = (await response.json()) as { code: string; detail: string };
    expect(problem.code).toBe('decryption_failed');
    expect(problem.detail).toContain("key 'k-gone', which this process does not hold (known: k1)");
  });

  it('refuses a body that is not in the codec server format', async () => {
    const response = await post('/decode', { payloads: [{ data: 'not base64!' }] });
    expect(response.status).toBe(400);
  });
});

describe('codec server limited to a tenant', () => {
  const tenants = new Map([
    ['acme~run-1', 'acme'],
    ['globex~run-2', 'globex'],
  ]);
  const scoped = createCodecServer({
    codec,
    authorize: (authorization) =>
      authorization === 'Bearer ops' ? true : authorization === 'Bearer acme-token' ? { tenantId: 'acme' } : false,
    tenantOfRun: (runId) => Promise.resolve(tenants.get(runId)),
  });
  const decode = async (payloads: Payload[], token: string) => {
    const response = await scoped.request('/decode', {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
      body: JSON.stringify({ payloads: payloads.map(toJson) }),
    });
    return { status: response.status, body: (await response.json()) as { payloads?: unknown[]; code?: string } };
  };
  const encodeFor = async (workflowId: string | undefined, value: string) => {
    const plain = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from(JSON.stringify(value)) };
    const context = workflowId ? ({ type: 'workflow', namespace: 'default', workflowId } as const) : undefined;
    return ((await codec.encode([plain], context)) as [Payload])[0];
  };

  it('decrypts for a tenant only the payloads of its runs, and gives the others back as they came', async () => {
    const ofAcme = await encodeFor('acme~run-1', 'acme secret');
    const ofGlobex = await encodeFor('globex~run-2', 'globex secret');
    const ofNoRun = await encodeFor(undefined, 'unbound');
    const ofUnknownRun = await encodeFor('acme~gone', 'no such run');
    const { status, body } = await decode([ofAcme, ofGlobex, ofNoRun, ofUnknownRun], 'acme-token');
    expect(status).toBe(200);
    expect(body.payloads).toEqual([
      toJson({ metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"acme secret"') }),
      toJson(ofGlobex),
      toJson(ofNoRun),
      toJson(ofUnknownRun),
    ]);
    // A token for every tenant decrypts all of them.
    const all = await decode([ofAcme, ofGlobex, ofNoRun], 'ops');
    expect(all.body.payloads?.map((item) => Buffer.from((item as { data: string }).data, 'base64').toString())).toEqual(
      ['"acme secret"', '"globex secret"', '"unbound"'],
    );
  });

  it('asks each run’s tenant once a request, and at most eight runs at a time', async () => {
    let asked = 0;
    let askingNow = 0;
    let mostAtOnce = 0;
    const counted = createCodecServer({
      codec,
      authorize: () => ({ tenantId: 'acme' }),
      tenantOfRun: async (runId) => {
        asked += 1;
        askingNow += 1;
        mostAtOnce = Math.max(mostAtOnce, askingNow);
        await new Promise((resolve) => setTimeout(resolve, 5));
        askingNow -= 1;
        return runId.startsWith('acme~') ? 'acme' : undefined;
      },
    });
    const send = async (payloads: Payload[]) => {
      const response = await counted.request('/decode', {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer any' },
        body: JSON.stringify({ payloads: payloads.map(toJson) }),
      });
      return (await response.json()) as { payloads: Array<{ data: string }> };
    };
    // The UI sends a run's payloads together: 300 of one run are one lookup, and all decrypt.
    const ofOneRun = await Promise.all(Array.from({ length: 300 }, (_, index) => encodeFor('acme~run-1', `p${index}`)));
    const decoded = await send(ofOneRun);
    expect(asked).toBe(1);
    expect(Buffer.from(decoded.payloads[299]?.data ?? '', 'base64').toString()).toBe('"p299"');
    // Forty made-up runs in one body: each asked once, never more than eight at a time.
    asked = 0;
    const ofManyRuns = await Promise.all(Array.from({ length: 40 }, (_, index) => encodeFor(`other~${index}`, 'x')));
    await send([...ofManyRuns, ...ofManyRuns]);
    expect(asked).toBe(40);
    expect(mostAtOnce).toBe(8);
  });

  it('refuses a payload of another tenant renamed to name a run of the caller’s', async () => {
    const ofGlobex = await encodeFor('globex~run-2', 'globex secret');
    const renamed = {
      ...ofGlobex,
      metadata: { ...ofGlobex.metadata, [encryptionWorkflowIdMetadataKey]: Buffer.from('acme~run-1') },
    };
    const { status, body } = await decode([renamed], 'acme-token');
    expect([status, body.code]).toEqual([422, 'decryption_failed']);
  });
});

describe('AesGcmPayloadCodec', () => {
  const payload: Payload = { metadata: { encoding: Buffer.from('json/plain') }, data: Buffer.from('"same"') };

  it('encrypts the same payload differently each time (a fresh IV per payload)', async () => {
    const [first, second] = await codec.encode([payload, payload]);
    expect(Buffer.from(first?.data ?? []).equals(Buffer.from(second?.data ?? []))).toBe(false);
    const decoded = await codec.decode([first as Payload, second as Payload]);
    expect(decoded.map((item) => Buffer.from(item.data ?? []).toString())).toEqual(['"same"', '"same"']);
    expect(Buffer.from(decoded[0]?.metadata?.['encoding'] ?? []).toString()).toBe('json/plain');
  });

  it('refuses a key of the same id but other material, and an altered payload', async () => {
    const [encrypted] = await codec.encode([payload]);
    const impostor = new AesGcmPayloadCodec({ keys: { k1: newKey() } });
    await expect(impostor.decode([encrypted as Payload])).rejects.toThrow(
      "A payload encrypted with key 'k1' does not decrypt with the key of that id held here",
    );
    const data = Buffer.from(encrypted?.data ?? []);
    data[20] = (data[20] ?? 0) ^ 1;
    await expect(codec.decode([{ ...encrypted, data }])).rejects.toThrow(
      'or the payload (or the workflow id beside it) was altered',
    );
  });

  it('names and binds the workflow a payload belongs to, when the SDK says which', async () => {
    const context = { type: 'workflow', namespace: 'default', workflowId: 'acme~run-1' } as const;
    const [bound] = (await codec.encode([payload], context)) as [Payload];
    expect(payloadWorkflowId(bound)).toBe('acme~run-1');
    expect(Buffer.from((await codec.decode([bound]))[0]?.data ?? []).toString()).toBe('"same"');
    // The id is in the clear but authenticated: naming another run makes the payload fail to decrypt.
    const renamed = {
      ...bound,
      metadata: { ...bound.metadata, [encryptionWorkflowIdMetadataKey]: Buffer.from('globex~run-9') },
    };
    await expect(codec.decode([renamed])).rejects.toThrow('or the workflow id beside it) was altered');
    const { [encryptionWorkflowIdMetadataKey]: _dropped, ...withoutId } = bound.metadata ?? {};
    await expect(codec.decode([{ ...bound, metadata: withoutId }])).rejects.toThrow('was altered');
    // Without a context (and in payloads written before this binding) nothing is named or bound.
    const [unbound] = (await codec.encode([payload])) as [Payload];
    expect(payloadWorkflowId(unbound)).toBeUndefined();
    expect(Buffer.from((await codec.decode([unbound]))[0]?.data ?? []).toString()).toBe('"same"');
  });

  it('refuses keys that are not 32 bytes and a current key id it does not hold', () => {
    expect(() => new AesGcmPayloadCodec({ keys: { short: Buffer.alloc(16).toString('base64') } })).toThrow(
      "Encryption key 'short' must be 32 bytes (AES-256), given raw or as base64; it is 16 bytes",
    );
    expect(() => new AesGcmPayloadCodec({ keys: { k1: newKey() }, currentKeyId: 'k9' })).toThrow(
      "The current encryption key id 'k9' is not among the keys (k1)",
    );
  });

  it('reads its keys from RELAY_E_ENCRYPTION_KEYS and RELAY_E_ENCRYPTION_KEY_ID without quoting key material', () => {
    const [a, b] = [newKey(), newKey()];
    expect(encryptionOptionsFromEnv({})).toBeUndefined();
    expect(
      encryptionOptionsFromEnv({ RELAY_E_ENCRYPTION_KEYS: `old:${a}, new:${b}`, RELAY_E_ENCRYPTION_KEY_ID: 'new' }),
    ).toEqual({ keys: { old: a, new: b }, currentKeyId: 'new' });
    expect(
      new AesGcmPayloadCodec(encryptionOptionsFromEnv({ RELAY_E_ENCRYPTION_KEYS: `old:${a},new:${b}` })!).currentKeyId,
    ).toBe('old');
    expect(() => encryptionOptionsFromEnv({ RELAY_E_ENCRYPTION_KEYS: `only-${a}` })).toThrow(
      "RELAY_E_ENCRYPTION_KEYS entry 1: expected 'id:base64key'",
    );
  });

  it('refuses a key id without keys (a misspelt RELAY_E_ENCRYPTION_KEYS), rather than store payloads in the clear', () => {
    expect(() => encryptionOptionsFromEnv({ RELAY_E_ENCRYPTION_KEY_ID: 'k-2025' })).toThrow(
      'RELAY_E_ENCRYPTION_KEY_ID is set but RELAY_E_ENCRYPTION_KEYS is not',
    );
    expect(encryptionOptionsFromEnv({ RELAY_E_ENCRYPTION_KEY_ID: ' ' })).toBeUndefined();
  });
});
