import { createHash, createHmac, hkdfSync } from 'node:crypto';
import { decryptAesGcm, encryptAesGcm } from '../security/aes-gcm.js';
import { decryptionKey, toEncryptionKeyRing } from '../security/encryption-keys.js';
import type { EncryptionKeyRing, EncryptionOptions } from '../security/encryption-keys.js';
import { RelayError } from '../shared/errors.js';
import type { PayloadRef, PayloadScope } from './payload-store.js';

/** A payload as a store keeps it at rest. */
export interface SealedPayload {
  /** The id of the key `body` is encrypted with; undefined when it is the plaintext. */
  keyId: string | undefined;
  /** The plaintext, or `iv ‖ ciphertext ‖ tag` (AES-256-GCM). */
  body: Uint8Array;
}

/** Addresses, encrypts and checks payloads the same way for every store. */
export interface PayloadSealer {
  /** The address of a tenant's bytes. */
  address(tenantId: string, data: Uint8Array): PayloadRef;
  /** The bytes as they are kept at rest: encrypted under the current key when the store encrypts. */
  seal(tenantId: string, ref: PayloadRef, data: Uint8Array): SealedPayload;
  /** The plaintext of a sealed payload; throws `decryption_failed` or `payload_corrupt` instead of wrong bytes. */
  open(tenantId: string, ref: PayloadRef, sealed: SealedPayload): Uint8Array;
}

const refPattern = /^sha256:[0-9a-f]{64}$/;
const addressKeyInfo = 'relay-e payload-store address';

/**
 * Without encryption a payload's address is the SHA-256 of its bytes, which anyone can check. With encryption it is an
 * HMAC-SHA-256 of the tenant id and the bytes under a key derived (HKDF) from the current encryption key, so an
 * address reveals nothing about the plaintext and equal bytes of two tenants have different addresses; the blob is
 * encrypted with the tenant and address as additional data, so it does not decrypt anywhere else.
 */
export function createPayloadSealer(encryption?: EncryptionOptions): PayloadSealer {
  const ring = encryption ? toEncryptionKeyRing(encryption) : undefined;
  const addressKeys = new Map<string, Buffer>();
  const addressKey = (keyRing: EncryptionKeyRing, keyId: string) => {
    let key = addressKeys.get(keyId);
    if (!key) {
      const material = decryptionKey(keyRing, keyId, 'A stored payload');
      key = Buffer.from(hkdfSync('sha256', material, new Uint8Array(), addressKeyInfo, 32));
      addressKeys.set(keyId, key);
    }
    return key;
  };
  const addressWith = (keyId: string | undefined, tenantId: string, data: Uint8Array): PayloadRef =>
    ring && keyId !== undefined ? keyedAddress(addressKey(ring, keyId), tenantId, data) : plainAddress(data);

  return {
    address: (tenantId, data) => addressWith(ring?.currentKeyId, tenantId, data),
    seal(tenantId, ref, data) {
      if (!ring) return { keyId: undefined, body: data };
      const key = ring.keys.get(ring.currentKeyId) as Buffer;
      return { keyId: ring.currentKeyId, body: encryptAesGcm(key, data, associatedData(tenantId, ref)) };
    },
    open(tenantId, ref, sealed) {
      const data = sealed.keyId === undefined ? sealed.body : decrypt(ring, tenantId, ref, sealed);
      // A payload stored before encryption was turned on is plaintext under a plain address; it still reads.
      if (addressWith(sealed.keyId, tenantId, data) !== ref) {
        throw new RelayError(
          'payload_corrupt',
          `The stored payload ${ref} no longer matches its address: it was damaged or altered at rest`,
          { details: { ref } },
        );
      }
      // A plain view whichever store read it (some hand out Buffers), so callers and tests see one type.
      return new Uint8Array(data.buffer, data.byteOffset, data.byteLength);
    },
  };
}

/** Throws `invalid_input` unless `ref` is a payload address; stores check before a ref names a file or a row. */
export function assertPayloadRef(ref: string): asserts ref is PayloadRef {
  if (!refPattern.test(ref)) {
    throw new RelayError('invalid_input', `'${ref.slice(0, 80)}' is not a payload address (sha256: and 64 hex digits)`);
  }
}

/**
 * Reads a stored payload with `open`; one found damaged (`payload_corrupt`) is removed with `remove` first, so the next
 * put of the same bytes stores them afresh instead of finding the damaged record and keeping it. The read still fails,
 * and says so. `decryption_failed` removes nothing: a worker holding the wrong key must not destroy what the right one
 * reads.
 */
export async function openOrRemoveDamaged(open: () => Uint8Array, remove: () => Promise<void>): Promise<Uint8Array> {
  try {
    return open();
  } catch (error) {
    if (!RelayError.hasCode(error, 'payload_corrupt')) throw error;
    await remove();
    throw new RelayError(
      'payload_corrupt',
      `${error.message}; it is removed, so storing the same bytes again stores them afresh`,
      { cause: error, ...(error.details ? { details: error.details } : {}) },
    );
  }
}

/** The `payload_not_found` error every store throws, worded the same but for how else a store may have lost it. */
export function payloadNotFound(scope: PayloadScope, ref: string, orElse = 'it expired'): RelayError {
  return new RelayError(
    'payload_not_found',
    `No payload ${ref} is stored for tenant '${scope.tenantId}': it was never stored for this tenant, or ${orElse}`,
    { details: { ref } },
  );
}

function plainAddress(data: Uint8Array): PayloadRef {
  return `sha256:${createHash('sha256').update(data).digest('hex')}`;
}

function keyedAddress(key: Buffer, tenantId: string, data: Uint8Array): PayloadRef {
  return `sha256:${createHmac('sha256', key).update(lengthPrefixed(tenantId)).update(data).digest('hex')}`;
}

function decrypt(
  ring: EncryptionKeyRing | undefined,
  tenantId: string,
  ref: PayloadRef,
  sealed: SealedPayload,
): Uint8Array {
  const keyId = sealed.keyId as string;
  if (!ring) {
    throw new RelayError(
      'decryption_failed',
      `The stored payload ${ref} is encrypted with key '${keyId}', and this store was given no encryption keys`,
    );
  }
  const key = decryptionKey(ring, keyId, `The stored payload ${ref}`);
  try {
    return decryptAesGcm(key, sealed.body, associatedData(tenantId, ref));
  } catch (error) {
    throw new RelayError(
      'decryption_failed',
      `The stored payload ${ref} does not decrypt with key '${keyId}' held here: the key differs from the one that ` +
        'encrypted it, or the payload was altered or moved',
      { cause: error, details: { ref } },
    );
  }
}

function associatedData(tenantId: string, ref: PayloadRef): Buffer {
  return Buffer.concat([lengthPrefixed(tenantId), Buffer.from(ref)]);
}

/** The tenant id with its length in front, so no tenant id and bytes can be read as another id and other bytes. */
function lengthPrefixed(text: string): Buffer {
  const bytes = Buffer.from(text);
  const length = Buffer.alloc(4);
  length.writeUInt32BE(bytes.length);
  return Buffer.concat([length, bytes]);
}
