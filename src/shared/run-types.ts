import type { ModelSettings, TokenUsage, TranscriptMessage } from './transcript.js';
import type { ApprovalHints } from './tool-catalog.js';
import type { ToolErrorType } from './tool-result.js';
import type { ToolInputIssue } from './tool-input.js';
import type { StoredModelText } from './stored-output.js';

export type RunStatus = 'running' | 'awaiting_approval' | 'completed' | 'failed' | 'cancelled';

/** True for the statuses a run ends in: it changes no more. */
export function isTerminalStatus(status: RunStatus): status is Exclude<RunStatus, 'running' | 'awaiting_approval'> {
  return status !== 'running' && status !== 'awaiting_approval';
}

/** Why a run stopped: the model answered, the step budget ran out, someone cancelled it, or it failed. */
export type StopReason = 'final_answer' | 'max_steps' | 'cancelled' | 'error';

/** A duration as Temporal reads it: milliseconds, or a string such as `'24h'` or `'30 seconds'`. */
export type DurationInput = number | string;

/** What starts an agent run (the `agentRun` workflow's argument). */
export interface AgentRunInput {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  /** `provider:model`, e.g. `openai:gpt-4.1-mini`. */
  model: string;
  /** The user's message; give this or `messages`. */
  prompt?: string;
  /** A transcript to continue from; give this or `prompt`. */
  messages?: TranscriptMessage[];
  /** A system message placed before everything else. */
  system?: string;
  /**
   * How many times the model may be called; each call is one step.
   * @default 10
   */
  maxSteps?: number;
  /**
   * How long a call that requires approval waits for a decision before it counts as denied.
   * @default '24h'
   */
  approvalTimeout?: DurationInput;
  /** The names of the tools this run may use; all of the worker's tools when absent. */
  tools?: string[];
  /**
   * Passed to every tool as `ctx.config`. Recorded in history, so put secrets in as `{ "$secret": "NAME" }`: the
   * worker resolves the reference inside the tool activity (`createWorker({ secrets })`).
   */
  config?: Record<string, unknown>;
  /** Continue as new after this many steps even when Temporal does not suggest it yet (for very long runs). */
  continueAsNewAfterSteps?: number;
  /**
   * The most bytes (as JSON) of transcript the run keeps and sends to its model; past it the oldest tool outputs
   * are elided (a `transcript_compacted` event says how many). A model call may carry the whole transcript (the
   * first of an execution, one after compaction), and Temporal refuses payloads over 2 MiB.
   * @default 1 MiB
   */
  maxTranscriptBytes?: number;
  /** Sampling settings for every model call of the run (temperature, maxOutputTokens…); provider defaults when absent. */
  modelSettings?: ModelSettings;
}

/** A tool call waiting for a human. */
export interface PendingApproval extends ApprovalHints {
  toolCallId: string;
  toolName: string;
  /** The exact, validated input that will run if approved unchanged. */
  input: unknown;
  step: number;
  requestedAt: string;
  expiresAt: string;
  /** The only approvers who may decide it, when its tool names them (`defineTool`'s `approvers`). */
  approvers?: string[];
  /** How many different approvers must approve it, when its tool asks for more than one (`approvalsRequired`). */
  approvalsRequired?: number;
  /** The approvals it has so far, oldest first, when it needs more than one: it runs once they are enough. */
  approvals?: GivenApproval[];
}

/** One approval of a call that needs several, as the run recorded it (`tool_approval_added`). */
export interface GivenApproval {
  approver: string;
  /** The time of its `tool_approval_added` event. */
  at: string;
  reason?: string;
}

/** The steps a run may take when its input names none. */
export const defaultMaxSteps = 10;

/**
 * The longest reason a decision may give: the run keeps no more of one (in the event log and for the model), so
 * `RelayClient`, the API and the inbox refuse a longer one; one sent as a signal is cut to it.
 */
export const maxDecisionReasonLength = 1_000;

/** A human's decision on one tool call, sent by update (answered) or signal (fire and forget). */
export interface ApprovalDecision {
  toolCallId: string;
  decision: 'approve' | 'reject';
  /** Who decided; recorded in the event log. */
  approver?: string;
  /** At most {@link maxDecisionReasonLength} characters. */
  reason?: string;
  /** Edited arguments to run instead of the proposed ones; checked against the tool's schema. */
  input?: unknown;
  /** When given, the decision is refused unless it matches the run's tenant. */
  tenantId?: string;
  /**
   * When the decider's client sent the decision (ISO 8601); the decision's event is stamped with it (never earlier
   * than the event before it; an update's no later than the workflow task that takes it). `RelayClient` sets it;
   * without it, the run reads a worker's clock in an activity (a signal's decision is taken once it has).
   */
  decidedAt?: string;
  /**
   * The `requestedAt` of the waiting call the decider saw. When given, the decision is refused (`approval_not_pending`)
   * unless the call waiting under `toolCallId` was requested then: a page or script left open while its run id was
   * used again (after Temporal's retention let a closed run's id start a new run) does not decide the new run's call.
   */
  requestedAt?: string;
}

/** The update's answer to an accepted decision. */
export interface ApprovalOutcome {
  toolCallId: string;
  toolName: string;
  decision: 'approve' | 'reject';
  /** The input that runs (approved calls only). */
  input?: unknown;
  /**
   * For a call that needs several approvals: how many it has with this one, of how many it needs. While `approvals`
   * is below `approvalsRequired` the call still waits for another approver.
   */
  approvals?: number;
  approvalsRequired?: number;
}

/**
 * Which approval notice an event is about: that a call waits, that a call needing several approvals got one more,
 * that it still waits and expires soon, or how it ended.
 */
export type ApprovalNoticeType = 'approval.requested' | 'approval.added' | 'approval.expiring' | 'approval.decided';

interface RunEventBase {
  /** Strictly increasing from 1 within a run, continue-as-new included. */
  seq: number;
  /** ISO time of the workflow's clock when the event happened. */
  at: string;
  step: number;
}

interface ToolEventBase extends RunEventBase {
  toolCallId: string;
  toolName: string;
}

export type RunEvent =
  | (RunEventBase & { type: 'run_started'; model: string; maxSteps: number; tools: string[] })
  | (RunEventBase & {
      type: 'model_responded';
      text?: string;
      /** In place of `text`: a text beside tool calls over 4 KiB, kept in the worker's payload store. */
      storedText?: StoredModelText;
      toolCallCount: number;
      usage?: TokenUsage;
      finishReason?: string;
    })
  /**
   * The call's input matched its tool's JSON Schema. `requiresApproval` with `approvalByRule`: the tool's rule decides
   * next whether this call waits (`tool_awaiting_approval`) or not (`tool_approval_not_required`).
   */
  | (ToolEventBase & { type: 'tool_call_validated'; input: unknown; requiresApproval: boolean; approvalByRule?: true })
  | (ToolEventBase & { type: 'tool_validation_failed'; error: string; issues: ToolInputIssue[]; input: unknown })
  | (ToolEventBase &
      ApprovalHints & {
        type: 'tool_awaiting_approval';
        input: unknown;
        expiresAt: string;
        /** The only approvers who may decide it, when its tool names them (absent in runs recorded before it was said). */
        approvers?: string[];
        /** How many different approvers must approve it, when its tool asks for more than one (as `approvers`). */
        approvalsRequired?: number;
      })
  /** The tool's approval rule answered that this call needs no human: it runs next, unapproved. */
  | (ToolEventBase & { type: 'tool_approval_not_required' })
  /** One approval of a call that needs several (`approvalsRequired`): the call keeps waiting for the rest. */
  | (ToolEventBase & {
      type: 'tool_approval_added';
      approver: string;
      reason?: string;
      approvals: number;
      approvalsRequired: number;
    })
  /** `approvedBy`: every approver of a call that needed several, in the order they approved (the last is `approver`). */
  | (ToolEventBase & {
      type: 'tool_approved';
      approver?: string;
      reason?: string;
      input: unknown;
      edited: boolean;
      approvedBy?: string[];
    })
  | (ToolEventBase & { type: 'tool_rejected'; approver?: string; reason?: string })
  | (ToolEventBase & { type: 'tool_approval_timed_out'; expiresAt: string })
  /**
   * A decision sent by signal that the run did not take (a signal has no answer to carry the refusal, as the update
   * does): `code` and `error` say why; the other fields are what the signal said, where they are text, and the call's
   * tool when it waits. Dated at the run's newest event; `decidedAt` is when the signal says it was sent. At most
   * {@link maxIgnoredDecisionsRecorded} a run execution; the worker's log has every one.
   */
  | (RunEventBase & {
      type: 'decision_ignored';
      toolCallId?: string;
      toolName?: string;
      decision?: 'approve' | 'reject';
      approver?: string;
      decidedAt?: string;
      code: string;
      error: string;
    })
  /** The tenant's approval webhook took a notice about this call (`status`: its 2xx answer). */
  | (ToolEventBase & { type: 'tool_approval_notified'; notice: ApprovalNoticeType; status: number; attempt: number })
  /** A notice was given up on: refused by the webhook (a 4xx), or not delivered in any attempt. Nothing else waits. */
  | (ToolEventBase & {
      type: 'tool_approval_notice_failed';
      notice: ApprovalNoticeType;
      error: string;
      status?: number;
      attempt: number;
    })
  /**
   * The run closed with this notice still in flight, 30 seconds after it was ready to: the workflow `deliveredBy`
   * (which outlives the run) delivers it, and its result says how that ended.
   */
  | (ToolEventBase & { type: 'tool_approval_notice_handed_off'; notice: ApprovalNoticeType; deliveredBy: string })
  | (ToolEventBase & { type: 'tool_succeeded'; output: unknown; truncated?: boolean })
  | (ToolEventBase & { type: 'tool_failed'; error: string; errorType: ToolErrorType })
  /** The run was cancelled while this call waited for a human or ran. */
  | (ToolEventBase & { type: 'tool_cancelled'; stage: 'checking_input' | 'awaiting_approval' | 'executing' })
  | (RunEventBase & { type: 'run_completed'; stopReason: StopReason; output?: string })
  /** `code` names the kind of failure when it has one (`payload_too_large`, `invalid_tool_definition`, …). */
  | (RunEventBase & { type: 'run_failed'; error: string; code?: string })
  | (RunEventBase & { type: 'run_cancelled' })
  /** The oldest tool outputs were elided so the transcript stays within `maxTranscriptBytes`. */
  | (RunEventBase & {
      type: 'transcript_compacted';
      elidedResults: number;
      elidedTexts?: number;
      bytesBefore: number;
      bytesAfter: number;
    })
  /**
   * The worker that took a model call no longer held the context the run stored at its last call (another worker
   * process with a store of its own, or it expired), so the call went again with the whole transcript and tools.
   */
  | (RunEventBase & { type: 'model_context_resent'; error: string })
  /**
   * Not recorded: text the model streamed since the follower's last delta (`offset` is where it starts in the step's
   * text; 0 again when a retried attempt starts over). `seq` is the last durable event's, so resuming is unaffected.
   */
  | (RunEventBase & { type: 'model_delta'; text: string; offset: number; attempt: number })
  /** Not recorded: the events query's note that older events were dropped to bound the run's memory. */
  | (RunEventBase & { type: 'events_dropped'; dropped: number; firstKeptSeq: number });

export type RunEventType = RunEvent['type'];

/** How many `decision_ignored` events one run execution records: a flood of bad signals must not grow its log. */
export const maxIgnoredDecisionsRecorded = 20;

/** Distributes `Omit` over the union so each event keeps its own fields. */
export type RunEventInit = RunEvent extends infer E
  ? E extends RunEvent
    ? Omit<E, 'seq' | 'at' | 'step'>
    : never
  : never;

/** Streamed model text is sent at most this often (ms): followers get it in batches, never a call per token. */
export const modelDeltaBatchMs = 100;

/** What a streaming model call heartbeats (never recorded in history): the text so far of one attempt at a step. */
export interface ModelTextProgress {
  step: number;
  attempt: number;
  text: string;
}

/** The Worker Deployment version a run's workflow is on, when its workers run under Worker Versioning. */
export interface RunVersioning {
  deploymentName: string;
  buildId: string;
  /** How the run follows new versions: `AUTO_UPGRADE` for Relay-E's workflows. */
  behavior: 'AUTO_UPGRADE' | 'PINNED' | 'UNSPECIFIED';
}

/** Everything a caller needs to know about a run at one moment. */
export interface RunSnapshot {
  runId: string;
  tenantId: string;
  userId?: string;
  sessionId?: string;
  model: string;
  status: RunStatus;
  stopReason?: StopReason;
  step: number;
  maxSteps: number;
  pendingApprovals: PendingApproval[];
  usage: TokenUsage;
  output?: string;
  error?: string;
  startedAt: string;
  updatedAt: string;
  /** The sequence number of the newest event; pass it as `after` to read only what comes next. */
  lastEventSeq: number;
  /**
   * The build the run is on, when its workers use Worker Versioning: what the server says of the run, added by
   * `getRun` (and `GET /v1/runs/{id}`) from the description it reads anyway; the run's own answers leave it out.
   */
  versioning?: RunVersioning;
}

/** What a finished run returns. */
export interface RunResult {
  runId: string;
  status: 'completed';
  stopReason: 'final_answer' | 'max_steps';
  output?: string;
  steps: number;
  usage: TokenUsage;
}
