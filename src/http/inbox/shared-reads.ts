/**
 * Reads that every caller asking for the same key within `maxAgeMs` of a read's start shares, finished or still
 * under way: the inbox's live list of one tenant costs one read however many people show it. A read that fails is
 * not shared past its failure, so the next caller tries again.
 */
export class SharedReads<T> {
  readonly #reads = new Map<string, { startedAt: number; value: Promise<T> }>();

  constructor(private readonly maxAgeMs: number) {}

  read(key: string, load: () => Promise<T>): Promise<T> {
    const now = Date.now();
    const recent = this.#reads.get(key);
    if (recent && now - recent.startedAt < this.maxAgeMs) return recent.value;
    this.#forgetOlderThan(now - this.maxAgeMs);
    const value = load();
    this.#reads.set(key, { startedAt: now, value });
    value.catch(() => {
      if (this.#reads.get(key)?.value === value) this.#reads.delete(key);
    });
    return value;
  }

  /** Keeps the map to the keys read lately (tenants whose inbox nobody shows any more let go of their lists). */
  #forgetOlderThan(cutoff: number): void {
    for (const [key, { startedAt }] of this.#reads) if (startedAt < cutoff) this.#reads.delete(key);
  }
}
