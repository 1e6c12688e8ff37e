/**
 * Where a run's large payloads live outside its Temporal history: a model call's context (transcript and tools)
 * is stored once and then referred to, so history grows with what is new in each step, not with the whole
 * transcript again. Content-addressed and scoped by tenant: the same bytes of the same tenant have one address,
 * and no tenant reads another's.
 */
export interface PayloadStore {
  /** Stores `data` for a run; returns its address, the same whenever the tenant and the bytes are the same. */
  put(scope: PayloadScope, data: Uint8Array): Promise<PayloadRef>;
  /**
   * The bytes stored at `ref` for the scope's tenant. Throws a `RelayError` with code `payload_not_found` when the
   * store does not hold them for that tenant (never stored, expired, or another tenant's).
   */
  get(scope: PayloadScope, ref: PayloadRef): Promise<Uint8Array>;
  /** Releases connections and files; the store is not used after it. */
  close(): Promise<void>;
}

/** Who a payload belongs to. */
export interface PayloadScope {
  tenantId: string;
  runId: string;
}

/** A payload's address: `sha256:` and the hex digest of the tenant's bytes. */
export type PayloadRef = `sha256:${string}`;
