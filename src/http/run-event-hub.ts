import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { RunEvent } from '../shared/run-types.js';

export interface FollowRunOptions {
  /** The caller's tenant: another tenant's run is `run_not_found`, exactly like a run that does not exist. */
  tenantId: string;
  /** Only events with a higher sequence number. */
  after: number;
  /** Ends the follow; the follower is forgotten even if it never read an event. */
  signal: AbortSignal;
}

/**
 * Follows runs for every follower in this process with one poller per run: the first follower of a run starts
 * it, the last one to leave stops it, and each follower reads the events it has not seen from what the poller
 * holds, so N followers of one run cost the workers what one does.
 */
export class RunEventHub {
  private readonly pollers = new Map<string, RunPoller>();

  constructor(
    private readonly client: RelayClient,
    /** How often a run's poller asks it for new events. */
    private readonly pollIntervalMs: number,
  ) {}

  /** Checks the caller may read the run, then yields its events after `options.after` until it ends or the signal aborts. */
  async follow(runId: string, options: FollowRunOptions): Promise<AsyncGenerator<RunEvent>> {
    let poller = this.pollers.get(runId);
    if (poller === undefined) {
      const { tenantId, lastEventSeq } = await this.client.getRun(runId, { tenantId: options.tenantId });
      poller = this.pollers.get(runId) ?? this.startPoller(runId, tenantId, Math.min(options.after, lastEventSeq));
    } else if (poller.tenantId !== options.tenantId) {
      throw runNotFound(runId);
    }
    return poller.subscribe(options.after, options.signal);
  }

  /** Throws what {@link follow} would refuse the caller with, without following the run. */
  async checkFollower(runId: string, tenantId: string): Promise<void> {
    const poller = this.pollers.get(runId);
    if (poller === undefined) await this.client.getRun(runId, { tenantId });
    else if (poller.tenantId !== tenantId) throw runNotFound(runId);
  }

  private startPoller(runId: string, tenantId: string, after: number): RunPoller {
    const poller = new RunPoller(this.client, runId, tenantId, after, this.pollIntervalMs, () => {
      if (this.pollers.get(runId) === poller) this.pollers.delete(runId);
    });
    this.pollers.set(runId, poller);
    return poller;
  }
}

function runNotFound(runId: string): RelayError {
  return new RelayError('run_not_found', `Run '${runId}' not found`);
}

/**
 * One run's events as one `watch` reads them. It holds every event in (`heldAfter`, newest] until every follower
 * has read it; a follower that joins further back reads that gap once from the run itself.
 */
class RunPoller {
  private held: RunEvent[] = [];
  private heldAfter: number;
  /** Each follower's last event read, or where the held events began when it joined further back. */
  private readonly positions = new Map<symbol, number>();
  /** Text deltas not yet read by each follower: ephemeral, so never held for followers who join later. */
  private readonly deltas = new Map<symbol, RunEvent[]>();
  private readonly waiters = new Set<() => void>();
  private readonly stopped = new AbortController();
  private outcome: { ended: true } | { failed: unknown } | undefined;

  constructor(
    private readonly client: RelayClient,
    private readonly runId: string,
    readonly tenantId: string,
    after: number,
    pollIntervalMs: number,
    private readonly onClose: () => void,
  ) {
    this.heldAfter = after;
    void this.poll(after, pollIntervalMs);
  }

  subscribe(after: number, signal: AbortSignal): AsyncGenerator<RunEvent> {
    const follower = Symbol('follower');
    this.positions.set(follower, Math.max(after, this.heldAfter));
    this.deltas.set(follower, []);
    const leave = () => this.leave(follower);
    signal.addEventListener('abort', leave, { once: true });
    return this.deliver(follower, after, signal, leave);
  }

  private async *deliver(follower: symbol, after: number, signal: AbortSignal, leave: () => void) {
    try {
      let position = after;
      if (position < this.heldAfter) {
        for (const event of await this.client.events(this.runId, { after: position })) {
          yield event;
          position = event.seq;
        }
      }
      while (!signal.aborted) {
        const unread = this.held.filter((event) => event.seq > position);
        for (const event of unread) {
          yield event;
          position = event.seq;
          this.advance(follower, position);
        }
        const deltas = this.deltas.get(follower)?.splice(0) ?? [];
        for (const delta of deltas) yield delta;
        if (unread.length > 0 || deltas.length > 0) continue;
        if (this.outcome && 'failed' in this.outcome) throw this.outcome.failed;
        if (this.outcome) return;
        await this.changed(signal);
      }
    } finally {
      signal.removeEventListener('abort', leave);
      leave();
    }
  }

  private async poll(after: number, pollIntervalMs: number): Promise<void> {
    try {
      for await (const event of this.client.watch(this.runId, { after, pollIntervalMs, signal: this.stopped.signal })) {
        if (event.type === 'model_delta') for (const queue of this.deltas.values()) queue.push(event);
        else this.held.push(event);
        this.notify();
      }
      this.outcome = { ended: true };
    } catch (error) {
      this.outcome = { failed: error };
    } finally {
      this.onClose();
      this.notify();
    }
  }

  private advance(follower: symbol, position: number): void {
    this.positions.set(follower, position);
    this.release();
  }

  private leave(follower: symbol): void {
    this.deltas.delete(follower);
    if (!this.positions.delete(follower)) return;
    if (this.positions.size > 0) return this.release();
    this.stopped.abort();
    this.onClose();
  }

  /** Lets go of the events every follower has read. */
  private release(): void {
    const slowest = Math.min(...this.positions.values());
    if (slowest <= this.heldAfter) return;
    this.held = this.held.filter((event) => event.seq > slowest);
    this.heldAfter = slowest;
  }

  private changed(signal: AbortSignal): Promise<void> {
    return new Promise((resolve) => {
      const wake = () => {
        this.waiters.delete(wake);
        signal.removeEventListener('abort', wake);
        resolve();
      };
      this.waiters.add(wake);
      signal.addEventListener('abort', wake, { once: true });
    });
  }

  private notify(): void {
    for (const wake of [...this.waiters]) wake();
  }
}
