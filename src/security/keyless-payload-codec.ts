import type { DataConverter, Payload, PayloadCodec } from '@temporalio/common';
import { RelayError } from '../shared/errors.js';
import { encryptedEncoding, encryptionKeyIdMetadataKey } from './aes-gcm-payload-codec.js';

/**
 * The codec of a client without encryption keys: it passes every payload through, and refuses to decode an encrypted
 * one with a sentence naming its key and the setting to give, where the SDK would fail with a bare
 * `Unknown encoding: binary/encrypted`.
 */
export class KeylessPayloadCodec implements PayloadCodec {
  encode(payloads: Payload[]): Promise<Payload[]> {
    return Promise.resolve(payloads);
  }

  decode(payloads: Payload[]): Promise<Payload[]> {
    const encrypted = payloads.find((payload) => textOf(payload.metadata?.['encoding']) === encryptedEncoding);
    if (encrypted === undefined) return Promise.resolve(payloads);
    const keyId = textOf(encrypted.metadata?.[encryptionKeyIdMetadataKey]) ?? 'unnamed';
    return Promise.reject(
      new RelayError(
        'decryption_failed',
        `A payload is encrypted with key '${keyId}', and this process holds no encryption keys: give it the workers' ` +
          'keys (RELAY_E_ENCRYPTION_KEYS, or the encryption option)',
      ),
    );
  }
}

function textOf(bytes: Uint8Array | null | undefined): string | undefined {
  return bytes ? Buffer.from(bytes).toString('utf8') : undefined;
}

/**
 * `dataConverter` with a {@link KeylessPayloadCodec} when it has no codecs: one with codecs of its own may decrypt
 * payloads itself, and a codec added last would decode before them.
 */
export function withKeylessRefusal(dataConverter: DataConverter | undefined): DataConverter {
  if ((dataConverter?.payloadCodecs?.length ?? 0) > 0) return dataConverter ?? {};
  return { ...dataConverter, payloadCodecs: [new KeylessPayloadCodec()] };
}
