import { describe, expect, it } from 'vitest';
import { parseCodecTokens, startCodecServer } from '../../../src/cli/codec-server-command.js';

describe('RELAY_E_CODEC_TOKENS', () => {
  it('reads a bare token as every tenant and token:tenant as one tenant', () => {
    expect(parseCodecTokens(' ops , acme-token:acme,tenant-with-colon:org:eu ')).toEqual(
      new Map([
        ['ops', {}],
        ['acme-token', { tenantId: 'acme' }],
        ['tenant-with-colon', { tenantId: 'org:eu' }],
      ]),
    );
    expect(parseCodecTokens(undefined)).toEqual(new Map());
    expect(parseCodecTokens(' , ')).toEqual(new Map());
  });

  it('refuses an entry without a token or without a tenant after its colon, naming it by position only', () => {
    expect(() => parseCodecTokens('ops,secret-token:')).toThrow(
      "RELAY_E_CODEC_TOKENS entry 2: expected 'token' or 'token:tenant'",
    );
    expect(() => parseCodecTokens(':acme')).toThrow('entry 1');
    expect(() => parseCodecTokens('ops,secret-token:')).not.toThrow('secret-token');
  });

  it('refuses a token given twice, which would otherwise widen a tenant’s token to every tenant', () => {
    expect(() => parseCodecTokens('t1:acme,ops,t1')).toThrow(
      'RELAY_E_CODEC_TOKENS entry 3 repeats the token of entry 1',
    );
    expect(() => parseCodecTokens('t1:acme,t1:acme')).toThrow('entry 2 repeats');
    expect(() => parseCodecTokens('t1:acme,t1')).not.toThrow('t1:');
  });

  it('refuses to serve a token limited to a tenant without a way to find runs’ tenants', () => {
    expect(() =>
      startCodecServer({
        encryption: { keys: { k1: Buffer.alloc(32, 1) } },
        port: 0,
        host: '127.0.0.1',
        env: { RELAY_E_CODEC_TOKENS: 'acme-token:acme' },
      }),
    ).toThrow('needs a Temporal connection');
  });
});
