import type { DataConverter } from '@temporalio/common';
import { AesGcmPayloadCodec } from './aes-gcm-payload-codec.js';
import type { EncryptionOptions } from './encryption-keys.js';

/**
 * Adds the AES-256-GCM codec after any codec the data converter already has (encryption must come last: compressing
 * ciphertext gains nothing); returns the converter as it is when there is no encryption to add.
 */
export function withEncryption(
  dataConverter: DataConverter | undefined,
  encryption: EncryptionOptions | undefined,
): DataConverter | undefined {
  if (encryption === undefined) return dataConverter;
  return {
    ...dataConverter,
    payloadCodecs: [...(dataConverter?.payloadCodecs ?? []), new AesGcmPayloadCodec(encryption)],
  };
}
