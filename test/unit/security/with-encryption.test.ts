import { existsSync } from 'node:fs';
import { encodeErrorToFailure, loadDataConverter } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { describe, expect, it } from 'vitest';
import { AesGcmPayloadCodec, encryptedEncoding } from '../../../src/security/aes-gcm-payload-codec.js';
import { encodedFailureConverterPath, withEncryption } from '../../../src/security/with-encryption.js';

const encryption = { keys: { k1: Buffer.alloc(32, 7).toString('base64') } };
const failureText = 'HTTP 402 for jane.doe@example.com';

describe('withEncryption', () => {
  it('gives the converter a failure converter whose failures keep their message and stack trace only encrypted', async () => {
    const converter = withEncryption(undefined, encryption);
    expect(converter?.failureConverterPath).toBe(encodedFailureConverterPath());
    expect(existsSync(encodedFailureConverterPath())).toBe(true);

    // Loaded by path, as Temporal's workers and clients load it.
    const failure = await encodeErrorToFailure(loadDataConverter(converter), new Error(failureText));
    expect(failure).toMatchObject({ message: 'Encoded failure', stackTrace: '' });
    expect(Buffer.from(failure.encodedAttributes?.metadata?.['encoding'] ?? []).toString()).toBe(encryptedEncoding);
    const [decoded] = await new AesGcmPayloadCodec(encryption).decode([failure.encodedAttributes ?? {}]);
    expect(JSON.parse(Buffer.from(decoded?.data ?? []).toString())).toMatchObject({
      message: failureText,
      stack_trace: expect.stringContaining('with-encryption.test.ts') as unknown,
    });
  });

  it('keeps a failure converter the data converter names itself, and adds the codec after its codecs', () => {
    const own = { failureConverterPath: '/app/my-failure-converter.js', payloadCodecs: [] };
    const converter = withEncryption(own, encryption);
    expect(converter?.failureConverterPath).toBe('/app/my-failure-converter.js');
    expect(converter?.payloadCodecs?.at(-1)).toBeInstanceOf(AesGcmPayloadCodec);
  });

  it('leaves the converter as it is without encryption: failures stay as Temporal writes them', () => {
    const own = { payloadCodecs: [] };
    expect(withEncryption(own, undefined)).toBe(own);
    expect(withEncryption(undefined, undefined)).toBeUndefined();
  });
});
