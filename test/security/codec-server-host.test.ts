import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startHttpServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { AesGcmPayloadCodec } from '../../src/security/aes-gcm-payload-codec.js';
import { createCodecServer, hostNameOf } from '../../src/security/codec-server.js';
import type { CodecServerOptions } from '../../src/security/codec-server.js';
import { newKey } from './security-test-kit.js';

// A page that rebinds its own name to 127.0.0.1 is same-origin for the browser, so CORS never applies: only the Host
// header it sends, which names the attacker's host, tells it apart from the Temporal UI.

const codec = new AesGcmPayloadCodec({ keys: { k1: newKey() } });

/**
 * Sends `POST /decode` (or `GET /healthz`) to `server` with this Host header, as a browser that resolved the name to
 * the server's address would.
 */
function requestAs(
  server: ApiServer,
  host: string,
  path: '/decode' | '/healthz' = '/decode',
): Promise<{ status: number; body: unknown }> {
  const { port } = new URL(server.url);
  const method = path === '/decode' ? 'POST' : 'GET';
  return new Promise((resolve, reject) => {
    const outgoing = request(
      { host: '127.0.0.1', port, path, method, headers: { host, 'content-type': 'application/json' } },
      (response) => {
        let text = '';
        response.setEncoding('utf8');
        response.on('data', (chunk: string) => (text += chunk));
        response.on('end', () => resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) as unknown }));
      },
    );
    outgoing.once('error', reject);
    outgoing.end(method === 'POST' ? JSON.stringify({ payloads: [] }) : undefined);
  });
}

async function serve(options: Omit<CodecServerOptions, 'codec'> = {}): Promise<ApiServer> {
  return startHttpServer(createCodecServer({ codec, ...options }), { port: 0, host: '127.0.0.1' });
}

describe('the codec server’s Host check', () => {
  let server: ApiServer;
  let port: string;

  beforeAll(async () => {
    server = await serve();
    port = new URL(server.url).port;
  });

  afterAll(() => server.close());

  it('refuses a request for another host name with 403 problem+json before decoding anything', async () => {
    const refused = await requestAs(server, `evil.example:${port}`);

    expect(refused).toEqual({
      status: 403,
      body: expect.objectContaining({
        code: 'host_not_allowed',
        detail: expect.stringContaining("requests for host 'evil.example'; if that is its name, allow it") as unknown,
      }) as unknown,
    });
  });

  it('answers requests for localhost and IP addresses, IPv6 in brackets included, with or without a port', async () => {
    for (const host of [`localhost:${port}`, `127.0.0.1:${port}`, `[::1]:${port}`, 'LOCALHOST', '10.0.0.7']) {
      expect(await requestAs(server, host), host).toEqual({ status: 200, body: { payloads: [] } });
    }
  });

  it('answers /healthz for any name: probes call it by addresses of their own, and it tells nothing else', async () => {
    expect(await requestAs(server, 'evil.example', '/healthz')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('tells the Temporal UI why, with CORS headers that let it read the refusal', async () => {
    const refused = await createCodecServer({ codec }).request('http://codec.example.com/decode', {
      method: 'POST',
      headers: { origin: 'http://localhost:8233', 'content-type': 'application/json' },
      body: JSON.stringify({ payloads: [] }),
    });

    expect(refused.status).toBe(403);
    expect(refused.headers.get('access-control-allow-origin')).toBe('http://localhost:8233');
    expect(((await refused.json()) as { detail: string }).detail).toContain('--allowed-host codec.example.com');
  });

  it('answers the names it is given, port ignored, and still refuses others', async () => {
    const named = await serve({ allowedHosts: ['Codec.Example.com', 'fd00::5'] });
    try {
      expect((await requestAs(named, 'codec.example.com:443')).status).toBe(200);
      expect((await requestAs(named, 'codec.example.com.')).status).toBe(200);
      expect((await requestAs(named, '[fd00::5]:8788')).status).toBe(200);
      expect((await requestAs(named, 'evil.example')).status).toBe(403);
    } finally {
      await named.close();
    }
  });

  it("answers every name with allowedHosts: 'any'", async () => {
    const open = await serve({ allowedHosts: 'any' });
    try {
      expect((await requestAs(open, 'codec.cluster.internal')).status).toBe(200);
    } finally {
      await open.close();
    }
  });

  it('answers every name by default when it checks credentials (authorize): a rebinding page has none to send', async () => {
    const guarded = await serve({ authorize: (authorization) => authorization === 'Bearer t1' });
    const { port: guardedPort } = new URL(guarded.url);
    try {
      expect((await requestAs(guarded, 'codec.cluster.internal')).status).toBe(401);
      const answered = await createCodecServer({ codec, authorize: () => true }).request(
        `http://codec.cluster.internal:${guardedPort}/decode`,
        { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ payloads: [] }) },
      );
      expect(answered.status).toBe(200);
    } finally {
      await guarded.close();
    }
  });

  it('refuses an allowedHosts entry that is not a host name when it is created', () => {
    expect(() => createCodecServer({ codec, allowedHosts: ['https://codec.example.com'] })).toThrow(
      "allowedHosts: 'https://codec.example.com' is not a host name",
    );
    expect(() => createCodecServer({ codec, allowedHosts: ['codec.example.com:443'] })).toThrow('is not a host name');
  });
});

describe('hostNameOf', () => {
  it('reads the name of a Host header and nothing that is not one', () => {
    expect(hostNameOf('Evil.Example:8788')).toBe('evil.example');
    expect(hostNameOf('[::1]:8788')).toBe('::1');
    expect(hostNameOf('[::1]')).toBe('::1');
    expect(hostNameOf('localhost.')).toBe('localhost');
    for (const malformed of ['::1', '[::1', '[not-ip]', 'a b', 'evil.example:80:80', '', 'user@evil.example']) {
      expect(hostNameOf(malformed), malformed).toBeUndefined();
    }
  });
});
