import type { EncryptionOptions } from '../security/encryption-keys.js';
import { RelayError } from '../shared/errors.js';
import { sweepCutoff, toRetentionMs } from './payload-retention.js';
import { assertPayloadRef, createPayloadSealer, payloadNotFound } from './payload-sealer.js';
import type { SealedPayload } from './payload-sealer.js';
import type { PayloadScope, PayloadStore, UnclosedRun, UnclosedRunsQuery } from './payload-store.js';
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
  /**
   * The runs that stored it and have not expired yet, or `'many'` past `maxRunsRecordedPerPayload`: a payload every
   * run puts (a tenant's tools) would otherwise record every run a worker ever served.
   */
  runIds: Set<string> | 'many';
}

const defaultMaxBytes = 64 * 1024 * 1024;

/**
 * Past this many runs a payload is taken as shared by runs without end: retention no longer removes it, the byte
 * bound still does. Without a janitor nothing marks a run closed, so the runs recorded would only grow.
 */
const maxRunsRecordedPerPayload = 1_000;

/**
 * The most runs remembered as not closed; past it the oldest are forgotten. A forgotten run counts as open, so its
 * payloads leave by the byte bound rather than retention, and the ledger of a worker no janitor serves stays bounded.
 */
const maxUnclosedRunsRemembered = 100_000;

/**
 * A payload store in this process's memory, bounded by bytes with least-recently-used eviction: for tests and a
 * single-process worker, since a crash loses what it holds. Keys are (tenant, address), so a tenant can never read
 * another's payload, even one with the same bytes.
 */
export function createMemoryPayloadStore(options: MemoryPayloadStoreOptions = {}): PayloadStore {
  const maxBytes = options.maxBytes ?? defaultMaxBytes;
  if (!Number.isSafeInteger(maxBytes) || maxBytes <= 0) {
    throw new RelayError(
      'invalid_input',
      `The memory payload store's maxBytes must be a positive integer, not ${maxBytes}`,
    );
  }
  const sealer = createPayloadSealer(options.encryption);
  const retentionMs = toRetentionMs(options.retentionMs);
  const payloads = new LruPayloads(maxBytes);
  const runs = new RunLedger();
  // A plain object, as every store is: callers may wrap one by spreading it.
  return {
    async put(scope, data) {
      const ref = sealer.address(scope.tenantId, data);
      const key = payloadKey(scope.tenantId, ref);
      const existing = payloads.peek(key);
      // Copies in and out (below, in get): callers keep their arrays to change, and the store keeps its bytes.
      const sealed = existing?.sealed ?? sealer.seal(scope.tenantId, ref, data.slice());
      const runIds = withRun(existing?.runIds, scope.runId);
      payloads.set(key, { tenantId: scope.tenantId, sealed, lastPutAt: new Date(), runIds });
      runs.stored(scope);
      return ref;
    },
    async get(scope, ref) {
      assertPayloadRef(ref);
      const payload = payloads.use(payloadKey(scope.tenantId, ref));
      if (!payload)
        throw payloadNotFound(scope, ref, `it expired, or this store evicted it to stay within ${maxBytes} bytes`);
      return sealer.open(scope.tenantId, ref, payload.sealed).slice();
    },
    async markRunClosed(scope, closedAt = new Date()) {
      runs.closed(scope, closedAt);
    },
    async sweep(sweepOptions = {}) {
      const cutoff = sweepCutoff(sweepOptions, retentionMs);
      const deleted = payloads.deleteWhere((payload) => {
        const { runIds } = payload;
        if (runIds === 'many') return false;
        for (const runId of runIds) {
          if (!runs.isOpenOrClosedSince(payload.tenantId, runId, cutoff)) runIds.delete(runId);
        }
        return runIds.size === 0 && payload.lastPutAt < cutoff;
      });
      runs.forgetClosedBefore(cutoff);
      return deleted;
    },
    async listUnclosedRuns(query) {
      return runs.unclosedPage(query);
    },
    async close() {
      payloads.clear();
      runs.clear();
    },
  };
}

/**
 * The runs of a payload with `runId` added: in place, since a payload many runs share (a fixed prompt, a common answer)
 * would be copied on every put; `'many'` past the bound.
 */
function withRun(runIds: Set<string> | 'many' | undefined, runId: string): Set<string> | 'many' {
  if (runIds === 'many') return runIds;
  const recorded = runIds ?? new Set<string>();
  recorded.add(runId);
  return recorded.size > maxRunsRecordedPerPayload ? 'many' : recorded;
}

/** Payloads by key, bounded by their bytes: storing past the bound evicts the least recently used. */
class LruPayloads {
  // A Map iterates in insertion order: re-inserting on every use keeps the least recently used first.
  readonly #payloads = new Map<string, MemoryPayload>();
  #heldBytes = 0;

  constructor(private readonly maxBytes: number) {}

  /** The payload, without counting this as a use. */
  peek(key: string): MemoryPayload | undefined {
    return this.#payloads.get(key);
  }

  /** The payload, now the most recently used. */
  use(key: string): MemoryPayload | undefined {
    const payload = this.#payloads.get(key);
    if (payload) {
      this.#payloads.delete(key);
      this.#payloads.set(key, payload);
    }
    return payload;
  }

  /** Holds `payload` as the most recently used, in place of any under `key`, then evicts beyond the bound. */
  set(key: string, payload: MemoryPayload): void {
    const bytes = payload.sealed.body.length;
    if (bytes > this.maxBytes) {
      throw new RelayError(
        'payload_too_large',
        `A payload of ${bytes} bytes exceeds the memory payload store's ${this.maxBytes} bytes`,
      );
    }
    const existing = this.#payloads.get(key);
    if (existing) this.#delete(key, existing);
    this.#payloads.set(key, payload);
    this.#heldBytes += bytes;
    for (const [oldKey, old] of this.#payloads) {
      if (this.#heldBytes <= this.maxBytes) return;
      this.#delete(oldKey, old);
    }
  }

  /** Deletes every payload `expired` says yes to (it may change the payload first); returns how many. */
  deleteWhere(expired: (payload: MemoryPayload) => boolean): number {
    let deleted = 0;
    for (const [key, payload] of this.#payloads) {
      if (!expired(payload)) continue;
      this.#delete(key, payload);
      deleted++;
    }
    return deleted;
  }

  clear(): void {
    this.#payloads.clear();
    this.#heldBytes = 0;
  }

  #delete(key: string, payload: MemoryPayload): void {
    this.#payloads.delete(key);
    this.#heldBytes -= payload.sealed.body.length;
  }
}

/** A run marked closed: when, and when it first stored, kept for a put that reopens it. */
interface ClosedRun {
  closedAt: Date;
  firstStoredAt: Date | undefined;
}

/** The runs that stored payloads in a memory store: those not marked closed, and when the others closed. */
class RunLedger {
  readonly #closed = new Map<string, ClosedRun>();
  readonly #unclosed = new Map<string, UnclosedRun>();

  /**
   * Records the run as unclosed, clearing any close mark: a run that stores after its close is open again (a Temporal
   * reset reopens a run under its id), or is a late activity's, which the janitor marks closed again at its close.
   */
  stored({ tenantId, runId }: PayloadScope): void {
    const key = runKey(tenantId, runId);
    if (this.#unclosed.has(key)) return;
    const reopened = this.#closed.get(key);
    this.#closed.delete(key);
    this.#unclosed.set(key, { tenantId, runId, firstStoredAt: reopened?.firstStoredAt ?? new Date() });
    // A Map iterates in insertion order: the first key is the run remembered longest.
    if (this.#unclosed.size > maxUnclosedRunsRemembered) {
      const oldest = this.#unclosed.keys().next();
      if (!oldest.done) this.#unclosed.delete(oldest.value);
    }
  }

  closed({ tenantId, runId }: PayloadScope, closedAt: Date): void {
    const key = runKey(tenantId, runId);
    const firstStoredAt = (this.#unclosed.get(key) ?? this.#closed.get(key))?.firstStoredAt;
    this.#closed.set(key, { closedAt, firstStoredAt });
    this.#unclosed.delete(key);
  }

  isOpenOrClosedSince(tenantId: string, runId: string, cutoff: Date): boolean {
    const closedAt = this.#closed.get(runKey(tenantId, runId))?.closedAt;
    return closedAt === undefined || closedAt >= cutoff;
  }

  forgetClosedBefore(cutoff: Date): void {
    for (const [key, { closedAt }] of this.#closed) if (closedAt < cutoff) this.#closed.delete(key);
  }

  unclosedPage(query: UnclosedRunsQuery): UnclosedRun[] {
    return pageOfUnclosedRuns(this.#unclosed.values(), query);
  }

  clear(): void {
    this.#closed.clear();
    this.#unclosed.clear();
  }
}

function payloadKey(tenantId: string, ref: string): string {
  return JSON.stringify({ tenantId, ref });
}

function runKey(tenantId: string, runId: string): string {
  return JSON.stringify({ tenantId, runId });
}
