import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  Client,
  Connection,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  isGrpcServiceError,
} from '@temporalio/client';
import type { ClientPlugin, ConnectionOptions, WorkflowExecutionDescription, WorkflowHandle } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { DataConverter } from '@temporalio/common';
import type { agentRun } from '../../workflows/agent-run.js';
import { decideSignal, decideUpdate, eventsQuery, snapshotQuery } from '../../workflows/messages.js';
import type { EncryptionOptions } from '../security/encryption-keys.js';
import { withEncryption } from '../security/with-encryption.js';
import { RelayError, errorCodes } from '../shared/errors.js';
import type { ErrorCode } from '../shared/errors.js';
import { parseModelId } from '../model/model-registry.js';
import { agentRunInputSchema } from '../shared/run-input-schema.js';
import type {
  AgentRunInput,
  ApprovalDecision,
  ApprovalOutcome,
  PendingApproval,
  RunEvent,
  RunResult,
  RunSnapshot,
} from '../shared/run-types.js';
import { relaySearchAttributes } from '../shared/search-attributes.js';
import { checkToolInput } from '../shared/tool-input.js';
import { workerCatalogMemoKey, workerCatalogWorkflowId } from '../shared/worker-catalog.js';
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
}

export interface StartRunOptions extends AgentRunInput {
  /** The run's id (its workflow id); a fresh `run_<uuid>` when absent. Starting an id twice is refused. */
  runId?: string;
}

/** Limits a call to one tenant's runs: another tenant's run is reported as not found. */
export interface TenantScope {
  tenantId?: string;
}

export interface DecisionOptions extends TenantScope {
  approver?: string;
  reason?: string;
}

export interface ApproveOptions extends DecisionOptions {
  /** Edited arguments to run instead of the proposed ones; refused if they fail the tool's schema. */
  input?: unknown;
}

export interface WatchOptions extends TenantScope {
  /** Only events with a higher sequence number. @default 0 */
  after?: number;
  /** How often to ask the run for new events. @default 250 */
  pollIntervalMs?: number;
  signal?: AbortSignal;
}

export interface ListPendingApprovalsOptions {
  /** The tenant whose approvals to list; required, since an approver must never see another tenant's calls. */
  tenantId: string;
  /** How many runs to read at most, newest first. @default 100 */
  limit?: number;
}

/** A pending approval with the run it belongs to. */
export interface RunPendingApproval extends PendingApproval {
  runId: string;
  model: string;
  userId?: string;
  sessionId?: string;
}

/** gRPC status NOT_FOUND: what the server answers for a workflow id it does not know. */
const grpcNotFound = 5;

const terminalEventTypes = new Set<RunEvent['type']>(['run_completed', 'run_failed', 'run_cancelled']);

/** Starts, inspects and steers agent runs from TypeScript. */
export class RelayClient {
  readonly temporal: Client;
  readonly taskQueue: string;
  private readonly ownedConnection?: Connection;

  private constructor(temporal: Client, taskQueue: string, ownedConnection?: Connection) {
    this.temporal = temporal;
    this.taskQueue = taskQueue;
    if (ownedConnection) this.ownedConnection = ownedConnection;
  }

  /** Connects to a Temporal server (local, self-hosted or Cloud). */
  static async connect(options: RelayClientOptions): Promise<RelayClient> {
    const connection =
      options.connection ??
      (await Connection.connect({
        address: options.address ?? 'localhost:7233',
        ...(options.apiKey !== undefined ? { apiKey: options.apiKey } : {}),
        ...(options.tls !== undefined ? { tls: options.tls } : options.apiKey !== undefined ? { tls: true } : {}),
      }));
    const dataConverter = withEncryption(options.dataConverter, options.encryption);
    const temporal = new Client({
      connection,
      namespace: options.namespace ?? 'default',
      ...(dataConverter ? { dataConverter } : {}),
      ...(options.plugins ? { plugins: options.plugins } : {}),
    });
    return new RelayClient(temporal, options.taskQueue, options.connection ? undefined : connection);
  }

  /** Starts a run; the input is checked first, so a bad request never reaches Temporal. */
  async startRun(options: StartRunOptions): Promise<{ runId: string }> {
    const { runId = `run_${randomUUID()}`, ...input } = options;
    const check = checkToolInput(agentRunInputSchema(), input);
    if (!check.success) {
      throw new RelayError('invalid_input', check.message.replace('Validation failed', 'Invalid run input'), {
        details: { issues: check.issues },
      });
    }
    refuseWhatNoWorkerServes(input, await this.getWorkerCatalog());
    await this.temporal.workflow.start<typeof agentRun>('agentRun', {
      workflowId: runId,
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
    });
    return { runId };
  }

  /**
   * What the workers on this client's task queue serve (tools, model prefixes), as they announce it while they run;
   * `undefined` when none has announced itself, so nothing can be told about them.
   */
  async getWorkerCatalog(): Promise<WorkerCatalog | undefined> {
    let description: WorkflowExecutionDescription;
    try {
      description = await this.temporal.workflow.getHandle(workerCatalogWorkflowId(this.taskQueue)).describe();
    } catch (error) {
      if (isNotFound(error)) return undefined;
      throw error;
    }
    const catalog = description.memo?.[workerCatalogMemoKey] as WorkerCatalog | undefined;
    return description.status.name === 'RUNNING' && catalog !== undefined && catalog.workers > 0 ? catalog : undefined;
  }

  /** The run's snapshot: status, step, pending approvals, usage, output. */
  async getRun(runId: string, scope: TenantScope = {}): Promise<RunSnapshot> {
    const snapshot = await this.query(runId, () => this.handle(runId).query(snapshotQuery), scope);
    if (scope.tenantId !== undefined && snapshot.tenantId !== scope.tenantId) throw runNotFound(runId);
    return snapshot;
  }

  /** The run's events with a sequence number above `after`. */
  async events(runId: string, options: TenantScope & { after?: number } = {}): Promise<RunEvent[]> {
    if (options.tenantId !== undefined) await this.getRun(runId, options);
    return this.query(runId, () => this.handle(runId).query(eventsQuery, options.after ?? 0), options);
  }

  /** Follows the run's events as they happen, until the run ends or `signal` aborts. */
  async *watch(runId: string, options: WatchOptions = {}): AsyncGenerator<RunEvent> {
    let after = options.after ?? 0;
    const interval = options.pollIntervalMs ?? 250;
    if (options.tenantId !== undefined) await this.getRun(runId, options);
    let closed = false;
    while (!options.signal?.aborted) {
      // A run waiting for a worker to recover it cannot answer; a follower waits, as the run itself does.
      const events = await this.events(runId, { after }).catch((error: unknown) => waitOutUnavailable(error));
      if (events === undefined) continue;
      for (const event of events) {
        after = event.seq;
        yield event;
        if (terminalEventTypes.has(event.type)) return;
      }
      if (closed) return;
      // The run may close between the read and this check: once it has, read one more time before ending.
      if (events.length === 0) closed = await this.isClosed(runId);
      if (closed) continue;
      try {
        await sleep(interval, undefined, options.signal ? { signal: options.signal } : undefined);
      } catch {
        return;
      }
    }
  }

  /** Approves a pending tool call; answers once the run has accepted the decision, or throws why it refused. */
  approve(runId: string, toolCallId: string, options: ApproveOptions = {}): Promise<ApprovalOutcome> {
    return this.decide(runId, { toolCallId, decision: 'approve', ...decisionFields(options) }, options);
  }

  /** Rejects a pending tool call; the model is told it was not executed. */
  reject(runId: string, toolCallId: string, options: DecisionOptions = {}): Promise<ApprovalOutcome> {
    return this.decide(runId, { toolCallId, decision: 'reject', ...decisionFields(options) }, options);
  }

  /** Sends a decision as a signal: no answer, and an invalid decision is dropped by the run. */
  async signalDecision(runId: string, decision: ApprovalDecision): Promise<void> {
    await this.query(runId, () => this.handle(runId).signal(decideSignal, decision));
  }

  /** Cancels a run; a tool running at that moment sees `ctx.signal` abort. */
  async cancel(runId: string, scope: TenantScope = {}): Promise<void> {
    // Checked without a query, so a run no worker can answer for right now can still be cancelled.
    await this.checkTenant(runId, scope);
    await this.query(runId, () => this.handle(runId).cancel());
  }

  /** Waits for the run to end and returns its result; a failed or cancelled run throws. */
  async result(runId: string, scope: TenantScope = {}): Promise<RunResult> {
    await this.checkTenant(runId, scope);
    return this.query(runId, () => this.handle(runId).result());
  }

  /**
   * The tool calls of one tenant's open runs that wait for a human, found through the search attributes and
   * read from each run's snapshot (visibility lags the run by a moment; the snapshot does not).
   */
  async listPendingApprovals(options: ListPendingApprovalsOptions): Promise<RunPendingApproval[]> {
    const { tenantId, limit = 100 } = options;
    // Visibility queries have no bind parameters; a tenant id that could close the string literal is refused.
    if (!/^[\w.:@-]{1,128}$/.test(tenantId)) {
      throw new RelayError('invalid_input', `Tenant id '${tenantId}' cannot be used in a visibility query`);
    }
    const query =
      `WorkflowType = 'agentRun' AND ExecutionStatus = 'Running' AND ` +
      `${relaySearchAttributes.tenant.name} = '${tenantId}' AND ${relaySearchAttributes.pendingApprovals.name} > 0`;
    const runIds: string[] = [];
    for await (const execution of this.temporal.workflow.list({ query, pageSize: Math.min(limit, 1_000) })) {
      runIds.push(execution.workflowId);
      if (runIds.length >= limit) break;
    }
    const snapshots = await Promise.all(
      runIds.map((runId) => this.getRun(runId, { tenantId }).catch((error: unknown) => skipRunThatCannotAnswer(error))),
    );
    return snapshots.flatMap((snapshot) =>
      snapshot
        ? snapshot.pendingApprovals.map((approval) => ({
            ...approval,
            runId: snapshot.runId,
            model: snapshot.model,
            ...(snapshot.userId !== undefined ? { userId: snapshot.userId } : {}),
            ...(snapshot.sessionId !== undefined ? { sessionId: snapshot.sessionId } : {}),
          }))
        : [],
    );
  }

  /** Closes the connection this client opened (not one it was given). */
  async close(): Promise<void> {
    await this.ownedConnection?.close();
  }

  private handle(runId: string): WorkflowHandle<typeof agentRun> {
    return this.temporal.workflow.getHandle<typeof agentRun>(runId);
  }

  private async isClosed(runId: string): Promise<boolean> {
    const description = await this.query(runId, () => this.handle(runId).describe());
    return description.status.name !== 'RUNNING';
  }

  private async decide(runId: string, decision: ApprovalDecision, scope: TenantScope): Promise<ApprovalOutcome> {
    const scoped = scope.tenantId !== undefined ? { ...decision, tenantId: scope.tenantId } : decision;
    try {
      return await this.query(
        runId,
        () => retryWhileWorkflowTaskFails(() => this.handle(runId).executeUpdate(decideUpdate, { args: [scoped] })),
        scope,
      );
    } catch (error) {
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

  /** True when the run exists, belongs to the scope's tenant (if any) and is no longer running. */
  private async hasEnded(runId: string, scope: TenantScope): Promise<boolean> {
    try {
      return (await this.describeInScope(runId, scope)).status.name !== 'RUNNING';
    } catch {
      return false;
    }
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
      if (isNotFound(error)) throw runNotFound(runId, error);
      const why = whyRunCannotAnswer(error, this.taskQueue);
      if (why !== undefined) {
        await this.checkTenant(runId, scope);
        throw new RelayError('run_unavailable', `Run '${runId}' cannot answer right now: ${why}`, { cause: error });
      }
      throw error;
    }
  }
}

/** How long a decision waits for a run whose workflow task is failing (a worker died mid-task) to recover. */
const workflowTaskRecoveryMs = 60_000;

/**
 * Temporal refuses an update, before recording anything, while the run's last workflow task failed or timed
 * out, which is what a worker killed mid-task leaves behind until another worker picks the run up. The
 * approver should not see that: retry with backoff until it clears or `workflowTaskRecoveryMs` passes.
 */
async function retryWhileWorkflowTaskFails<T>(call: () => Promise<T>): Promise<T> {
  const deadline = Date.now() + workflowTaskRecoveryMs;
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
  };
}

/**
 * A run listed a moment ago may have closed since, or be waiting for a worker to recover it (its approvals
 * show again once it can answer); anything else is a real failure.
 */
function skipRunThatCannotAnswer(error: unknown): undefined {
  if (RelayError.isInstance(error) && (error.code === 'run_not_found' || error.code === 'run_unavailable'))
    return undefined;
  throw error;
}

/** How long a follower waits before asking a run that could not answer again. */
const unavailablePollMs = 1_000;

/** Lets a follower wait out `run_unavailable` (resolving to nothing read); anything else is a real failure. */
async function waitOutUnavailable(error: unknown): Promise<undefined> {
  if (!RelayError.isInstance(error) || error.code !== 'run_unavailable') throw error;
  await sleep(unavailablePollMs);
  return undefined;
}

/**
 * Refuses, before the run starts, a tool allow-list naming a tool no worker serves and a model whose provider no
 * worker has; without a catalog nothing can be told, and the run itself reports what it lacks.
 */
function refuseWhatNoWorkerServes(input: AgentRunInput, catalog: WorkerCatalog | undefined): void {
  if (catalog === undefined) return;
  const served = new Set(catalog.tools.map((tool) => tool.name));
  const unknown = [...new Set(input.tools ?? [])].filter((name) => !served.has(name));
  if (unknown.length > 0) {
    throw new RelayError(
      'unknown_tool',
      `No worker serves the tool(s) ${unknown.map((name) => `'${name}'`).join(', ')} (served: ${[...served].join(', ') || 'none'})`,
      { details: { names: unknown } },
    );
  }
  const { provider } = parseModelId(input.model);
  if (!catalog.modelPrefixes.includes(provider)) {
    throw new RelayError(
      'model_not_configured',
      `No worker serves models '${provider}:…' (served: ${catalog.modelPrefixes.map((prefix) => `${prefix}:…`).join(', ') || 'none'})`,
      { details: { model: input.model } },
    );
  }
}

function isNotFound(error: unknown): boolean {
  return error instanceof WorkflowNotFoundError || (isGrpcServiceError(error) && Number(error.code) === grpcNotFound);
}

function runNotFound(runId: string, cause?: unknown): RelayError {
  return new RelayError('run_not_found', `Run '${runId}' not found`, cause === undefined ? undefined : { cause });
}

function toErrorCode(type: string | undefined | null): ErrorCode {
  return (errorCodes as readonly string[]).includes(type ?? '') ? (type as ErrorCode) : 'invalid_input';
}

function summarizePrompt(input: AgentRunInput): string {
  const lastUser = [...(input.messages ?? [])].reverse().find((message) => message.role === 'user');
  const text = input.prompt ?? (lastUser && 'content' in lastUser ? lastUser.content : '');
  return text.length > 120 ? `${text.slice(0, 117)}...` : text;
}
