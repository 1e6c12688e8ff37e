/**
 * Reads that callers of one key share only when the read starts after they asked, so each gets an answer as fresh
 * as a read of its own: a caller who asks while a read is under way waits for it to end and shares the next one with
 * everyone else who asked meanwhile. N callers at once cost two reads, not N.
 */
export class FreshReads<T> {
  readonly #running = new Map<string, Promise<T>>();
  readonly #next = new Map<string, Promise<T>>();

  read(key: string, load: () => Promise<T>): Promise<T> {
    const queued = this.#next.get(key);
    if (queued) return queued;
    const running = this.#running.get(key);
    if (!running) return this.#start(key, load);
    const next = running
      .catch(() => undefined)
      .then(() => {
        this.#next.delete(key);
        return this.#start(key, load);
      });
    this.#next.set(key, next);
    return next;
  }

  #start(key: string, load: () => Promise<T>): Promise<T> {
    const read = load().finally(() => {
      if (this.#running.get(key) === read) this.#running.delete(key);
    });
    this.#running.set(key, read);
    return read;
  }
}
