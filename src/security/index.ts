export { AesGcmPayloadCodec, encryptedEncoding, encryptionKeyIdMetadataKey } from './aes-gcm-payload-codec.js';
export { createCodecServer, defaultUiOrigins } from './codec-server.js';
export type { CodecServerOptions } from './codec-server.js';
export { encryptionKeyBytes, encryptionOptionsFromEnv, toEncryptionKeyRing } from './encryption-keys.js';
export type { EncryptionKeyRing, EncryptionOptions } from './encryption-keys.js';
export {
  isSecretReference,
  redactSecrets,
  resolveSecretReferences,
  secretsFromEnv,
} from './resolve-secret-references.js';
export type { ResolvedConfig, SecretReference, SecretResolver, SecretSource } from './resolve-secret-references.js';
export { withEncryption } from './with-encryption.js';
