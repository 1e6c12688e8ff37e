import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  Connection,
  NamespaceNotFoundError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowIdConflictPolicy,
  WorkflowIdReusePolicy,
  WorkflowUpdateFailedError,
  isGrpcServiceError,
} from '@temporalio/client';
import type {
  BackoffOptions,
  ClientPlugin,
  ConnectionOptions,
  WorkflowExecutionDescription,
  WorkflowHandle,
} from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { DataConverter } from '@temporalio/common';
import type { agentRun } from '../../workflows/agent-run.js';
import { decideSignal, decideUpdate, eventPageQuery, snapshotQuery } from '../../workflows/messages.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { isWorkflowNotFound } from './is-workflow-not-found.js';
import { missingNamespaceOf } from './temporal-unavailable.js';
import { listPendingApprovals } from './list-pending-approvals.js';
import type { ListPendingApprovalsOptions, PendingApprovals } from './list-pending-approvals.js';
import { noWorkerAnsweredIn } from './no-worker-answered.js';
import { relayConnectionInterceptors } from './connection-interceptors.js';
import { closedBeforeItRan, snapshotFromDescription } from './snapshot-from-description.js';
import { readToolCatalog } from './read-tool-catalog.js';
import { readHandedOffNotices } from './read-handed-off-notices.js';
import { runVersioningOf } from './read-run-versioning.js';
import { callWaitState } from './call-wait-state.js';
import type { HandedOffNotices } from './read-handed-off-notices.js';
import { ModelDeltaTracker, readModelProgress } from './read-model-progress.js';
import { withKeylessRefusal } from '../security/keyless-payload-codec.js';
import { withEncryption } from '../security/with-encryption.js';
import { closedRunMemoKey, readClosedRunMemo, recordedEventsAfter, withOutput } from '../shared/closed-run-record.js';
import type { ClosedRunRecord } from '../shared/closed-run-record.js';
import { RelayError, errorCodes } from '../shared/errors.js';
import type { ErrorCode } from '../shared/errors.js';
import { parseModelId } from '../model/model-registry.js';
import { agentRunInputSchema } from '../shared/run-input-schema.js';
import type {
  AgentRunInput,
  ApprovalDecision,
  ApprovalOutcome,
  RunEvent,
  RunResult,
  RunSnapshot,
} from '../shared/run-types.js';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import { maxDecisionReasonLength, modelDeltaBatchMs } from '../shared/run-types.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { checkToolInput } from '../shared/tool-input.js';
import { scopedRunId } from '../shared/run-ids.js';
import { listRuns } from './list-runs.js';
import { readWorkerCatalog } from './read-worker-catalog.js';
import type { ListRunsOptions, RunPage } from './list-runs.js';
import type { WorkerCatalog } from '../shared/worker-catalog.js';

export interface RelayClientOptions {
  /** The task queue Relay-E workers poll. */
  taskQueue: string;
  /** @default 'localhost:7233' */
  address?: string;
  /** @default 'default' */
  namespace?: string;
  /** A Temporal Cloud API key. */
  apiKey?: string;
  /** mTLS or plain TLS settings, as `Connection.connect` takes them. */
  tls?: ConnectionOptions['tls'];
  /** A connection to reuse instead of opening one. */
  connection?: Connection;
  /**
   * How the connection this client opens retries a call Temporal did not answer (unreachable, unavailable): the SDK's
   * backoff options. A smaller `maxAttempts` fails sooner, as an HTTP API that answers 503 does (`relay-e serve`: 6).
   * @default the SDK's: 10 attempts, about 20 seconds of backoff
   */
  callRetry?: Partial<BackoffOptions>;
  /**
   * Encrypt what this client sends (run input, memo, summary, decisions) and decrypt what it reads, with the keys
   * the workers hold.
   * @default undefined (no encryption)
   */
  encryption?: EncryptionOptions;
  /**
   * A Temporal data converter; `encryption` adds its codec after this one's codecs.
   * @default Temporal's default
   */
  dataConverter?: DataConverter;
  /**
   * Temporal client plugins, e.g. the workers' `RelayPlugin`, which brings the same encryption codec.
   * @default []
   */
  plugins?: ClientPlugin[];
  /**
   * How long an approval or rejection waits for a worker to take it before it answers `run_unavailable`: a run
   * whose worker died mid-task recovers within the default. Temporal keeps a decision it was sent, so a worker that
   * takes the run later may still apply it. Lower it below a proxy's timeout in front of the HTTP API.
   * @default 60_000
   */
  decisionWaitMs?: number;
}

export interface StartRunOptions extends AgentRunInput {
  /**
   * An id of the caller's choosing (letters, digits, `. _ : -`, at most 200): the run's id is then
   * `<tenantId>~<runId>` (see `scopedRunId`), so two tenants never share one. Starting one again while Temporal keeps
   * its run, closed or not, is refused with `run_already_exists`; once the namespace's retention has removed the
   * closed run, the id can start a new one.
   * @default a fresh `run_<uuid>`
   */
  runId?: string;
}

/** Options of {@link RelayClient.events}. */
export interface EventsOptions extends TenantScope {
  /** Only events with a higher sequence number. @default 0 */
  after?: number;
  /** The most events to return. @default all */
  limit?: number;
}

/** What {@link RelayClient.inspect} reads of a run. */
export interface RunInspection {
  snapshot: RunSnapshot;
  /** The whole event log. */
  events: RunEvent[];
  /** What became of the approval notices the run handed off when it closed; empty when it handed off none. */
  handedOffNotices: HandedOffNotices[];
}

/** Limits a call to one tenant's runs: another tenant's run is reported as not found. */
export interface TenantScope {
  tenantId?: string;
}

export interface DecisionOptions extends TenantScope {
  approver?: string;
  reason?: string;
  /**
   * The `requestedAt` of the waiting call the decision was made on (from `getRun` or `listPendingApprovals`): when
   * given, the run refuses the decision (`approval_not_pending`) unless that call waits under this id now, so a page
   * left open across a reused run id decides nothing. The inbox sends it.
   */
  requestedAt?: string;
}

export interface ApproveOptions extends DecisionOptions {
  /** Edited arguments to run instead of the proposed ones; refused if they fail the tool's schema. */
  input?: unknown;
}

/** Who cancels a run and why, recorded on its `WorkflowExecutionCancelRequested` event in Temporal. */
export interface CancelOptions {
  /**
   * Who asks, 1 to 1,000 characters: the request's identity is `relay-e: <by>`.
   * @default the Temporal client's identity (`<pid>@<host>`)
   */
  by?: string;
  /** Why, at most 1,000 characters (a decision's reason's bound). */
  reason?: string;
}

export interface WatchOptions extends TenantScope {
  /** Only events with a higher sequence number. @default 0 */
  after?: number;
  /** How often to ask the run for new events. @default 250 */
  pollIntervalMs?: number;
  /**
   * Also yield the model's text as it streams (ephemeral `model_delta` events, from when the follower joined; the
   * durable `model_responded` still carries the whole text).
   * @default true
   */
  deltas?: boolean;
  signal?: AbortSignal;
  /**
   * Called each time the run cannot answer (`run_unavailable`: no worker serves it yet, or its workflow task is
   * failing). The follower waits and asks again, as the run itself waits; this is how its caller learns why nothing
   * comes.
   */
  onUnavailable?: (error: RelayError) => void;
}

/** How long a catalog read serves startRun's check for runs it can serve (workers announce every 10 minutes). */
const catalogReuseMs = 5_000;

const terminalEventTypes = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled']);

/** Starts, inspects and steers agent runs from TypeScript. */
export class RelayClient {
  readonly temporal: Client;
  readonly taskQueue: string;
  private readonly ownedConnection?: Connection;
  private readonly decisionWaitMs: number;
  /** The last worker catalog read for startRun's check, and when. */
  private recentCatalog: { catalog: WorkerCatalog; readAt: number } | undefined;

  private constructor(
    temporal: Client,
    options: Pick<RelayClientOptions, 'taskQueue' | 'decisionWaitMs'>,
    ownedConnection?: Connection,
  ) {
    this.temporal = temporal;
    this.taskQueue = options.taskQueue;
    this.decisionWaitMs = checkedDecisionWaitMs(options.decisionWaitMs);
    if (ownedConnection) this.ownedConnection = ownedConnection;
  }

  /** Connects to a Temporal server (local, self-hosted or Cloud). */
  static async connect(options: RelayClientOptions): Promise<RelayClient> {
    // Keys and the wait are checked before connecting: a connection opened first would be left open by a refusal.
    checkedDecisionWaitMs(options.decisionWaitMs);
    // Without keys, an encrypted run is refused with the setting to give rather than the SDK's bare unknown encoding.
    const dataConverter = options.encryption
      ? withEncryption(options.dataConverter, options.encryption)
      : withKeylessRefusal(options.dataConverter);
    const connection =
      options.connection ??
      (await Connection.connect({
        address: options.address ?? 'localhost:7233',
        interceptors: relayConnectionInterceptors(options.callRetry),
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
        ...(options.tls !== undefined ? { tls: options.tls } : options.apiKey !== undefined ? { tls: true } : {}),
      }));
    const temporal = new Client({
      connection,
      namespace: options.namespace ?? 'default',
      ...(dataConverter ? { dataConverter } : {}),
      ...(options.plugins ? { plugins: options.plugins } : {}),
    });
    return new RelayClient(temporal, options, options.connection ? undefined : connection);
  }

  /**
   * Uses a Temporal client as it is (its connection, namespace and data converter), such as a test environment's
   * time-skipping client; `close()` leaves that client's connection open.
   */
  static fromClient(temporal: Client, options: Pick<RelayClientOptions, 'taskQueue' | 'decisionWaitMs'>): RelayClient {
    return new RelayClient(temporal, options);
  }

  /** Starts a run; the input is checked first, so a bad request never reaches Temporal. */
  async startRun(options: StartRunOptions): Promise<{ runId: string }> {
    const { runId: chosenId, ...input } = options;
    const check = checkToolInput(agentRunInputSchema(), input);
    if (!check.success) {
      throw new RelayError('invalid_input', check.message.replace('Validation failed', 'Invalid run input'), {
        details: { issues: check.issues },
      });
    }
    await this.refuseWhatNoWorkerServes(input);
    const runId = chosenId === undefined ? `run_${randomUUID()}` : scopedRunId(input.tenantId, chosenId);
    try {
      await this.startWorkflow(runId, input);
    } catch (error) {
      if (error instanceof WorkflowExecutionAlreadyStartedError) {
        throw new RelayError('run_already_exists', `A run with id '${chosenId ?? runId}' already exists`, {
          cause: error,
          details: { runId },
        });
      }
      throw error;
    }
    return { runId };
  }

  /**
   * Refuses a run no worker can serve. A catalog read in the last few seconds that serves the run answers without a
   * round trip; anything it would refuse, or no catalog at all, is read afresh, so a stale read never refuses.
   * Without a catalog nothing can be told, and the worker that picks the run up refuses what it lacks.
   */
  private async refuseWhatNoWorkerServes(input: AgentRunInput): Promise<void> {
    const recent = this.recentCatalog;
    if (recent && Date.now() - recent.readAt < catalogReuseMs && unservedBy(input, recent.catalog) === undefined) {
      return;
    }
    const catalog = await this.getWorkerCatalog();
    this.recentCatalog = catalog ? { catalog, readAt: Date.now() } : undefined;
    const refusal = catalog && unservedBy(input, catalog);
    if (refusal) throw refusal;
  }

  private async startWorkflow(runId: string, input: AgentRunInput): Promise<void> {
    await this.temporal.workflow.start<typeof agentRun>('agentRun', {
      workflowId: runId,
      // An id names one run for good: reusing it, even after the first run closed, would mix two runs' decisions.
      workflowIdReusePolicy: WorkflowIdReusePolicy.REJECT_DUPLICATE,
      workflowIdConflictPolicy: WorkflowIdConflictPolicy.FAIL,
      taskQueue: this.taskQueue,
      args: [input],
      memo: { model: input.model, prompt: summarizePrompt(input) },
      typedSearchAttributes: [
        { key: relaySearchAttributes.tenant, value: input.tenantId },
        ...(input.userId ? [{ key: relaySearchAttributes.user, value: input.userId }] : []),
        { key: relaySearchAttributes.status, value: 'running' },
        { key: relaySearchAttributes.pendingApprovals, value: 0 },
      ],
      staticSummary: `${input.model}: ${summarizePrompt(input)}`,
      staticDetails: describeRunForUi(input),
    });
  }

  /**
   * What the workers on this client's task queue serve (tools, model prefixes), as they announce it while they run;
   * `undefined` when none has announced itself, so nothing can be told about them.
   */
  async getWorkerCatalog(): Promise<WorkerCatalog | undefined> {
    return readWorkerCatalog(this.temporal, this.taskQueue);
  }

  /**
   * The run's snapshot: status, step, pending approvals, usage, output, and the build it is on under Worker
   * Versioning. A closed run is read from the record it left in its memo, so no worker needs to be up.
   */
  async getRun(runId: string, scope: TenantScope = {}): Promise<RunSnapshot> {
    const description = await this.describeInScope(runId, scope);
    return this.snapshotOf(runId, description, await this.closedRunRecord(runId, description), scope);
  }

  /** {@link getRun} of a run already described (and its tenant checked), from its record when it left one. */
  private async snapshotOf(
    runId: string,
    description: WorkflowExecutionDescription,
    closed: ClosedRunRecord | undefined,
    scope: TenantScope,
  ): Promise<RunSnapshot> {
    const versioning = runVersioningOf(description);
    const snapshot = closed?.snapshot ?? (await this.unrecordedSnapshot(runId, description, scope));
    if (scope.tenantId !== undefined && snapshot.tenantId !== scope.tenantId) throw runNotFound(runId);
    return versioning ? { ...snapshot, versioning } : snapshot;
  }

  /**
   * The snapshot of a run without a record, from a worker's answer. A closed one is asked for a bounded time (see
   * {@link askClosedRun}); if no worker answers, or it closed before any ran it, its description tells it instead.
   */
  private async unrecordedSnapshot(
    runId: string,
    description: WorkflowExecutionDescription,
    scope: TenantScope,
  ): Promise<RunSnapshot> {
    const ask = () => this.query(runId, () => this.handle(runId).query(snapshotQuery), scope);
    if (description.status.name === 'RUNNING') return ask();
    const answer = await this.askClosedRun(ask);
    return answer ? endedByTemporal(answer, description) : snapshotFromDescription(this.temporal, description);
  }

  /**
   * Asks a closed run through a worker's replay, for at most {@link closedRunQueryTimeoutMs}: undefined when no worker
   * answered in that time, or when the run closed before any workflow task, so no worker ever will.
   */
  private async askClosedRun<T>(ask: () => Promise<T>): Promise<T | undefined> {
    const deadline = Date.now() + closedRunQueryTimeoutMs;
    return this.temporal
      .withDeadline(deadline, ask)
      .catch((error: unknown) => (closedBeforeItRan(error) ? undefined : noWorkerAnswered(error, deadline)));
  }

  /**
   * The run's snapshot, its whole event log and what became of the notices it handed off, from one description of
   * it: a closed run's snapshot and events come from the same record, its long output read once, where `getRun` and
   * `events` one after the other describe the run twice.
   */
  async inspect(runId: string, scope: TenantScope = {}): Promise<RunInspection> {
    const description = await this.describeInScope(runId, scope);
    const closed = await this.closedRunRecord(runId, description);
    const snapshot = await this.snapshotOf(runId, description, closed, scope);
    const events = await this.eventsOf(runId, closed, scope);
    return { snapshot, events, handedOffNotices: await readHandedOffNotices(this.temporal, events) };
  }

  /**
   * What became of the approval notices the run handed off because it closed with them still in flight: the workflow
   * delivering them, its status, and how each ended once it has. Empty for a run that handed off none.
   */
  async handedOffNotices(runId: string, scope: TenantScope = {}): Promise<HandedOffNotices[]> {
    return readHandedOffNotices(this.temporal, await this.events(runId, scope));
  }

  /**
   * The run's events with a sequence number above `after`, read page by page (each bounded in bytes). A closed run's
   * come from its record, without a worker; when the record had to leave older events out, a worker is asked for
   * the whole log (for at most {@link closedRunQueryTimeoutMs}), and without one the record's events come back led
   * by an `events_dropped` marker that says how many are missing.
   */
  async events(runId: string, options: EventsOptions = {}): Promise<RunEvent[]> {
    const description = await this.describeInScope(runId, options);
    return this.eventsOf(runId, await this.closedRunRecord(runId, description), options);
  }

  /** {@link events} of a run already described (and its tenant checked), from its record when it left one. */
  private async eventsOf(
    runId: string,
    closed: ClosedRunRecord | undefined,
    options: EventsOptions,
  ): Promise<RunEvent[]> {
    const limit = options.limit ?? Infinity;
    const after = options.after ?? 0;
    if (!closed) return this.readEventPages(runId, after, limit, options).catch(noEventsIfClosedBeforeItRan);
    const recorded = recordedEventsAfter(closed, after);
    if (recorded[0]?.type !== 'events_dropped') return recorded.slice(0, limit);
    const whole = await this.askClosedRun(() => this.readEventPages(runId, after, limit, options));
    return (whole ?? recorded).slice(0, limit);
  }

  /** Reads the events query page by page, from `after` on, until the log or `limit` is reached. */
  private async readEventPages(runId: string, after: number, limit: number, scope: TenantScope): Promise<RunEvent[]> {
    const events: RunEvent[] = [];
    for (let next = after; ;) {
      const request = { after: next, ...(Number.isFinite(limit) ? { limit: limit - events.length } : {}) };
      const page = await this.query(runId, () => this.handle(runId).query(eventPageQuery, request), scope);
      events.push(...page.events);
      next = page.nextAfter;
      if (!page.hasMore || events.length >= limit) return events;
    }
  }

  /** The tools the run may use as it snapshotted them (JSON Schemas included), read from its history without a worker. */
  async toolCatalog(runId: string, scope: TenantScope = {}): Promise<ToolCatalogEntry[]> {
    await this.checkTenant(runId, scope);
    return this.query(runId, () => readToolCatalog(this.temporal, runId));
  }

  /** Follows the run's events as they happen, until the run ends or `signal` aborts. */
  async *watch(runId: string, options: WatchOptions = {}): AsyncGenerator<RunEvent> {
    let after = options.after ?? 0;
    const interval = options.pollIntervalMs ?? 250;
    const scope: TenantScope = options.tenantId !== undefined ? { tenantId: options.tenantId } : {};
    const deltas = options.deltas === false ? undefined : new ModelDeltaTracker();
    let firstLook = true;
    while (!options.signal?.aborted) {
      // One description a look serves both the events (a closed run's come from its record) and the streamed text.
      const look = await this.lookAt(runId, after, scope).catch((error: unknown) => waitOutUnavailable(error, options));
      if (look === undefined) continue;
      for (const event of look.events) {
        after = event.seq;
        yield event;
        if (terminalEventTypes.has(event.type)) return;
      }
      // Described closed before its events were read, so they were its last.
      if (look.description.status.name !== 'RUNNING') return;
      let streaming = false;
      if (deltas) {
        const delta = deltas.next(await readModelProgress(this.temporal, look.description), after, firstLook);
        firstLook = false;
        if (delta) {
          streaming = true;
          yield delta;
        }
      }
      try {
        const wait = streaming ? Math.min(interval, modelDeltaBatchMs) : interval;
        await sleep(wait, undefined, options.signal ? { signal: options.signal } : undefined);
      } catch {
        return;
      }
    }
  }

  /**
   * One look of a follower: the run described (its tenant checked), then its events after `after`. A run waiting for
   * a worker to recover it cannot answer (`run_unavailable`); the follower waits, as the run itself does.
   */
  private async lookAt(
    runId: string,
    after: number,
    scope: TenantScope,
  ): Promise<{ description: WorkflowExecutionDescription; events: RunEvent[] }> {
    const description = await this.describeInScope(runId, scope);
    const closed = await this.closedRunRecord(runId, description);
    return { description, events: await this.eventsOf(runId, closed, { ...scope, after }) };
  }

  /** Approves a pending tool call; answers once the run has accepted the decision, or throws why it refused. */
  approve(runId: string, toolCallId: string, options: ApproveOptions = {}): Promise<ApprovalOutcome> {
    return this.decide(runId, { toolCallId, decision: 'approve', ...decisionFields(options) }, options);
  }

  /** Rejects a pending tool call; the model is told it was not executed. */
  reject(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<ApprovalOutcome> {
    return this.decide(runId, { toolCallId, decision: 'reject', ...decisionFields(options) }, options);
  }

  /**
   * Sends a decision as a signal: no answer, and an invalid decision is dropped by the run. A reason the run would cut
   * short, and a decision whose `tenantId` is not the run's (`run_not_found`, as for a missing run), are refused here,
   * before anything is sent.
   */
  async signalDecision(runId: string, decision: ApprovalDecision): Promise<void> {
    refuseOverlongReason(decision);
    await this.checkTenant(runId, decision.tenantId !== undefined ? { tenantId: decision.tenantId } : {});
    await this.query(runId, () => this.handle(runId).signal(decideSignal, stampedNow(decision)));
  }

  /**
   * Cancels a run; a tool running at that moment sees `ctx.signal` abort. Temporal records who asked (`relay-e: <by>`)
   * and why on the run's `WorkflowExecutionCancelRequested` event; a `by` or `reason` that is not text or is too long
   * is refused (`invalid_input`) before anything is sent.
   */
  async cancel(runId: string, scope: TenantScope = {}, options: CancelOptions = {}): Promise<void> {
    refuseBadCancelOptions(options);
    // Checked without a query, so a run no worker can answer for right now can still be cancelled.
    await this.checkTenant(runId, scope);
    await this.query(runId, () => this.requestCancel(runId, options));
  }

  /** Waits for the run to end and returns its result; a failed or cancelled run throws. */
  async result(runId: string, scope: TenantScope = {}): Promise<RunResult> {
    await this.checkTenant(runId, scope);
    return this.query(runId, () => this.handle(runId).result());
  }

  /**
   * The tool calls of one tenant's open runs that wait for a human, read from Temporal visibility
   * (list-pending-approvals.ts): the runs on this client's task queue unless `taskQueue` names another (or is `null`,
   * for every task queue's).
   */
  listPendingApprovals(options: ListPendingApprovalsOptions): Promise<PendingApprovals> {
    const scoped = { ...options, taskQueue: this.taskQueueOf(options) };
    return listPendingApprovals(this.temporal, scoped, (runId, tenantId) => this.getRun(runId, { tenantId }));
  }

  /**
   * One page of a tenant's runs from Temporal visibility, open runs first (newest started first), then closed runs
   * (newest closed first), filtered by status and by whether a tool call waits for a human: the runs on this client's
   * task queue unless `taskQueue` names another (or is `null`, for every task queue's).
   */
  listRuns(options: ListRunsOptions): Promise<RunPage> {
    return listRuns(this.temporal, { ...options, taskQueue: this.taskQueueOf(options) });
  }

  /**
   * The task queue a listing keeps to: the one this client starts runs on unless the caller names one, so two projects
   * sharing a namespace do not list each other's runs.
   */
  private taskQueueOf(options: { taskQueue?: string | null }): string | null {
    return options.taskQueue === undefined ? this.taskQueue : options.taskQueue;
  }

  /** Closes the connection this client opened (not one it was given). */
  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  /**
   * A decision no worker took within `decisionWaitMs`, as `run_unavailable`. Temporal keeps it for the run: a worker
   * that picks the run up later may still apply it.
   */
  private decisionUnanswered(runId: string, error: unknown): RelayError {
    if (RelayError.isInstance(error)) return error;
    return new RelayError(
      'run_unavailable',
      `Run '${runId}' took no decision within ${this.decisionWaitMs / 1000} s: no worker answered. Is a Relay-E ` +
        `worker running on task queue '${this.taskQueue}'? Temporal keeps the decision, and a worker that takes the ` +
        'run later may still apply it: read the run before deciding again.',
      { cause: error },
    );
  }

  /**
   * The request `WorkflowHandle.cancel()` sends (which takes no identity or reason), with the caller's identity and
   * reason. Sent on the service itself, so the client's workflow interceptors do not see it.
   */
  private async requestCancel(runId: string, { by, reason }: CancelOptions): Promise<void> {
    const { namespace, identity } = this.temporal.workflow.options;
    try {
      await this.temporal.workflowService.requestCancelWorkflowExecution({
        namespace,
        workflowExecution: { workflowId: runId },
        identity: by !== undefined ? `relay-e: ${by}` : identity,
        requestId: randomUUID(),
        ...(reason !== undefined ? { reason } : {}),
      });
    } catch (error) {
      // A missing namespace is NOT_FOUND too: thrown as the SDK's handle throws it, not as a missing run.
      const missingNamespace = missingNamespaceOf(error);
      throw missingNamespace !== undefined ? new NamespaceNotFoundError(missingNamespace) : error;
    }
  }

  private handle(runId: string): WorkflowHandle<typeof agentRun> {
    return this.temporal.workflow.getHandle<typeof agentRun>(runId);
  }

  private async decide(runId: string, decision: ApprovalDecision, scope: TenantScope): Promise<ApprovalOutcome> {
    refuseOverlongReason(decision);
    // Checked before sending: the run's own check needs a worker, and without one another tenant would wait.
    await this.checkTenant(runId, scope);
    const stamped = stampedNow(decision);
    const scoped = scope.tenantId !== undefined ? { ...stamped, tenantId: scope.tenantId } : stamped;
    try {
      return await this.sendDecision(runId, scoped, scope);
    } catch (error) {
      if (!RelayError.isInstance(error) || error.code !== 'approval_not_pending') throw error;
      if (!(await this.comesToWait(runId, decision.toolCallId, scope))) throw error;
      // Refused by a run that had not applied the model answer proposing the call yet: Temporal hands a workflow task's
      // updates to the run before its activity results, so a decision sent as soon as a reader saw the call can come
      // in the task that delivers it. The call waits now: the same decision goes once more.
      return this.sendDecision(runId, scoped, scope);
    }
  }

  /**
   * Whether the call waits for a decision, once the run has checked its input (an activity, up to
   * {@link callCheckPatienceMs}); false when it never will, has stopped waiting, or the run cannot be read.
   */
  private async comesToWait(runId: string, toolCallId: string, scope: TenantScope): Promise<boolean> {
    const deadline = Date.now() + callCheckPatienceMs;
    for (;;) {
      const events = await this.events(runId, scope).catch(() => undefined);
      const state = events === undefined ? 'not_waiting' : callWaitState(events, toolCallId);
      if (state !== 'on_its_way' || Date.now() > deadline) return state === 'waiting';
      await sleep(200);
    }
  }

  /** Sends a decision by update and turns the run's refusal into a `RelayError` with the refusal's code. */
  private async sendDecision(runId: string, decision: ApprovalDecision, scope: TenantScope): Promise<ApprovalOutcome> {
    // Temporal holds an update until a worker takes it: the deadline ends the wait of a run no worker serves.
    const deadline = Date.now() + this.decisionWaitMs;
    const send = () => this.handle(runId).executeUpdate(decideUpdate, { args: [decision] });
    try {
      return await this.temporal.withDeadline(deadline, () =>
        this.query(runId, () => retryWhileWorkflowTaskFails(send, deadline), scope),
      );
    } catch (error) {
      if (noWorkerAnsweredIn(error, deadline)) throw this.decisionUnanswered(runId, error);
      // Temporal answers an update to a closed workflow as "not found": tell an ended run from a missing one.
      if (RelayError.isInstance(error) && error.code === 'run_not_found' && (await this.hasEnded(runId, scope))) {
        throw new RelayError('approval_not_pending', `Run '${runId}' has ended; it takes no more decisions`, {
          details: { toolCallId: decision.toolCallId },
        });
      }
      if (error instanceof WorkflowUpdateFailedError && error.cause instanceof ApplicationFailure) {
        const code = toErrorCode(error.cause.type);
        if (code === 'tenant_mismatch') throw runNotFound(runId);
        const issues: unknown = error.cause.details?.[0];
        throw new RelayError(code, error.cause.message, {
          cause: error,
          details: { toolCallId: decision.toolCallId, ...(Array.isArray(issues) ? { issues } : {}) },
        });
      }
      throw error;
    }
  }

  /**
   * True when the run exists, belongs to the scope's tenant (if any) and is no longer running; false when it does not
   * exist for the scope. Any other failure to describe it is thrown, not taken for an answer.
   */
  private async hasEnded(runId: string, scope: TenantScope): Promise<boolean> {
    try {
      return (await this.describeInScope(runId, scope)).status.name !== 'RUNNING';
    } catch (error) {
      if (RelayError.isInstance(error) && error.code === 'run_not_found') return false;
      throw error;
    }
  }

  /**
   * The record a closed run left in its memo (decoded with this client's data converter, inflated when deflated), from
   * its description; undefined while the run is open, or for a run that closed before runs left records.
   */
  private async closedRunRecord(
    runId: string,
    description: WorkflowExecutionDescription,
  ): Promise<ClosedRunRecord | undefined> {
    if (description.status.name === 'RUNNING') return undefined;
    const record = readClosedRunMemo(description.memo?.[closedRunMemoKey], runId);
    if (!record) return undefined;
    if (!record.outputInResult) return record;
    // A long output was left to the run's result (the close event in its history), so the memo stays small.
    const result = await this.query(runId, () => this.handle(runId).result());
    return withOutput(record, result.output ?? '');
  }

  /**
   * Resolves when the run exists, in the scope's tenant when one is given; a missing run and another tenant's are
   * both `run_not_found`. Asks Temporal only, so it needs no worker.
   */
  async assertRunExists(runId: string, scope: TenantScope = {}): Promise<void> {
    await this.describeInScope(runId, scope);
  }

  /** Refuses a run of another tenant as `run_not_found` (see {@link describeInScope}). */
  private async checkTenant(runId: string, scope: TenantScope): Promise<void> {
    if (scope.tenantId !== undefined) await this.describeInScope(runId, scope);
  }

  /**
   * The run's description from the server, or `run_not_found` when it belongs to another tenant than the scope's.
   * The tenant comes from its search attribute rather than from the run, which may be waiting for a worker.
   */
  private async describeInScope(runId: string, scope: TenantScope): Promise<WorkflowExecutionDescription> {
    const description = await this.query(runId, () => this.handle(runId).describe());
    const tenant = description.typedSearchAttributes.get(relaySearchAttributes.tenant);
    if (scope.tenantId !== undefined && tenant !== scope.tenantId) throw runNotFound(runId);
    return description;
  }

  /**
   * Runs a Temporal call, turning "no such workflow" into `run_not_found` and a run whose workflow task is
   * failing into `run_unavailable` (after the tenant check, so another tenant still sees `run_not_found`).
   */
  private async query<T>(runId: string, call: () => Promise<T>, scope: TenantScope = {}): Promise<T> {
    try {
      return await call();
    } catch (error) {
      if (isWorkflowNotFound(error)) throw runNotFound(runId, error);
      const why = whyRunCannotAnswer(error, this.taskQueue);
      if (why !== undefined) {
        await this.checkTenant(runId, scope);
        throw new RelayError('run_unavailable', `Run '${runId}' cannot answer right now: ${why}`, { cause: error });
      }
      throw error;
    }
  }
}

/**
 * How long reading a closed run's whole event log waits for a worker, when its record had to leave events out: a
 * query to a closed run is answered by a worker replaying its history, and with none running the server would
 * hold the query for about half a minute.
 */
export const closedRunQueryTimeoutMs = 5_000;

/** How long a refused decision waits for its call's input check before the refusal stands (RelayClient.decide). */
const callCheckPatienceMs = 10_000;

/**
 * Resolves to nothing when no worker answered a query before `deadline` (the run's record answers instead); any
 * other failure is thrown.
 */
function noWorkerAnswered(error: unknown, deadline: number): undefined {
  if (noWorkerAnsweredIn(error, deadline)) return undefined;
  throw error;
}

/**
 * How long a decision waits for the run to take it by default: a run whose workflow task is failing (a worker died
 * mid-task) recovers within this.
 */
const defaultDecisionWaitMs = 60_000;

function checkedDecisionWaitMs(decisionWaitMs: number | undefined): number {
  if (decisionWaitMs === undefined) return defaultDecisionWaitMs;
  if (Number.isFinite(decisionWaitMs) && decisionWaitMs > 0) return decisionWaitMs;
  throw new RelayError(
    'invalid_input',
    `decisionWaitMs must be a positive number of milliseconds, not ${decisionWaitMs}`,
  );
}

/** The events of a run that closed before any workflow task ran: it recorded none. */
function noEventsIfClosedBeforeItRan(error: unknown): RunEvent[] {
  if (closedBeforeItRan(error)) return [];
  throw error;
}

/**
 * Temporal refuses an update, before recording anything, while the run's last workflow task failed or timed
 * out, which is what a worker killed mid-task leaves behind until another worker picks the run up. The
 * approver should not see that: retry with backoff until it clears or `deadline` passes.
 */
async function retryWhileWorkflowTaskFails<T>(call: () => Promise<T>, deadline: number): Promise<T> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!isWorkflowTaskFailing(error) || Date.now() >= deadline) throw error;
      await sleep(Math.min(250 * attempt, 2_000));
    }
  }
}

function isWorkflowTaskFailing(error: unknown): boolean {
  return /Workflow Task in failed state/i.test(grpcMessageOf(error));
}

/**
 * Why Temporal could not get an answer from the run, when the reason is that no worker could give one: its
 * workflow task is failing (a worker died holding it, or the code fails), or no worker took the query at all.
 */
function whyRunCannotAnswer(error: unknown, taskQueue: string): string | undefined {
  if (isWorkflowTaskFailing(error)) {
    return (
      'its last workflow task failed or timed out (a worker died or is failing it) and no worker has completed ' +
      "one since. Try again shortly; if this lasts, the workflow task failures in the run's history say why."
    );
  }
  if (/query timed out before a worker could process it/i.test(grpcMessageOf(error))) {
    return `no worker answered in time. Is a Relay-E worker running on task queue '${taskQueue}'?`;
  }
  // What the server answers at once, instead of waiting, once no worker has polled the run's task queue for a while.
  if (/no poller seen for task queue recently/i.test(grpcMessageOf(error))) {
    return `no worker has polled its task queue recently. Is a Relay-E worker running on task queue '${taskQueue}'?`;
  }
  return undefined;
}

/** The messages of a gRPC error, or of the gRPC error the SDK wrapped; empty for anything else. */
function grpcMessageOf(error: unknown): string {
  const cause = error instanceof Error && error.cause !== undefined ? error.cause : error;
  if (!isGrpcServiceError(error) && !isGrpcServiceError(cause)) return '';
  return `${(error as Error).message} ${(cause as Error).message ?? ''}`;
}

function decisionFields(options: ApproveOptions): Omit<ApprovalDecision, 'toolCallId' | 'decision' | 'tenantId'> {
  return {
    ...(options.approver !== undefined ? { approver: options.approver } : {}),
    ...(options.reason !== undefined ? { reason: options.reason } : {}),
    ...(options.input !== undefined ? { input: options.input } : {}),
    ...(options.requestedAt !== undefined ? { requestedAt: options.requestedAt } : {}),
  };
}

/** Refuses a cancel's `by` or `reason` that is not text or is longer than a decision's reason may be (or `by` empty). */
function refuseBadCancelOptions({ by, reason }: CancelOptions): void {
  refuseUnlessText('by', by, 1);
  refuseUnlessText('reason', reason, 0);
}

function refuseUnlessText(field: keyof CancelOptions, value: unknown, shortest: number): void {
  if (value === undefined) return;
  const ok = typeof value === 'string' && value.length >= shortest && value.length <= maxDecisionReasonLength;
  if (ok) return;
  const given = typeof value === 'string' ? `${value.length} characters` : typeof value;
  throw new RelayError(
    'invalid_input',
    `A cancel's ${field} is text of ${shortest} to ${maxDecisionReasonLength} characters, not ${given}`,
  );
}

/** Refuses a reason the run would cut short: it keeps (and the model reads) only its first characters. */
function refuseOverlongReason({ reason, toolCallId }: ApprovalDecision): void {
  if (reason === undefined || reason.length <= maxDecisionReasonLength) return;
  throw new RelayError(
    'invalid_input',
    `A decision's reason is at most ${maxDecisionReasonLength} characters, not ${reason.length}`,
    { details: { toolCallId } },
  );
}

/** A decision stamped with this client's clock unless it says when it was sent (the run records that time). */
function stampedNow(decision: ApprovalDecision): ApprovalDecision {
  return { decidedAt: new Date().toISOString(), ...decision };
}

/** How long a follower waits before asking a run that could not answer again. */
const unavailablePollMs = 1_000;

/** Lets a follower wait out `run_unavailable` (resolving to nothing read); anything else is a real failure. */
async function waitOutUnavailable(
  error: unknown,
  { onUnavailable, signal }: Pick<WatchOptions, 'onUnavailable' | 'signal'>,
): Promise<undefined> {
  if (!RelayError.isInstance(error) || error.code !== 'run_unavailable') throw error;
  onUnavailable?.(error);
  await sleep(unavailablePollMs, undefined, signal ? { signal } : undefined).catch(() => undefined);
  return undefined;
}

/** Why no worker in the catalog can serve the run: a tool in its allow-list none serves, or a model none has. */
function unservedBy(input: AgentRunInput, catalog: WorkerCatalog): RelayError | undefined {
  const served = new Set(catalog.tools.map((tool) => tool.name));
  const unknown = [...new Set(input.tools ?? [])].filter((name) => !served.has(name));
  if (unknown.length > 0) {
    return new RelayError(
      'unknown_tool',
      `No worker serves the tool(s) ${unknown.map((name) => `'${name}'`).join(', ')} (served: ${[...served].join(', ') || 'none'})`,
      { details: { names: unknown } },
    );
  }
  const { provider } = parseModelId(input.model);
  if (!catalog.modelPrefixes.includes(provider)) {
    return new RelayError(
      'model_not_configured',
      `No worker serves models '${provider}:…' (served: ${catalog.modelPrefixes.map((prefix) => `${prefix}:…`).join(', ') || 'none'})`,
      { details: { model: input.model } },
    );
  }
  return undefined;
}

function runNotFound(runId: string, cause?: unknown): RelayError {
  return new RelayError('run_not_found', `Run '${runId}' not found`, cause === undefined ? undefined : { cause });
}

function toErrorCode(type: string | undefined | null): ErrorCode {
  return (errorCodes as readonly string[]).includes(type ?? '') ? (type as ErrorCode) : 'invalid_input';
}

/** The run's static details in the Temporal Web UI (markdown): tenant, user, model and the tools it may use. */
function describeRunForUi(input: AgentRunInput): string {
  const tools = input.tools ? input.tools.map((name) => `\`${name}\``).join(', ') : "all of the worker's tools";
  return [
    `**Relay-E agent run** for tenant \`${input.tenantId}\`${input.userId ? `, user \`${input.userId}\`` : ''}`,
    '',
    `- model: \`${input.model}\``,
    `- tools: ${tools}`,
  ].join('\n');
}

function summarizePrompt(input: AgentRunInput): string {
  const lastUser = [...(input.messages ?? [])].reverse().find((message) => message.role === 'user');
  const text = input.prompt ?? (lastUser && 'content' in lastUser ? lastUser.content : '');
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}

/**
 * The snapshot of a run Temporal ended without its code running to the end (terminated, or past its execution
 * timeout): such a run leaves no record, and a replay answers with its last live state, waiting calls and all. It
 * failed, as `listRuns` says, and nothing waits any more.
 */
function endedByTemporal(snapshot: RunSnapshot, description: WorkflowExecutionDescription): RunSnapshot {
  const status = description.status.name;
  if (status !== 'TERMINATED' && status !== 'TIMED_OUT') return snapshot;
  return {
    ...snapshot,
    status: 'failed',
    stopReason: 'error',
    pendingApprovals: [],
    error: `Temporal ${status === 'TERMINATED' ? 'terminated' : 'timed out'} the run; its event log ends where it stopped`,
    ...(description.closeTime ? { updatedAt: description.closeTime.toISOString() } : {}),
  };
}
