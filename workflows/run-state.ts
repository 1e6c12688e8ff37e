import type {
  AgentRunInput,
  PendingApproval,
  RunEvent,
  RunEventInit,
  RunSnapshot,
  RunStatus,
  StopReason,
} from '../src/shared/run-types.js';
import { eventsAfter } from '../src/shared/closed-run-record.js';
import { defaultMaxSteps } from '../src/shared/run-types.js';
import { newestWithinBytes, toJsonText, utf8ByteLength } from '../src/shared/payload-limits.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { TokenUsage, TranscriptMessage } from '../src/shared/transcript.js';
import { ApprovalBook } from './approvals.js';

/** How many of the newest events a run carries into its next execution when it continues as new, at most. */
const eventsCarriedAcrossContinueAsNew = 1_000;

/**
 * The most bytes (as JSON) of events a run carries into its next execution. The continue-as-new input is one
 * payload, and Temporal refuses a payload over 2 MiB, so the events' share of it is fixed in bytes, not in count.
 */
export const maxCarriedEventBytes = 262_144;

/**
 * The most bytes one page of the events query answers with, as JSON, its envelope included (a larger `maxBytes` is
 * lowered to it): the answer is one payload, and Temporal refuses a payload over 2 MiB. An event larger than a page
 * (a model text near `maxModelResponseBytes`) travels alone, in a page of its own.
 */
export const maxEventPageBytes = 1_048_576;

/** The JSON around a page's events (`{"events":[],"nextAfter":…,"hasMore":false}`), counted into its bytes. */
const eventPageEnvelopeBytes = 64;

/** One page of the event log. */
export interface EventPage {
  events: RunEvent[];
  /** Pass as `after` to read on; equals the last event's `seq` (or the `after` asked for, when empty). */
  nextAfter: number;
  /** True when events after `nextAfter` exist already: read again at once. */
  hasMore: boolean;
}

/** What the events query may be asked for. */
export interface EventPageRequest {
  after?: number;
  /** @default no limit on the count */
  limit?: number;
  /** @default maxEventPageBytes, which is also the most */
  maxBytes?: number;
}

/**
 * How many of the newest events a run keeps in memory (and answers the events query from): a run that emits more
 * drops its oldest, and the query says how many with an `events_dropped` marker, so a worker's memory stays bounded.
 */
export const defaultMaxEventsKept = 10_000;

/** Options of {@link RunState} that do not come from the run's input. */
export interface RunStateOptions {
  /** @default defaultMaxEventsKept */
  maxEventsKept?: number;
}

/** What one execution of a run hands to the next when it continues as new. */
export interface CarriedRunState {
  catalog: ToolCatalogEntry[];
  transcript: TranscriptMessage[];
  events: RunEvent[];
  lastEventSeq: number;
  step: number;
  usage: TokenUsage;
  pendingApprovals: PendingApproval[];
  startedAt: string;
}

/** A call the run has not finished with: what a cancellation leaves behind. */
export interface UnfinishedCall {
  toolCallId: string;
  toolName: string;
  stage: 'awaiting_approval' | 'executing';
}

/** A call whose input the tool's own schema (and approval rule) is checking before a human is asked. */
export interface CallBeingChecked {
  toolCallId: string;
  toolName: string;
  stage: 'checking_input';
}

/** The in-memory state of one agent run: transcript, counters, approvals and the event log. Pure, replay-safe. */
export class RunState {
  readonly runId: string;
  readonly input: AgentRunInput;
  readonly maxSteps: number;
  catalog: ToolCatalogEntry[];
  transcript: TranscriptMessage[];
  step: number;
  usage: TokenUsage;
  status: RunStatus = 'running';
  stopReason?: StopReason;
  output?: string;
  error?: string;
  readonly startedAt: string;
  private updatedAt: string;
  private events: RunEvent[];
  private lastEventSeq: number;
  private readonly maxEventsKept: number;
  readonly approvals: ApprovalBook;
  private readonly callsInFlight = new Map<string, UnfinishedCall>();
  private readonly checksInFlight = new Map<string, CallBeingChecked>();
  constructor(runId: string, input: AgentRunInput, carried?: CarriedRunState, options: RunStateOptions = {}) {
    this.runId = runId;
    this.maxEventsKept = Math.max(1, options.maxEventsKept ?? defaultMaxEventsKept);
    this.input = input;
    this.maxSteps = input.maxSteps ?? defaultMaxSteps;
    const now = new Date().toISOString();
    this.catalog = carried?.catalog ?? [];
    this.transcript = carried?.transcript ?? initialTranscript(input);
    this.events = carried?.events ?? [];
    this.lastEventSeq = carried?.lastEventSeq ?? 0;
    this.step = carried?.step ?? 0;
    this.usage = carried?.usage ?? { inputTokens: 0, outputTokens: 0 };
    this.startedAt = carried?.startedAt ?? now;
    this.updatedAt = this.events.at(-1)?.at ?? now;
    this.approvals = new ApprovalBook(carried?.pendingApprovals);
    if (this.approvals.count > 0) this.status = 'awaiting_approval';
  }

  /**
   * Appends an event with the next sequence number, at `at` but never earlier than the event before it. `at` is a
   * time recorded in history (an activity's result, a timer's deadline; see {@link recordedOrNow}), never the clock
   * of the activation that emits the event: a query answered by replaying the run on a worker that does not have it
   * in cache can apply history that no workflow task has processed yet under the previous task's clock, and a local
   * activity's result can reach the run in another task live than on replay. `step` is for an event recorded after
   * the step it belongs to began: `run_started`, step 0, once the first model call brought the catalog.
   */
  emit(init: RunEventInit, options: { at?: string | undefined; step?: number } = {}): RunEvent {
    const candidate = recordedOrNow(options.at);
    const at = candidate < this.updatedAt ? this.updatedAt : candidate;
    const event: RunEvent = { ...init, seq: ++this.lastEventSeq, at, step: options.step ?? this.step };
    this.events.push(event);
    if (this.events.length > this.maxEventsKept) this.events.splice(0, this.events.length - this.maxEventsKept);
    this.updatedAt = at;
    return event;
  }

  /** The time of the newest event: what an event that follows from no new fact of history is stamped with. */
  get latestAt(): string {
    return this.updatedAt;
  }

  /**
   * The kept events with a sequence number above `after`, one page of them ({@link eventPage}), led by an
   * `events_dropped` marker when some of the events asked for are no longer kept; the marker's `seq` is the last
   * dropped one, so resuming after it loses nothing more.
   */
  eventsAfter(after = 0): RunEvent[] {
    return this.eventPage({ after }).events;
  }

  /**
   * One page of {@link eventsAfter}: at most `limit` events and `maxBytes` of JSON (envelope included), always at
   * least one event when any is there, so a reader that resumes from `nextAfter` reads the whole log without a gap.
   */
  eventPage(request: EventPageRequest = {}): EventPage {
    const after = request.after ?? 0;
    const limit = request.limit ?? Infinity;
    const maxBytes = Math.min(request.maxBytes ?? maxEventPageBytes, maxEventPageBytes);
    const events: RunEvent[] = [];
    let bytes = eventPageEnvelopeBytes;
    for (const event of this.eventsFrom(after)) {
      // Each event's JSON and the comma before it.
      const size = utf8ByteLength(toJsonText(event) ?? '') + 1;
      if (events.length > 0 && (events.length >= limit || bytes + size > maxBytes)) {
        return { events, nextAfter: events.at(-1)?.seq ?? after, hasMore: true };
      }
      events.push(event);
      bytes += size;
    }
    return { events, nextAfter: events.at(-1)?.seq ?? after, hasMore: false };
  }

  /** Every event still kept in memory, oldest first (no marker): what a closed run records, newest last. */
  keptEvents(): readonly RunEvent[] {
    return this.events;
  }

  private eventsFrom(after: number): RunEvent[] {
    return eventsAfter(this.events, after);
  }

  addUsage(usage: TokenUsage | undefined): void {
    if (!usage) return;
    this.usage = {
      inputTokens: this.usage.inputTokens + usage.inputTokens,
      outputTokens: this.usage.outputTokens + usage.outputTokens,
    };
  }

  /** Puts a call in `pending` and the run in `awaiting_approval`. */
  awaitApproval(approval: PendingApproval): void {
    this.approvals.request(approval);
    this.status = 'awaiting_approval';
  }

  /** Ends the wait for one call and leaves `awaiting_approval` when none is left. */
  settleApproval(toolCallId: string): void {
    this.approvals.settle(toolCallId);
    if (this.approvals.count === 0 && this.status === 'awaiting_approval') this.status = 'running';
  }

  get pendingCount(): number {
    return this.approvals.count;
  }

  /** Marks a call as waiting for a human or running, until {@link callEnded}; its input check has ended. */
  callStarted(call: { id: string; name: string }, stage: UnfinishedCall['stage']): void {
    this.checksInFlight.delete(call.id);
    this.callsInFlight.set(call.id, { toolCallId: call.id, toolName: call.name, stage });
  }

  callEnded(toolCallId: string): void {
    this.checksInFlight.delete(toolCallId);
    this.callsInFlight.delete(toolCallId);
  }

  /**
   * Marks a call whose input is being checked before a human is asked, until {@link callStarted} or
   * {@link callEnded}. Kept apart from the unfinished calls, whose order runs recorded before it replay with.
   */
  checkStarted(call: { id: string; name: string }): void {
    this.checksInFlight.set(call.id, { toolCallId: call.id, toolName: call.name, stage: 'checking_input' });
  }

  /** Calls whose input check has not ended, in the order their checks began. */
  callsBeingChecked(): CallBeingChecked[] {
    return [...this.checksInFlight.values()];
  }

  /** Calls still waiting for a human or still running, in the order they got there. */
  unfinishedCalls(): UnfinishedCall[] {
    return [...this.callsInFlight.values()];
  }

  finish(status: RunStatus, stopReason: StopReason, details: { output?: string; error?: string } = {}): void {
    this.status = status;
    this.stopReason = stopReason;
    if (details.output !== undefined) this.output = details.output;
    if (details.error !== undefined) this.error = details.error;
  }

  /** Who the run acts for, as its snapshot, tool calls and notices name it: the tenant, and its user and session. */
  get actingFor(): { tenantId: string; userId?: string; sessionId?: string } {
    const { tenantId, userId, sessionId } = this.input;
    return {
      tenantId,
      ...(userId !== undefined ? { userId } : {}),
      ...(sessionId !== undefined ? { sessionId } : {}),
    };
  }

  snapshot(): RunSnapshot {
    return {
      runId: this.runId,
      ...this.actingFor,
      model: this.input.model,
      status: this.status,
      ...(this.stopReason !== undefined ? { stopReason: this.stopReason } : {}),
      step: this.step,
      maxSteps: this.maxSteps,
      pendingApprovals: this.approvals.list(),
      usage: this.usage,
      ...(this.output !== undefined ? { output: this.output } : {}),
      ...(this.error !== undefined ? { error: this.error } : {}),
      startedAt: this.startedAt,
      updatedAt: this.updatedAt,
      lastEventSeq: this.lastEventSeq,
    };
  }

  carry(): CarriedRunState {
    return {
      catalog: this.catalog,
      transcript: this.transcript,
      events: newestWithinBytes(this.events.slice(-eventsCarriedAcrossContinueAsNew), maxCarriedEventBytes),
      lastEventSeq: this.lastEventSeq,
      step: this.step,
      usage: this.usage,
      pendingApprovals: this.approvals.list(),
      startedAt: this.startedAt,
    };
  }
}

/**
 * `at` as recorded in history, or the workflow clock for results recorded before activities returned their time
 * (those runs keep the old stamping; times take no part in replay's checks).
 */
export function recordedOrNow(at: string | undefined): string {
  return at ?? new Date().toISOString();
}

function initialTranscript(input: AgentRunInput): TranscriptMessage[] {
  const transcript: TranscriptMessage[] = [];
  if (input.system !== undefined) transcript.push({ role: 'system', content: input.system });
  transcript.push(...(input.messages ?? []));
  if (input.prompt !== undefined) transcript.push({ role: 'user', content: input.prompt });
  return transcript;
}
