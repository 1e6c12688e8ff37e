import type { DataConverter } from '@temporalio/common';
import { moduleFileNextTo } from '../worker/module-file.js';
import { AesGcmPayloadCodec } from './aes-gcm-payload-codec.js';
import type { EncryptionOptions } from './encryption-keys.js';

/**
 * Adds the AES-256-GCM codec after any codec the data converter already has (encryption must come last: compressing
 * ciphertext gains nothing), and the failure converter that moves failure messages and stack traces into a payload
 * for the codec to encrypt ({@link encodedFailureConverterPath}), unless the converter names a failure converter of
 * its own, which is kept. Returns the converter as it is when there is no encryption to add.
 */
export function withEncryption(
  dataConverter: DataConverter | undefined,
  encryption: EncryptionOptions | undefined,
): DataConverter | undefined {
  if (encryption === undefined) return dataConverter;
  return {
    ...dataConverter,
    failureConverterPath: dataConverter?.failureConverterPath ?? encodedFailureConverterPath(),
    payloadCodecs: [...(dataConverter?.payloadCodecs ?? []), new AesGcmPayloadCodec(encryption)],
  };
}

/**
 * The file of the failure converter that encryption adds (encoded-failure-converter.ts), next to this module whether
 * it runs from source or from `dist`: Temporal loads failure converters by path, and bundles them into workflow code.
 */
export function encodedFailureConverterPath(): string {
  return moduleFileNextTo(import.meta.url, './encoded-failure-converter');
}
