import { describe, expect, it } from 'vitest';
import { parseCodecTokens, startCodecServer } from '../../../src/cli/codec-server-command.js';

const ops = 'ops-token-0123456789';
const acme = 'acme-token-0123456789';

describe('RELAY_E_CODEC_TOKENS', () => {
  it('reads a bare token as every tenant and token:tenant as one tenant', () => {
    expect(parseCodecTokens(` ${ops} , ${acme}:acme,tenant-with-colon-0123:org:eu `)).toEqual(
      new Map([
        [ops, {}],
        [acme, { tenantId: 'acme' }],
        ['tenant-with-colon-0123', { tenantId: 'org:eu' }],
      ]),
    );
    expect(parseCodecTokens(undefined)).toEqual(new Map());
    expect(parseCodecTokens(' , ')).toEqual(new Map());
  });

  it('refuses an entry without a token or without a tenant after its colon, naming it by position only', () => {
    expect(() => parseCodecTokens(`${ops},secret-token-0123456789:`)).toThrow(
      "RELAY_E_CODEC_TOKENS entry 2: expected 'token' or 'token:tenant'",
    );
    expect(() => parseCodecTokens(':acme')).toThrow('entry 1');
    expect(() => parseCodecTokens(`${ops},secret-token-0123456789:`)).not.toThrow('secret-token');
  });

  it('refuses a token shorter than 16 characters, as an API key, saying the rule and not the token', () => {
    expect(() => parseCodecTokens(`${ops},short-secret-15:acme`)).toThrow(
      'RELAY_E_CODEC_TOKENS entry 2: Expected 16 to 512 characters and no whitespace: make each one random',
    );
    expect(() => parseCodecTokens('short-secret-15')).not.toThrow('short-secret');
    expect(() => parseCodecTokens('with a space 0123456789')).toThrow('entry 1: Expected 16 to 512 characters');
    expect(parseCodecTokens('sixteen-chars-16:acme')).toEqual(new Map([['sixteen-chars-16', { tenantId: 'acme' }]]));
  });

  it('refuses a token given twice, which would otherwise widen a tenant’s token to every tenant', () => {
    expect(() => parseCodecTokens(`${acme}:acme,${ops},${acme}`)).toThrow(
      'RELAY_E_CODEC_TOKENS entry 3 repeats the token of entry 1',
    );
    expect(() => parseCodecTokens(`${acme}:acme,${acme}:acme`)).toThrow('entry 2 repeats');
    expect(() => parseCodecTokens(`${acme}:acme,${acme}`)).not.toThrow(acme);
  });

  it('refuses to serve a token limited to a tenant without a way to find runs’ tenants', () => {
    expect(() =>
      startCodecServer({
        encryption: { keys: { k1: Buffer.alloc(32, 1) } },
        port: 0,
        host: '127.0.0.1',
        env: { RELAY_E_CODEC_TOKENS: `${acme}:acme` },
      }),
    ).toThrow('needs a Temporal connection');
  });
});
