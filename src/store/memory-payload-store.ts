import type { EncryptionOptions } from '../security/encryption-keys.js';
import { RelayError } from '../shared/errors.js';
import { sweepCutoff, toRetentionMs } from './payload-retention.js';
import { assertPayloadRef, createPayloadSealer, payloadNotFound } from './payload-sealer.js';
import type { SealedPayload } from './payload-sealer.js';
import type { PayloadScope, PayloadStore, UnclosedRun } from './payload-store.js';
import { pageOfUnclosedRuns } from './unclosed-runs.js';

/** Options of `createMemoryPayloadStore`. */
export interface MemoryPayloadStoreOptions {
  /**
   * The most payload bytes held; storing more evicts the least recently used payloads, even ones an open run still
   * needs (a later `get` of them throws `payload_not_found`), so size it for every open run's context.
   * @default 64 MiB
   */
  maxBytes?: number;
  /** Keys to encrypt payloads with; they also key the addresses (see `PayloadRef`). */
  encryption?: EncryptionOptions;
  /**
   * How long a payload outlives the last run that used it, in milliseconds.
   * @default defaultPayloadRetentionMs (7 days)
   */
  retentionMs?: number;
}

interface MemoryPayload {
  tenantId: string;
  sealed: SealedPayload;
  lastPutAt: Date;
  /** The runs that stored it and have not expired yet. */
  runIds: Set<string>;
}

const defaultMaxBytes = 64 * 1024 * 1024;

/**
 * A payload store in this process's memory, bounded by bytes with least-recently-used eviction: for tests and a
 * single-process worker, since a crash loses what it holds. Keys are (tenant, address), so a tenant can never read
 * another's payload, even one with the same bytes.
 */
export function createMemoryPayloadStore(options: MemoryPayloadStoreOptions = {}): PayloadStore {
  const sealer = createPayloadSealer(options.encryption);
  const retentionMs = toRetentionMs(options.retentionMs);
  const maxBytes = options.maxBytes ?? defaultMaxBytes;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RelayError(
      'invalid_input',
      `The memory payload store's maxBytes must be a positive integer, not ${maxBytes}`,
    );
  }
  // A Map iterates in insertion order: re-inserting on every use keeps the least recently used first.
  const payloads = new Map<string, MemoryPayload>();
  const closedRuns = new Map<string, Date>();
  const unclosedRuns = new Map<string, UnclosedRun>();
  let heldBytes = 0;

  const remove = (key: string, payload: MemoryPayload) => {
    payloads.delete(key);
    heldBytes -= payload.sealed.body.length;
  };
  const evictBeyondLimit = () => {
    for (const [key, payload] of payloads) {
      if (heldBytes <= maxBytes) return;
      remove(key, payload);
    }
  };
  const isOpenOrRecent = (tenantId: string, runId: string, cutoff: Date) => {
    const closedAt = closedRuns.get(runKey(tenantId, runId));
    return closedAt === undefined || closedAt >= cutoff;
  };
  const recordRun = (scope: PayloadScope) => {
    const key = runKey(scope.tenantId, scope.runId);
    if (closedRuns.has(key) || unclosedRuns.has(key)) return;
    unclosedRuns.set(key, { tenantId: scope.tenantId, runId: scope.runId, firstStoredAt: new Date() });
  };

  return {
    async put(scope, data) {
      const ref = sealer.address(scope.tenantId, data);
      const key = payloadKey(scope.tenantId, ref);
      const existing = payloads.get(key);
      // Copies in and out (below, in get): callers keep their arrays to change, and the store keeps its bytes.
      const sealed = existing?.sealed ?? sealer.seal(scope.tenantId, ref, data.slice());
      if (sealed.body.length > maxBytes) {
        throw new RelayError(
          'payload_too_large',
          `A payload of ${sealed.body.length} bytes exceeds the memory payload store's ${maxBytes} bytes`,
        );
      }
      if (existing) remove(key, existing);
      // Added to in place: a payload many runs share (a fixed prompt, a common answer) would be copied on every put.
      const runIds = existing?.runIds ?? new Set<string>();
      runIds.add(scope.runId);
      payloads.set(key, { tenantId: scope.tenantId, sealed, lastPutAt: new Date(), runIds });
      heldBytes += sealed.body.length;
      recordRun(scope);
      evictBeyondLimit();
      return ref;
    },
    async get(scope, ref) {
      assertPayloadRef(ref);
      const key = payloadKey(scope.tenantId, ref);
      const payload = payloads.get(key);
      if (!payload) throw payloadNotFound(scope, ref);
      payloads.delete(key);
      payloads.set(key, payload);
      return sealer.open(scope.tenantId, ref, payload.sealed).slice();
    },
    async markRunClosed(scope, closedAt = new Date()) {
      const key = runKey(scope.tenantId, scope.runId);
      closedRuns.set(key, closedAt);
      unclosedRuns.delete(key);
    },
    async sweep(sweepOptions = {}) {
      const cutoff = sweepCutoff(sweepOptions, retentionMs);
      let deleted = 0;
      for (const [key, payload] of payloads) {
        for (const runId of payload.runIds) {
          if (!isOpenOrRecent(payload.tenantId, runId, cutoff)) payload.runIds.delete(runId);
        }
        if (payload.runIds.size === 0 && payload.lastPutAt < cutoff) {
          remove(key, payload);
          deleted++;
        }
      }
      for (const [key, closedAt] of closedRuns) if (closedAt < cutoff) closedRuns.delete(key);
      return deleted;
    },
    async listUnclosedRuns(query) {
      return pageOfUnclosedRuns(unclosedRuns.values(), query);
    },
    async close() {
      payloads.clear();
      closedRuns.clear();
      unclosedRuns.clear();
      heldBytes = 0;
    },
  };
}

function payloadKey(tenantId: string, ref: string): string {
  return JSON.stringify({ tenantId, ref });
}

function runKey(tenantId: string, runId: string): string {
  return JSON.stringify({ tenantId, runId });
}
