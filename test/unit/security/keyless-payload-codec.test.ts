import type { Payload } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec } from '../../../src/security/aes-gcm-payload-codec.js';
import { KeylessPayloadCodec, withKeylessRefusal } from '../../../src/security/keyless-payload-codec.js';

const plain: Payload = {
  metadata: { encoding: new TextEncoder().encode('json/plain') },
  data: new TextEncoder().encode('{"a":1}'),
};

describe('KeylessPayloadCodec', () => {
  it('passes plain payloads through both ways', async () => {
    const codec = new KeylessPayloadCodec();

    expect(await codec.encode([plain])).toEqual([plain]);
    expect(await codec.decode([plain])).toEqual([plain]);
  });

  it('refuses an encrypted payload with the key it names and the setting to give', async () => {
    const key = Buffer.alloc(32, 3).toString('base64');
    const [encrypted] = await new AesGcmPayloadCodec({ keys: { 'k-9': key } }).encode([plain]);

    await expect(new KeylessPayloadCodec().decode([plain, encrypted!])).rejects.toMatchObject({
      code: 'decryption_failed',
      message: expect.stringContaining(
        "A payload is encrypted with key 'k-9', and this process holds no encryption keys",
      ) as unknown,
    });
  });
});

describe('withKeylessRefusal', () => {
  it('adds the codec to a converter without codecs, and leaves one with codecs of its own as it is', () => {
    const own = { payloadCodecs: [new KeylessPayloadCodec()] };

    expect(withKeylessRefusal(undefined).payloadCodecs).toEqual([expect.any(KeylessPayloadCodec)]);
    expect(withKeylessRefusal(own)).toBe(own);
  });
});
