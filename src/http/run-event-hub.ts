import { setTimeout as sleep } from 'node:timers/promises';
import type { RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import type { RunEvent } from '../shared/run-types.js';

/**
 * Why the run cannot answer, told to its followers once each time it stops answering (and to those who join while it
 * still cannot): no worker polls, or its workflow task fails (read once from its history, naming the reset a history
 * that no longer replays needs). Ephemeral, like a text delta.
 */
export interface RunUnavailable {
  type: 'run_unavailable';
  error: RelayError;
}

/** Told to the followers who were told {@link RunUnavailable} when the run answers again. Ephemeral too. */
export interface RunAvailable {
  type: 'run_available';
}

/** What a follower of a run reads: the run's events, and why it cannot answer when it cannot. */
export type FollowedEvent = RunEvent | RunUnavailable | RunAvailable;

/** What is told to one follower beside the held events, after the events up to `afterSeq`. */
interface Told {
  event: FollowedEvent;
  afterSeq: number;
}

/** The held events a follower has not read and what it was told beside them, in the order the poller learnt them. */
function inTellingOrder(unread: readonly RunEvent[], told: readonly Told[]): FollowedEvent[] {
  const ordered: FollowedEvent[] = [];
  let next = 0;
  for (const event of unread) {
    for (; next < told.length && told[next]!.afterSeq < event.seq; next++) ordered.push(told[next]!.event);
    ordered.push(event);
  }
  return [...ordered, ...told.slice(next).map((entry) => entry.event)];
}

/** Whether a followed event is one of the run's durable events, which the poller holds until every follower read it. */
function isHeld(event: FollowedEvent): event is RunEvent {
  return event.type !== 'model_delta' && event.type !== 'run_unavailable' && event.type !== 'run_available';
}

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
  async follow(runId: string, options: FollowRunOptions): Promise<AsyncGenerator<FollowedEvent>> {
    let poller = this.pollers.get(runId);
    if (poller === undefined) {
      const { start, unavailable } = await this.firstEventToHold(runId, options);
      poller = this.pollers.get(runId) ?? this.startPoller(runId, options.tenantId, start, unavailable);
    } else if (poller.tenantId !== options.tenantId) {
      throw runNotFound(runId);
    }
    return poller.subscribe(options.after, options.signal);
  }

  /** Throws what {@link follow} would refuse the caller with, without following the run. */
  async checkFollower(runId: string, tenantId: string): Promise<void> {
    const poller = this.pollers.get(runId);
    if (poller === undefined) await this.client.assertRunExists(runId, { tenantId });
    else if (poller.tenantId !== tenantId) throw runNotFound(runId);
  }

  /**
   * Where a new poller of the run starts (the caller's tenant checked): after the caller's position, or the run's last
   * event when the caller names one beyond it (a later follower reads from there). A run that cannot answer is
   * followed all the same, from its first event (its last is unknown until it answers), and the refusal is kept so
   * its followers are told why without waiting for another.
   */
  private async firstEventToHold(
    runId: string,
    { tenantId, after }: FollowRunOptions,
  ): Promise<{ start: number; unavailable?: RelayError }> {
    try {
      return { start: Math.min(after, (await this.client.getRun(runId, { tenantId })).lastEventSeq) };
    } catch (error) {
      // Told only after the run's tenant was found to be the caller's (another tenant's run is `run_not_found`).
      if (!RelayError.hasCode(error, 'run_unavailable')) throw error;
      return { start: 0, unavailable: error };
    }
  }

  private startPoller(runId: string, tenantId: string, after: number, unavailable?: RelayError): RunPoller {
    const poller = new RunPoller(this.client, runId, tenantId, after, this.pollIntervalMs, unavailable, () => {
      if (this.pollers.get(runId) === poller) this.pollers.delete(runId);
    });
    this.pollers.set(runId, poller);
    return poller;
  }
}

function runNotFound(runId: string): RelayError {
  return new RelayError('run_not_found', `Run '${runId}' not found`);
}

/** How long a follower who joined behind the held events waits at least to read its gap again when it was refused. */
const gapReadRetryMs = 1_000;

/**
 * One run's events as one `watch` reads them. It holds every event in (`heldAfter`, newest] until every follower
 * has read it; a follower that joins further back reads that gap once from the run itself (waiting, and told why,
 * while the run cannot answer). Why the run cannot answer is read once each time it stops answering, for every
 * follower.
 */
class RunPoller {
  private held: RunEvent[] = [];
  private heldAfter: number;
  /** Each follower's last event read, or where the held events began when it joined further back. */
  private readonly positions = new Map<symbol, number>();
  /** Text deltas and unavailability each follower has not read: ephemeral, so not held for followers who join later. */
  private readonly told = new Map<symbol, Told[]>();
  /** The newest event the poller read: what is told is read after the events up to it, before later ones. */
  private newestSeq: number;
  /** Why the run cannot answer, as its watch told it, while it cannot: a follower joining then is told it first. */
  private why: RelayError | undefined;
  private readonly waiters = new Set<() => void>();
  private readonly stopped = new AbortController();
  private outcome: { ended: true } | { failed: unknown } | undefined;

  constructor(
    private readonly client: RelayClient,
    private readonly runId: string,
    readonly tenantId: string,
    after: number,
    pollIntervalMs: number,
    /** Why the run could not answer the read that opened its first follower's stream, if it could not. */
    unavailableAtStart: RelayError | undefined,
    private readonly onClose: () => void,
  ) {
    this.heldAfter = after;
    this.newestSeq = after;
    void this.poll(after, pollIntervalMs, unavailableAtStart ?? false);
  }

  subscribe(after: number, signal: AbortSignal): AsyncGenerator<FollowedEvent> {
    const follower = Symbol('follower');
    this.positions.set(follower, Math.max(after, this.heldAfter));
    const why = this.why;
    this.told.set(follower, why ? [{ event: { type: 'run_unavailable', error: why }, afterSeq: this.newestSeq }] : []);
    const leave = () => this.leave(follower);
    signal.addEventListener('abort', leave, { once: true });
    return this.deliver(follower, after, signal, leave);
  }

  private async *deliver(follower: symbol, after: number, signal: AbortSignal, leave: () => void) {
    try {
      let position = after;
      if (position < this.heldAfter) {
        for (const event of yield* this.readGap(follower, position, signal)) {
          yield event;
          position = event.seq;
        }
      }
      while (!signal.aborted) {
        const unread = this.held.filter((event) => event.seq > position);
        const told = this.told.get(follower)?.splice(0) ?? [];
        for (const event of inTellingOrder(unread, told)) {
          yield event;
          if (!isHeld(event)) continue;
          position = event.seq;
          this.advance(follower, position);
        }
        if (unread.length > 0 || told.length > 0) continue;
        if (this.outcome && 'failed' in this.outcome) throw this.outcome.failed;
        if (this.outcome) return;
        await this.changed(signal);
      }
    } finally {
      signal.removeEventListener('abort', leave);
      leave();
    }
  }

  /**
   * The events between a follower's position and the held ones, read from the run. While the run cannot answer, the
   * follower reads what the poller tells of why as it tells it (its text deltas wait for the events before them), and
   * the read is tried again a second later, or once the poller finds the run answering when it knows it cannot: so
   * followers waiting so cost the workers nothing more than the poller does. An empty gap once the follower leaves.
   */
  private async *readGap(
    follower: symbol,
    after: number,
    signal: AbortSignal,
  ): AsyncGenerator<FollowedEvent, RunEvent[]> {
    for (;;) {
      const gap = yield* this.tellingWhileReading(follower, after, signal);
      if (gap !== undefined || signal.aborted) return gap ?? [];
      await sleep(gapReadRetryMs, undefined, { signal }).catch(() => undefined);
      while (this.why !== undefined && this.outcome === undefined && !signal.aborted) {
        await this.changed(signal);
      }
      if (signal.aborted) return [];
    }
  }

  /**
   * One read of the gap, yielding what the poller tells the follower of whether the run answers while the read waits
   * (a read of a run whose stopped worker Temporal still lists waits out the query timeout, about half a minute);
   * undefined when the run could not answer it, or the follower left.
   */
  private async *tellingWhileReading(
    follower: symbol,
    after: number,
    signal: AbortSignal,
  ): AsyncGenerator<FollowedEvent, RunEvent[] | undefined> {
    const read = this.client.events(this.runId, { after }).catch((error: unknown) => {
      if (!RelayError.hasCode(error, 'run_unavailable')) throw error;
      return undefined;
    });
    const settled = new AbortController();
    void read.finally(() => settled.abort()).catch(() => undefined);
    const untilSettled = AbortSignal.any([signal, settled.signal]);
    while (!untilSettled.aborted) {
      yield* this.takeNotices(follower);
      await this.changed(untilSettled);
    }
    yield* this.takeNotices(follower);
    return signal.aborted && !settled.signal.aborted ? undefined : read;
  }

  /** What the follower was told of whether the run answers, taken from what it was told; its text deltas stay. */
  private takeNotices(follower: symbol): FollowedEvent[] {
    const told = this.told.get(follower) ?? [];
    this.told.set(
      follower,
      told.filter(({ event }) => event.type === 'model_delta'),
    );
    return told.filter(({ event }) => event.type !== 'model_delta').map(({ event }) => event);
  }

  private async poll(after: number, pollIntervalMs: number, unavailableAtStart: RelayError | false): Promise<void> {
    try {
      const events = this.client.watch(this.runId, {
        after,
        pollIntervalMs,
        signal: this.stopped.signal,
        onUnavailable: (explained) => this.unavailable(explained),
        onAvailable: () => this.answered(),
        unavailableAtStart,
      });
      for await (const event of events) {
        if (event.type === 'model_delta') {
          this.tellEveryone(event);
        } else {
          this.held.push(event);
          this.newestSeq = event.seq;
        }
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

  /** The run cannot answer, and its watch says why: every follower is told. */
  private unavailable(explained: RelayError): void {
    this.why = explained;
    this.tellEveryone({ type: 'run_unavailable', error: explained });
    this.notify();
  }

  /** The run answers again: the followers told it could not are told so. */
  private answered(): void {
    if (this.why === undefined) return;
    this.why = undefined;
    this.tellEveryone({ type: 'run_available' });
    this.notify();
  }

  private tellEveryone(event: FollowedEvent): void {
    for (const queue of this.told.values()) queue.push({ event, afterSeq: this.newestSeq });
  }

  private advance(follower: symbol, position: number): void {
    this.positions.set(follower, position);
    this.release();
  }

  private leave(follower: symbol): void {
    this.told.delete(follower);
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

  /** Resolves at the poller's next change, or once `signal` aborts (at once when it has). */
  private changed(signal: AbortSignal): Promise<void> {
    if (signal.aborted) return Promise.resolve();
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
