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
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { TokenUsage, TranscriptMessage } from '../src/shared/transcript.js';

/** How many of the newest events a run carries into its next execution when it continues as new. */
export const eventsCarriedAcrossContinueAsNew = 1_000;

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

/** A decision applied to a pending approval, waiting for the run to act on it. */
export interface AppliedDecision {
  approved: boolean;
  input: unknown;
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
  private readonly pending = new Map<string, PendingApproval>();
  private readonly decisions = new Map<string, AppliedDecision>();
  private readonly decided = new Set<string>();

  constructor(runId: string, input: AgentRunInput, carried?: CarriedRunState, options: RunStateOptions = {}) {
    this.runId = runId;
    this.maxEventsKept = Math.max(1, options.maxEventsKept ?? defaultMaxEventsKept);
    this.input = input;
    this.maxSteps = input.maxSteps ?? 10;
    const now = new Date().toISOString();
    this.catalog = carried?.catalog ?? [];
    this.transcript = carried?.transcript ?? initialTranscript(input);
    this.events = carried?.events ?? [];
    this.lastEventSeq = carried?.lastEventSeq ?? 0;
    this.step = carried?.step ?? 0;
    this.usage = carried?.usage ?? { inputTokens: 0, outputTokens: 0 };
    this.startedAt = carried?.startedAt ?? now;
    this.updatedAt = now;
    for (const approval of carried?.pendingApprovals ?? []) this.pending.set(approval.toolCallId, approval);
  }

  /** Appends an event with the next sequence number and the workflow clock's time. */
  emit(init: RunEventInit): RunEvent {
    const at = new Date().toISOString();
    const event: RunEvent = { ...init, seq: ++this.lastEventSeq, at, step: this.step };
    this.events.push(event);
    if (this.events.length > this.maxEventsKept) this.events.splice(0, this.events.length - this.maxEventsKept);
    this.updatedAt = at;
    return event;
  }

  /** The kept events after `after`, led by an `events_dropped` marker when some asked for are no longer kept. */
  eventsAfter(after = 0): RunEvent[] {
    return eventsAfter(this.events, after);
  }

  addUsage(usage: TokenUsage | undefined): void {
    if (!usage) return;
    this.usage = {
      inputTokens: this.usage.inputTokens + usage.inputTokens,
      outputTokens: this.usage.outputTokens + usage.outputTokens,
    };
  }

  awaitApproval(approval: PendingApproval): void {
    this.pending.set(approval.toolCallId, approval);
    this.status = 'awaiting_approval';
  }

  pendingApproval(toolCallId: string): PendingApproval | undefined {
    return this.pending.get(toolCallId);
  }

  get pendingCount(): number {
    return this.pending.size;
  }

  /** True once a call has been decided or has expired: a second decision is refused. */
  isSettled(toolCallId: string): boolean {
    return this.decided.has(toolCallId);
  }

  applyDecision(toolCallId: string, decision: AppliedDecision): void {
    this.decisions.set(toolCallId, decision);
    this.decided.add(toolCallId);
  }

  decisionFor(toolCallId: string): AppliedDecision | undefined {
    return this.decisions.get(toolCallId);
  }

  /** Ends the wait for one call, decided or expired, and leaves `awaiting_approval` when none is left. */
  settleApproval(toolCallId: string): void {
    this.pending.delete(toolCallId);
    this.decisions.delete(toolCallId);
    this.decided.add(toolCallId);
    if (this.pending.size === 0 && this.status === 'awaiting_approval') this.status = 'running';
  }

  finish(status: RunStatus, stopReason: StopReason, details: { output?: string; error?: string } = {}): void {
    this.status = status;
    this.stopReason = stopReason;
    if (details.output !== undefined) this.output = details.output;
    if (details.error !== undefined) this.error = details.error;
  }

  snapshot(): RunSnapshot {
    const { tenantId, userId, sessionId, model } = this.input;
    return {
      runId: this.runId,
      tenantId,
      ...(userId !== undefined ? { userId } : {}),
      ...(sessionId !== undefined ? { sessionId } : {}),
      model,
      status: this.status,
      ...(this.stopReason !== undefined ? { stopReason: this.stopReason } : {}),
      step: this.step,
      maxSteps: this.maxSteps,
      pendingApprovals: [...this.pending.values()],
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
      events: this.events.slice(-eventsCarriedAcrossContinueAsNew),
      lastEventSeq: this.lastEventSeq,
      step: this.step,
      usage: this.usage,
      pendingApprovals: [...this.pending.values()],
      startedAt: this.startedAt,
    };
  }
}

function initialTranscript(input: AgentRunInput): TranscriptMessage[] {
  const transcript: TranscriptMessage[] = [];
  if (input.system !== undefined) transcript.push({ role: 'system', content: input.system });
  transcript.push(...(input.messages ?? []));
  if (input.prompt !== undefined) transcript.push({ role: 'user', content: input.prompt });
  return transcript;
}
