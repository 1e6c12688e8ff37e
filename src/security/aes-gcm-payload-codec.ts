import type { Payload, PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { RelayError } from '../shared/errors.js';
import { aesGcmOverheadBytes, decryptAesGcm, encryptAesGcm } from './aes-gcm.js';
import { decryptionKey, toEncryptionKeyRing } from './encryption-keys.js';
import type { EncryptionKeyRing, EncryptionOptions } from './encryption-keys.js';

/** The `encoding` metadata of an encrypted payload, as Temporal's encryption samples spell it. */
export const encryptedEncoding = 'binary/encrypted';

/** The metadata key that names the key a payload was encrypted with (stored in the clear). */
export const encryptionKeyIdMetadataKey = 'encryption-key-id';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;
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
    return payloads.map((payload) => ({
      metadata: {
        encoding: textEncoder.encode(encryptedEncoding),
        [encryptionKeyIdMetadataKey]: textEncoder.encode(currentKeyId),
      },
      data: encryptAesGcm(key, PayloadMessage.encode(payload).finish()),
    }));
  }

  async decode(payloads: Payload[]): Promise<Payload[]> {
    return payloads.map((payload) => this.#decodeOne(payload));
  }

  #decodeOne(payload: Payload): Payload {
    const encoding = payload.metadata?.['encoding'];
    if (!encoding || textDecoder.decode(encoding) !== encryptedEncoding) return payload;
    const keyIdBytes = payload.metadata?.[encryptionKeyIdMetadataKey];
    if (!keyIdBytes) {
      throw new RelayError(
        'decryption_failed',
        `An encrypted payload lacks its '${encryptionKeyIdMetadataKey}' metadata`,
      );
    }
    const keyId = textDecoder.decode(keyIdBytes);
    const key = decryptionKey(this.#ring, keyId, 'A payload');
    const data = payload.data ?? new Uint8Array();
    if (data.length < aesGcmOverheadBytes) {
      throw new RelayError('decryption_failed', `An encrypted payload (key '${keyId}') is too short to be valid`);
    }
    try {
      const { metadata, data: innerData } = PayloadMessage.decode(decryptAesGcm(key, data));
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
