import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';

const ivBytes = 12;
const tagBytes = 16;

/** The fewest bytes a sealed message can have: its IV and its authentication tag around empty ciphertext. */
export const aesGcmOverheadBytes = ivBytes + tagBytes;

/**
 * Encrypts with AES-256-GCM under a fresh 12-byte IV and returns `iv ‖ ciphertext ‖ tag`. `additionalData` is
 * authenticated but not stored: decryption must be given the same bytes, which binds a message to its context.
 */
export function encryptAesGcm(key: Buffer, plaintext: Uint8Array, additionalData?: Uint8Array): Buffer {
  const iv = randomBytes(ivBytes);
  const cipher = createCipheriv('aes-256-gcm', key, iv);
  if (additionalData) cipher.setAAD(additionalData);
  return Buffer.concat([iv, cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/**
 * Decrypts what `encryptAesGcm` sealed. Throws when the message is shorter than `aesGcmOverheadBytes` or does not
 * authenticate: another key, other additional data, or altered bytes.
 */
export function decryptAesGcm(key: Buffer, sealed: Uint8Array, additionalData?: Uint8Array): Buffer {
  if (sealed.length < aesGcmOverheadBytes) throw new Error(`${sealed.length} bytes are too few to be AES-GCM`);
  const decipher = createDecipheriv('aes-256-gcm', key, sealed.subarray(0, ivBytes));
  if (additionalData) decipher.setAAD(additionalData);
  decipher.setAuthTag(sealed.subarray(sealed.length - tagBytes));
  return Buffer.concat([decipher.update(sealed.subarray(ivBytes, sealed.length - tagBytes)), decipher.final()]);
}
