import type { Payload, PayloadCodec, SerializationContext } from '@temporalio/common';
import proto from '@temporalio/proto';
import { RelayError } from '../shared/errors.js';
import { aesGcmOverheadBytes, decryptAesGcm, encryptAesGcm } from './aes-gcm.js';
import { decryptionKey, toEncryptionKeyRing } from './encryption-keys.js';
import type { EncryptionKeyRing, EncryptionOptions } from './encryption-keys.js';

/** The `encoding` metadata of an encrypted payload, as Temporal's encryption samples spell it. */
export const encryptedEncoding = 'binary/encrypted';

/** The metadata key that names the key a payload was encrypted with (stored in the clear). */
export const encryptionKeyIdMetadataKey = 'encryption-key-id';

/**
 * The metadata key that names the workflow (for Relay-E, the run) a payload belongs to, stored in the clear and
 * authenticated with the payload: decryption fails if it is changed. The codec server reads it to decrypt for a
 * tenant only its own runs.
 */
export const encryptionWorkflowIdMetadataKey = 'encryption-workflow-id';

const { Payload: PayloadMessage } = proto.temporal.api.common.v1;
const textEncoder = new TextEncoder();
const textDecoder = new TextDecoder();

/**
 * Encrypts whole payloads (data and metadata) with AES-256-GCM and a fresh 12-byte IV each, so Temporal stores only
 * `iv ‖ ciphertext ‖ tag` with the key id beside it, and the id of the workflow the payload belongs to when the SDK
 * says (its serialization context), bound to the ciphertext as additional data. Decrypts with whichever known key the
 * payload names, which is what makes rotation work; payloads that were never encrypted pass through unchanged.
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

  async encode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    const { currentKeyId, keys } = this.#ring;
    const key = keys.get(currentKeyId) as Buffer;
    const workflowId = context?.workflowId;
    const boundTo = workflowId === undefined ? undefined : textEncoder.encode(workflowId);
    return payloads.map((payload) => ({
      metadata: {
        encoding: textEncoder.encode(encryptedEncoding),
        [encryptionKeyIdMetadataKey]: textEncoder.encode(currentKeyId),
        ...(boundTo ? { [encryptionWorkflowIdMetadataKey]: boundTo } : {}),
      },
      data: encryptAesGcm(key, PayloadMessage.encode(payload).finish(), boundTo),
    }));
  }

  async decode(payloads: Payload[], context?: SerializationContext): Promise<Payload[]> {
    return payloads.map((payload) => {
      refuseOtherWorkflowsPayload(payload, context);
      return this.#decodeOne(payload);
    });
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
    const boundTo = payload.metadata?.[encryptionWorkflowIdMetadataKey] ?? undefined;
    // An empty id would bind to nothing (empty additional data is none), so it would read as a payload of no run.
    if (boundTo?.length === 0) {
      throw new RelayError('decryption_failed', `An encrypted payload (key '${keyId}') names an empty workflow id`);
    }
    try {
      const { metadata, data: innerData } = PayloadMessage.decode(decryptAesGcm(key, data, boundTo));
      return { metadata, data: innerData };
    } catch (error) {
      throw new RelayError(
        'decryption_failed',
        `A payload encrypted with key '${keyId}' does not decrypt with the key of that id held here: ` +
          'the key differs from the one that encrypted it, or the payload (or the workflow id beside it) was altered',
        { cause: error },
      );
    }
  }
}

/**
 * Refuses a payload that names a workflow other than the one the SDK decodes it for: the name is bound to the
 * ciphertext, but a payload copied whole from one run into another's signal or update would still decrypt there, and
 * what that run records of it is then readable with a codec token of the run's own tenant. A payload that names no
 * workflow (encoded where the SDK gave no context, as the Temporal UI does), or read without a context (the codec
 * server), is not checked.
 */
function refuseOtherWorkflowsPayload(payload: Payload, context: SerializationContext | undefined): void {
  const named = payloadWorkflowId(payload);
  const readFor = context?.workflowId;
  if (named === undefined || readFor === undefined || named === readFor) return;
  throw new RelayError(
    'decryption_failed',
    `An encrypted payload of workflow '${named}' was sent to workflow '${readFor}': a payload is read only by its own`,
  );
}

/** The workflow an encrypted payload names as its own; trust it only once the payload has decrypted. */
export function payloadWorkflowId(payload: Payload): string | undefined {
  const id = payload.metadata?.[encryptionWorkflowIdMetadataKey];
  return id && id.length > 0 ? textDecoder.decode(id) : undefined;
}
