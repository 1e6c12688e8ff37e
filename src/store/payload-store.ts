/**
 * Where a run's large payloads live outside its Temporal history: a model call's context (transcript and tools)
 * is stored once and then referred to, so history grows with what is new in each step, not with the whole
 * transcript again. Content-addressed and scoped by tenant: the same bytes of the same tenant have one address,
 * and no tenant reads another's. Payloads stay while a run that stored them is open and for a retention period after
 * its last such run closed; `sweep` deletes them then.
 */
export interface PayloadStore {
  /**
   * Stores `data` for a run; returns its address, the same whenever the tenant and the bytes are the same (and, in an
   * encrypting store, the current key). Storing bytes again records the run as one more user of them.
   */
  put(scope: PayloadScope, data: Uint8Array): Promise<PayloadRef>;
  /**
   * The bytes stored at `ref` for the scope's tenant. Throws a `RelayError` with code `payload_not_found` when the
   * store does not hold them for that tenant (never stored, expired, or another tenant's), `decryption_failed` when
   * they do not decrypt with the keys held here, and `payload_corrupt` when they no longer hash to `ref`.
   */
  get(scope: PayloadScope, ref: PayloadRef): Promise<Uint8Array>;
  /** Records that the scope's run closed at `closedAt`: its payloads expire `retentionMs` later unless in use. */
  markRunClosed(scope: PayloadScope, closedAt?: Date): Promise<void>;
  /**
   * Deletes every payload that was last stored, and whose every run closed, longer than the retention period before
   * `now`; returns how many it deleted. A payload an open run stored is never deleted.
   */
  sweep(options?: PayloadSweepOptions): Promise<number>;
  /**
   * The runs that stored payloads here and were not marked closed, oldest first (by first store, then tenant and run
   * id), at most `limit` of them: the runs a janitor asks Temporal about (see `startPayloadJanitor`), since nothing
   * else tells a store that a run closed.
   */
  listUnclosedRuns(query: UnclosedRunsQuery): Promise<UnclosedRun[]>;
  /**
   * Connects and makes what the store keeps payloads in (tables, a folder) when missing, then checks it may use them:
   * what its first call would do, done ahead, so that a store it cannot use stops a worker's start instead of failing
   * its runs' model calls. A store without it needs nothing made.
   */
  prepare?(): Promise<void>;
  /** Releases connections and files; the store is not used after it. */
  close(): Promise<void>;
}

/** Who a payload belongs to. */
export interface PayloadScope {
  tenantId: string;
  runId: string;
}

/**
 * A payload's address: `sha256:` and the hex digest of the tenant's bytes (SHA-256 of them, or in an encrypting store
 * an HMAC-SHA-256 of the tenant id and them under a key derived from the encryption key).
 */
export type PayloadRef = `sha256:${string}`;

/** A run that stored payloads and was not marked closed. */
export interface UnclosedRun extends PayloadScope {
  /** When the run first stored a payload here. */
  firstStoredAt: Date;
}

/** Which runs `listUnclosedRuns` returns. */
export interface UnclosedRunsQuery {
  /** The most runs to return: a positive integer. */
  limit: number;
  /**
   * Only the runs listed after this one, typically the last of the previous page; it need not be unclosed any more.
   * @default from the oldest
   */
  after?: UnclosedRun;
}

/** What `sweep` counts as expired. */
export interface PayloadSweepOptions {
  /**
   * The time the retention period is measured back from.
   * @default the current time
   */
  now?: Date;
  /**
   * How long a payload outlives the last run that used it, in milliseconds.
   * @default the store's `retentionMs`
   */
  retentionMs?: number;
}
