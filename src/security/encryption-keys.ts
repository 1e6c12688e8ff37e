import { RelayError } from '../shared/errors.js';

/** The keys a payload codec encrypts and decrypts with; several keys make rotation possible. */
export interface EncryptionOptions {
  /**
   * AES-256 keys by id, each 32 bytes given raw or as base64. The id is stored in the clear beside every payload,
   * so keep old keys here until nothing written with them is read any more.
   */
  keys: Readonly<Record<string, Uint8Array | string>>;
  /**
   * The id of the key new payloads are encrypted with.
   * @default the first key of `keys`
   */
  currentKeyId?: string;
}

/** Checked keys, decoded: the current one and every one that can still decrypt. */
export interface EncryptionKeyRing {
  currentKeyId: string;
  keys: ReadonlyMap<string, Buffer>;
}

/** AES-256 takes a 32-byte key; anything else is a configuration mistake, not a weaker cipher. */
export const encryptionKeyBytes = 32;

const keyIdPattern = /^[\w.-]{1,64}$/;

/** Validates and decodes encryption options; errors name a key by its id, never by its material. */
export function toEncryptionKeyRing(options: EncryptionOptions): EncryptionKeyRing {
  const keys = new Map<string, Buffer>();
  for (const [id, material] of Object.entries(options.keys)) {
    if (!keyIdPattern.test(id)) {
      throw new RelayError('invalid_input', `Encryption key id '${id}' must be 1 to 64 letters, digits or . _ -`);
    }
    const key = typeof material === 'string' ? decodeBase64(material) : Buffer.from(material);
    if (key?.length !== encryptionKeyBytes) {
      throw new RelayError(
        'invalid_input',
        `Encryption key '${id}' must be ${encryptionKeyBytes} bytes (AES-256), given raw or as base64; ` +
          `it is ${key === undefined ? 'not valid base64' : `${key.length} bytes`}`,
      );
    }
    keys.set(id, key);
  }
  const currentKeyId = options.currentKeyId ?? keys.keys().next().value;
  if (currentKeyId === undefined) throw new RelayError('invalid_input', 'Encryption needs at least one key');
  if (!keys.has(currentKeyId)) {
    throw new RelayError(
      'invalid_input',
      `The current encryption key id '${currentKeyId}' is not among the keys (${[...keys.keys()].join(', ')})`,
    );
  }
  return { currentKeyId, keys };
}

/**
 * The key named `keyId`, which `subject` (say 'A payload') was encrypted with; throws `decryption_failed` naming the
 * keys held here when it is not among them.
 */
export function decryptionKey(ring: EncryptionKeyRing, keyId: string, subject: string): Buffer {
  const key = ring.keys.get(keyId);
  if (key) return key;
  throw new RelayError(
    'decryption_failed',
    `${subject} is encrypted with key '${keyId}', which this process does not hold ` +
      `(known: ${[...ring.keys.keys()].join(', ')}); add it to the encryption keys`,
  );
}

/**
 * Reads `RELAY_E_ENCRYPTION_KEYS` (`id1:base64key,id2:base64key`) and `RELAY_E_ENCRYPTION_KEY_ID` (the current key,
 * the first listed when unset); undefined when no keys are set, which leaves payloads unencrypted.
 */
export function encryptionOptionsFromEnv(env: NodeJS.ProcessEnv = process.env): EncryptionOptions | undefined {
  const list = env['RELAY_E_ENCRYPTION_KEYS']?.trim();
  const currentKeyId = env['RELAY_E_ENCRYPTION_KEY_ID']?.trim();
  // A key id alone means keys were meant to be set: without this, payloads would be stored unencrypted.
  if (!list && currentKeyId) {
    throw new RelayError(
      'invalid_input',
      'RELAY_E_ENCRYPTION_KEY_ID is set but RELAY_E_ENCRYPTION_KEYS is not: set the keys, or unset the key id',
    );
  }
  if (!list) return undefined;
  const keys: Record<string, string> = {};
  list.split(',').forEach((item, index) => {
    const [id, material, ...rest] = item.trim().split(':');
    if (!id || !material || rest.length > 0) {
      // The entry holds key material, so the message points at it by position instead of quoting it.
      throw new RelayError('invalid_input', `RELAY_E_ENCRYPTION_KEYS entry ${index + 1}: expected 'id:base64key'`);
    }
    keys[id] = material;
  });
  const options: EncryptionOptions = { keys, ...(currentKeyId ? { currentKeyId } : {}) };
  toEncryptionKeyRing(options);
  return options;
}

function decodeBase64(text: string): Buffer | undefined {
  const trimmed = text.trim();
  if (!/^[A-Za-z0-9+/_-]+={0,2}$/.test(trimmed)) return undefined;
  return Buffer.from(trimmed, trimmed.includes('-') || trimmed.includes('_') ? 'base64url' : 'base64');
}
