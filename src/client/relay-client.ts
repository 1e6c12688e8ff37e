import { Client, Connection } from '@temporalio/client';
import type { BackoffOptions, ClientPlugin, ConnectionOptions } from '@temporalio/client';
import type { DataConverter } from '@temporalio/common';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { withKeylessRefusal } from '../security/keyless-payload-codec.js';
import { withEncryption } from '../security/with-encryption.js';
import type { RelayError } from '../shared/errors.js';
import type {
  AgentRunInput,
  ApprovalDecision,
  ApprovalOutcome,
  RunEvent,
  RunResult,
  RunSnapshot,
} from '../shared/run-types.js';
import type { ToolCatalogEntry } from '../shared/tool-catalog.js';
import type { WorkerCatalog } from '../shared/worker-catalog.js';
import { cancelRun } from './cancel-run.js';
import { relayConnectionInterceptors } from './connection-interceptors.js';
import { listPendingApprovals } from './list-pending-approvals.js';
import type { ListPendingApprovalsOptions, PendingApprovals } from './list-pending-approvals.js';
import { listRuns } from './list-runs.js';
import type { ListRunsOptions, RunPage } from './list-runs.js';
import { readHandedOffNotices } from './read-handed-off-notices.js';
import type { HandedOffNotices } from './read-handed-off-notices.js';
import { closedRunQueryTimeoutMs, inspectRun, readRun, readRunEvents } from './read-run.js';
import { readToolCatalog } from './read-tool-catalog.js';
import { readWorkerCatalog } from './read-worker-catalog.js';
import { callRun, checkTenant, describeInScope, runHandle } from './run-access.js';
import { checkedDecisionWaitMs, decide, decisionFields, signalDecision } from './run-decisions.js';
import type { DecisionContext } from './run-decisions.js';
import { ServedRunCheck, startRun } from './start-run.js';
import { watchRun } from './watch-run.js';
import { readWorkflowTaskFailure } from './workflow-task-failure.js';
import type { WorkflowTaskFailure } from './workflow-task-failure.js';

export { closedRunQueryTimeoutMs };

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
   * Called once each time the run stops answering (`run_unavailable`), with why: its workflow task fails on the
   * workers (what it fails with, or that its history no longer replays and the reset that recovers it, read once from
   * its history), or no worker polls its task queue. The follower waits and asks again, as the run itself waits; this
   * is how its caller learns why nothing comes. A reason read after the run answered again is not told.
   */
  onUnavailable?: (error: RelayError) => void;
  /** Called when the run answers again after {@link onUnavailable} was called: its events follow as before. */
  onAvailable?: () => void;
  /**
   * The caller found the run unable to answer just before it watches (its own read answered `run_unavailable`): the
   * first look that answers calls {@link onAvailable}, as one after {@link onUnavailable} does. Given the error that
   * read got, {@link onUnavailable} is told why at once rather than after the first look.
   * @default false
   */
  unavailableAtStart?: boolean | RelayError;
}

/** Starts, inspects and steers agent runs from TypeScript. */
export class RelayClient {
  readonly temporal: Client;
  readonly taskQueue: string;
  private readonly ownedConnection?: Connection;
  /** What approvals and rejections are sent through, with how long a run has to take one. */
  private readonly decisions: DecisionContext;
  /** startRun's check against what the workers serve, read through {@link getWorkerCatalog}. */
  private readonly servedCheck = new ServedRunCheck(() => this.getWorkerCatalog());

  private constructor(
    temporal: Client,
    options: Pick<RelayClientOptions, 'taskQueue' | 'decisionWaitMs'>,
    ownedConnection?: Connection,
  ) {
    this.temporal = temporal;
    this.taskQueue = options.taskQueue;
    this.decisions = {
      temporal,
      taskQueue: options.taskQueue,
      decisionWaitMs: checkedDecisionWaitMs(options.decisionWaitMs),
    };
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
    return startRun(this, this.servedCheck, options);
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
    return readRun(this, runId, scope);
  }

  /**
   * The run's snapshot, its whole event log and what became of the notices it handed off, from one description of
   * it: a closed run's snapshot and events come from the same record, its long output read once, where `getRun` and
   * `events` one after the other describe the run twice.
   */
  async inspect(runId: string, scope: TenantScope = {}): Promise<RunInspection> {
    return inspectRun(this, runId, scope);
  }

  /**
   * Why the run's workflow task fails, read from its history, when its newest task failed and none has completed
   * since (a run that answers `run_unavailable` for that reason); undefined otherwise. A nondeterministic failure
   * names the event to reset the run to (docs/operations.md). Reads the whole history: for an operator, not a poller.
   */
  async workflowTaskFailure(runId: string, scope: TenantScope = {}): Promise<WorkflowTaskFailure | undefined> {
    await checkTenant(this, runId, scope);
    return callRun(this, runId, () => readWorkflowTaskFailure(this, runId));
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
    return readRunEvents(this, runId, options);
  }

  /** The tools the run may use as it snapshotted them (JSON Schemas included), read from its history without a worker. */
  async toolCatalog(runId: string, scope: TenantScope = {}): Promise<ToolCatalogEntry[]> {
    await checkTenant(this, runId, scope);
    return callRun(this, runId, () => readToolCatalog(this.temporal, runId));
  }

  /** Follows the run's events as they happen, until the run ends or `signal` aborts. */
  watch(runId: string, options: WatchOptions = {}): AsyncGenerator<RunEvent> {
    const scope = options.tenantId !== undefined ? { tenantId: options.tenantId } : {};
    return watchRun(this, runId, options, () => this.workflowTaskFailure(runId, scope));
  }

  /** Approves a pending tool call; answers once the run has accepted the decision, or throws why it refused. */
  approve(runId: string, toolCallId: string, options: ApproveOptions = {}): Promise<ApprovalOutcome> {
    return decide(this.decisions, runId, { toolCallId, decision: 'approve', ...decisionFields(options) }, options);
  }

  /** Rejects a pending tool call; the model is told it was not executed. */
  reject(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<ApprovalOutcome> {
    return decide(this.decisions, runId, { toolCallId, decision: 'reject', ...decisionFields(options) }, options);
  }

  /**
   * Sends a decision as a signal: no answer; a decision the run does not take is recorded as `decision_ignored` (20
   * at most an execution). It carries this machine's time as `decidedAt` (unless it names one), which the run takes
   * as the decision's time, bounded only by the call's expiry (an update's is bounded by the workflow task that takes
   * it too). A reason the run would cut short, and a decision whose `tenantId` is not the run's (`run_not_found`, as
   * for a missing run), are refused here, before anything is sent.
   */
  async signalDecision(runId: string, decision: ApprovalDecision): Promise<void> {
    await signalDecision(this, runId, decision);
  }

  /**
   * Cancels a run; a tool running at that moment sees `ctx.signal` abort. Temporal records who asked (`relay-e: <by>`)
   * and why on the run's `WorkflowExecutionCancelRequested` event; a `by` or `reason` that is not text or is too long
   * is refused (`invalid_input`) before anything is sent.
   */
  async cancel(runId: string, scope: TenantScope = {}, options: CancelOptions = {}): Promise<void> {
    await cancelRun(this, runId, scope, options);
  }

  /** Waits for the run to end and returns its result; a failed or cancelled run throws. */
  async result(runId: string, scope: TenantScope = {}): Promise<RunResult> {
    await checkTenant(this, runId, scope);
    return callRun(this, runId, () => runHandle(this, runId).result());
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
   * Resolves when the run exists, in the scope's tenant when one is given; a missing run and another tenant's are
   * both `run_not_found`. Asks Temporal only, so it needs no worker.
   */
  async assertRunExists(runId: string, scope: TenantScope = {}): Promise<void> {
    await describeInScope(this, runId, scope);
  }
}
