import { isGrpcServiceError, ServiceError } from '@temporalio/client';
import type { Client } from '@temporalio/client';
import { rethrowKnownErrorTypes } from '@temporalio/client/lib/helpers.js';
import { RelayError } from '../shared/errors.js';
import { pendingApprovalsMemoKey, readPendingApprovalsMemo } from '../shared/pending-approvals-memo.js';
import type { PendingApprovalsMemo } from '../shared/pending-approvals-memo.js';
import type { PendingApproval, RunSnapshot } from '../shared/run-types.js';
import { openRunListingBytes, runListingQuery, tenantRuns } from './list-runs.js';
import { noWorkerAnsweredIn } from './no-worker-answered.js';
import { executionInfosOf, listExecutionPage } from './visibility-pages.js';

export interface ListPendingApprovalsOptions {
  /** The tenant whose approvals to list; required, since an approver must never see another tenant's calls. */
  tenantId: string;
  /**
   * Only runs started on this task queue (one project's, when projects share a namespace); `null` lists every task
   * queue's runs.
   * @default the client's task queue, the one its `startRun` starts runs on
   */
  taskQueue?: string | null;
  /** How many waiting runs to read at most, newest first (`hasMore` says when more wait). @default 100 */
  limit?: number;
}

/** A pending approval with the run it belongs to. */
export interface RunPendingApproval extends PendingApproval {
  runId: string;
  model: string;
  userId?: string;
  sessionId?: string;
}

/** A tenant's pending approvals, and the waiting runs that could not say which calls wait. */
export interface PendingApprovals {
  approvals: RunPendingApproval[];
  /**
   * Runs that visibility lists as waiting for a human, whose memo does not keep their calls, and that did not answer
   * within {@link pendingApprovalAnswerMs} (no worker serves their task queue, or their workflow task is failing):
   * their calls are not in `approvals`.
   */
  unanswered: Array<{ runId: string; error: string }>;
  /** True when more runs wait than `limit` let the listing read: their calls are in neither list. */
  hasMore: boolean;
}

/**
 * How long listing pending approvals waits for each run's snapshot: a run no worker serves would hold its query for
 * about half a minute, and the tenant's whole list with it.
 */
const pendingApprovalAnswerMs = 5_000;

/** Reads a run's snapshot, scoped to a tenant (`RelayClient.getRun`). */
type ReadSnapshot = (runId: string, tenantId: string) => Promise<RunSnapshot>;

/** What listing pending approvals learnt of one waiting run. */
interface PendingAnswer {
  approvals?: RunPendingApproval[];
  unanswered?: { runId: string; error: string };
}

/**
 * The tool calls of one tenant's open runs that wait for a human, all read from Temporal visibility: the search
 * attributes find the waiting runs and each run keeps its waiting calls in its memo, so no worker is asked and none
 * needs to be up (visibility trails a run by a moment: a call decided just now can still be listed, and its decision
 * then answers `approval_not_pending`). A run that does not keep them there (started before that rule, or waiting on
 * more than 16 KiB of calls as JSON) is asked for its snapshot; one that cannot answer within
 * {@link pendingApprovalAnswerMs} is named in `unanswered` instead of holding up the list. Without a `taskQueue` it
 * lists every task queue's runs: `RelayClient.listPendingApprovals` gives its own unless told otherwise.
 */
export async function listPendingApprovals(
  temporal: Client,
  options: ListPendingApprovalsOptions,
  readSnapshot: ReadSnapshot,
): Promise<PendingApprovals> {
  const { tenantId, limit = 100, taskQueue } = options;
  const tenant = tenantRuns(tenantId);
  // One more than the limit, so the listing tells whether more runs wait; read in pages that fit gRPC's limit.
  const page = await listExecutionPage(temporal, {
    query: runListingQuery(tenant.query, { pendingApprovals: true, taskQueue }),
    limit: limit + 1,
    assumedExecutionBytes: openRunListingBytes,
    ...(tenant.keep ? { keep: tenant.keep } : {}),
  }).catch(asListingError);
  const hasMore = page.executions.length > limit;
  const executions = await executionInfosOf(temporal, page.executions.slice(0, limit));

  // The runs are asked only once the listing is read, all in one pass that hands every answer to `Promise.all` as
  // it is made: a read that fails is reported (the first failure fails the list), never left unhandled.
  const answers = await Promise.all(
    executions.map((execution): Promise<PendingAnswer | undefined> => {
      const kept = readPendingApprovalsMemo(execution.memo?.[pendingApprovalsMemoKey]);
      const runId = execution.workflowId;
      return kept
        ? Promise.resolve({ approvals: approvalsOfMemo(runId, kept) })
        : askPending(temporal, runId, tenantId, readSnapshot);
    }),
  );
  const listing: PendingApprovals = { approvals: [], unanswered: [], hasMore };
  for (const answer of answers) {
    if (answer?.unanswered) listing.unanswered.push(answer.unanswered);
    if (answer?.approvals) listing.approvals.push(...answer.approvals);
  }
  return listing;
}

/** A listing's failure as `temporal.workflow.list()` reports it, as this listing always has. */
function asListingError(error: unknown): never {
  if (!isGrpcServiceError(error)) throw error;
  rethrowKnownErrorTypes(error);
  throw new ServiceError('Failed to list workflows', { cause: error });
}

/**
 * The waiting calls of a listed run whose memo does not keep them (recorded before the rule, or too long to keep),
 * from its snapshot; undefined when it is gone or closed since it was listed; why it did not answer when no worker
 * gave its snapshot in time.
 */
async function askPending(
  temporal: Client,
  runId: string,
  tenantId: string,
  readSnapshot: ReadSnapshot,
): Promise<PendingAnswer | undefined> {
  const deadline = Date.now() + pendingApprovalAnswerMs;
  try {
    const snapshot = await temporal.withDeadline(deadline, () => readSnapshot(runId, tenantId));
    return { approvals: pendingApprovalsOf(snapshot) };
  } catch (error) {
    if (RelayError.hasCode(error, 'run_not_found')) return undefined;
    if (!noWorkerAnsweredIn(error, deadline)) throw error;
    const why = RelayError.isInstance(error)
      ? error.message
      : `no worker answered within ${pendingApprovalAnswerMs} ms`;
    return { unanswered: { runId, error: why } };
  }
}

/** The pending approvals a run keeps in its memo, each with the run it belongs to. */
function approvalsOfMemo(runId: string, memo: PendingApprovalsMemo): RunPendingApproval[] {
  const { approvals, ...run } = memo;
  return approvals.map((approval) => ({ ...approval, runId, ...run }));
}

/** The pending approvals a run's snapshot lists, each with the run it belongs to, as its memo would give them. */
function pendingApprovalsOf({ runId, model, userId, sessionId, pendingApprovals }: RunSnapshot): RunPendingApproval[] {
  return approvalsOfMemo(runId, {
    model,
    ...(userId !== undefined ? { userId } : {}),
    ...(sessionId !== undefined ? { sessionId } : {}),
    approvals: pendingApprovals,
  });
}
