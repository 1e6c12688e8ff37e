import { createHash } from 'node:crypto';
import { RelayError } from '../shared/errors.js';
import type { PayloadRef, PayloadScope, PayloadStore } from './payload-store.js';

/** Options of {@link createMemoryPayloadStore}. */
export interface MemoryPayloadStoreOptions {
  /**
   * The most bytes the store holds; past it the least recently used payloads go (a run that refers to one resends
   * what it needs), so a long-lived worker's memory stays bounded.
   * @default 268_435_456 (256 MiB)
   */
  maxBytes?: number;
}

/**
 * A {@link PayloadStore} in this process's memory: what a worker uses when given no durable store. Lost when the
 * process ends; another worker process does not see it.
 */
export function createMemoryPayloadStore(options: MemoryPayloadStoreOptions = {}): PayloadStore {
  const maxBytes = options.maxBytes ?? 268_435_456;
  // Insertion order is recency order: a read moves its entry to the end.
  const entries = new Map<string, Uint8Array>();
  let bytes = 0;
  const keyOf = (tenantId: string, ref: PayloadRef) => `${tenantId}\u0000${ref}`;
  return {
    async put(scope, data) {
      const ref: PayloadRef = `sha256:${createHash('sha256').update(data).digest('hex')}`;
      const key = keyOf(scope.tenantId, ref);
      const known = entries.get(key);
      if (known) entries.delete(key);
      else bytes += data.byteLength;
      entries.set(key, known ?? Uint8Array.from(data));
      for (const [oldest, stored] of entries) {
        if (bytes <= maxBytes || oldest === key) break;
        entries.delete(oldest);
        bytes -= stored.byteLength;
      }
      return ref;
    },
    async get(scope: PayloadScope, ref) {
      const key = keyOf(scope.tenantId, ref);
      const stored = entries.get(key);
      if (!stored) {
        throw new RelayError(
          'payload_not_found',
          `No payload ${ref} for tenant '${scope.tenantId}' in this worker's memory`,
        );
      }
      entries.delete(key);
      entries.set(key, stored);
      return Uint8Array.from(stored);
    },
    async close() {
      entries.clear();
      bytes = 0;
    },
  };
}
