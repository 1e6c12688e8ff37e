import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { RelayError } from '../shared/errors.js';
import { toEncryptionKeyRing } from './encryption-keys.js';
import type { EncryptionKeyRing, EncryptionOptions } from './encryption-keys.js';

/** The `encoding` metadata of an encrypted payload, as Temporal's encryption samples spell it. */
export const encryptedEncoding = 'binary/encrypted';

/** The metadata key that names the key a payload was encrypted with (stored in the clear). */
export const encryptionKeyIdMetadataKey = 'encryption-key-id';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;
const ivBytes = 12;
const tagBytes = 16;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * Encrypts whole payloads (data and metadata) with AES-256-GCM and a fresh 12-byte IV each, so Temporal stores only
 * `iv ‖ ciphertext ‖ tag` with the key id beside it. Decrypts with whichever known key the payload names, which
 * is what makes rotation work; payloads that were never encrypted pass through unchanged.
 */
export class AesGcmPayloadCodec implements PayloadCodec {
  readonly #ring: EncryptionKeyRing;

  constructor(options: EncryptionOptions) {
    this.#ring = toEncryptionKeyRing(options);
  }

  /** The id of the key new payloads are encrypted with. */
  get currentKeyId(): string {
    return this.#ring.currentKeyId;
  }

  async encode(payloads: Payload[]): Promise<Payload[]> {
    const { currentKeyId, keys } = this.#ring;
    const key = keys.get(currentKeyId) as Buffer;
    return payloads.map((payload) => {
      const iv = randomBytes(ivBytes);
      const cipher = createCipheriv('aes-256-gcm', key, iv);
      const plain = PayloadMessage.encode(payload).finish();
      return {
        metadata: {
          encoding: textEncoder.encode(encryptedEncoding),
          [encryptionKeyIdMetadataKey]: textEncoder.encode(currentKeyId),
        },
        data: Buffer.concat([iv, cipher.update(plain), cipher.final(), cipher.getAuthTag()]),
      };
    });
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#decodeOne(payload));
  }

  #decodeOne(payload: Payload): Payload {
    const encoding = payload.metadata?.['encoding'];
    if (!encoding || textDecoder.decode(encoding) !== encryptedEncoding) return payload;
    const keyIdBytes = payload.metadata?.[encryptionKeyIdMetadataKey];
    const keyId = keyIdBytes ? textDecoder.decode(keyIdBytes) : undefined;
    const key = keyId === undefined ? undefined : this.#ring.keys.get(keyId);
    if (keyId === undefined || key === undefined) {
      throw new RelayError(
        'decryption_failed',
        keyId === undefined
          ? `An encrypted payload lacks its '${encryptionKeyIdMetadataKey}' metadata`
          : `A payload is encrypted with key '${keyId}', which this process does not hold ` +
              `(known: ${[...this.#ring.keys.keys()].join(', ')}); add it to the encryption keys`,
      );
    }
    const data = payload.data ?? new Uint8Array();
    if (data.length < ivBytes + tagBytes) {
      throw new RelayError('decryption_failed', `An encrypted payload (key '${keyId}') is too short to be valid`);
    }
    try {
      const decipher = createDecipheriv('aes-256-gcm', key, data.subarray(0, ivBytes));
      decipher.setAuthTag(data.subarray(data.length - tagBytes));
      const plain = Buffer.concat([decipher.update(data.subarray(ivBytes, data.length - tagBytes)), decipher.final()]);
      const { metadata, data: innerData } = PayloadMessage.decode(plain);
      return { metadata, data: innerData };
    } catch (error) {
      throw new RelayError(
        'decryption_failed',
        `A payload encrypted with key '${keyId}' does not decrypt with the key of that id held here: ` +
          'the key differs from the one that encrypted it, or the payload was altered',
        { cause: error },
      );
    }
  }
}
