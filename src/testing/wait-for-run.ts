import { setTimeout as sleep } from 'node:timers/promises';
import type { ApproveOptions, DecisionOptions, RelayClient } from '../client/relay-client.js';
import { RelayError } from '../shared/errors.js';
import { isTerminalStatus } from '../shared/run-types.js';
import type { ApprovalOutcome, PendingApproval, RunSnapshot } from '../shared/run-types.js';
import { errorMessage } from '../shared/error-message.js';
import { TestEnvironmentError } from './find-test-server-executable.js';

/** Options of {@link waitForRun} and {@link waitForApproval}. */
export interface WaitOptions {
  /**
   * How long to wait, in real time, before failing with the last snapshot.
   * @default 20_000
   */
  timeoutMs?: number;
  /**
   * How often to read the run's snapshot.
   * @default 50
   */
  pollIntervalMs?: number;
}

/**
 * Waits until `predicate` holds for the run's snapshot and returns that snapshot; fails after `timeoutMs` with the
 * last snapshot it saw, or at once with what `predicate` throws or when there is no such run (`run_not_found`).
 */
export function waitForRun(
  client: RelayClient,
  runId: string,
  predicate: (snapshot: RunSnapshot) => boolean,
  options: WaitOptions = {},
): Promise<RunSnapshot> {
  return pollRun(client, runId, predicate, options, () => '');
}

/** {@link waitForRun}, with `explain` adding what the last snapshot says of the wait to the timeout's message. */
async function pollRun(
  client: RelayClient,
  runId: string,
  predicate: (snapshot: RunSnapshot) => boolean,
  options: WaitOptions,
  explain: (snapshot: RunSnapshot) => string,
): Promise<RunSnapshot> {
  const { timeoutMs = 20_000, pollIntervalMs = 50 } = options;
  const deadline = Date.now() + timeoutMs;
  let snapshot: RunSnapshot | undefined;
  let lastError: unknown;
  while (Date.now() < deadline) {
    // Right after the start the run may not answer queries yet; a run that does not exist never will.
    const read = await client.getRun(runId).catch((error: unknown) => {
      if (RelayError.hasCode(error, 'run_not_found')) throw error;
      lastError = error;
      return undefined;
    });
    if (read !== undefined) {
      snapshot = read;
      lastError = undefined;
      if (predicate(read)) return read;
    }
    await sleep(pollIntervalMs);
  }
  const last = snapshot === undefined ? 'no snapshot' : `${JSON.stringify(snapshot)}${explain(snapshot)}`;
  const failed = lastError === undefined ? '' : `; the last read failed: ${errorMessage(lastError)}`;
  throw new TestEnvironmentError(
    `Run ${runId} did not reach the state waited for in ${timeoutMs} ms; last: ${last}${failed}`,
    { cause: lastError },
  );
}

/** A tool call waiting for a human, with the decisions a test can take on it. */
export interface AwaitedApproval extends PendingApproval {
  readonly runId: string;
  /** Approves the call as proposed. */
  approve(options?: Omit<ApproveOptions, 'input'>): Promise<ApprovalOutcome>;
  /** Approves the call with edited input, which the run checks against the tool's schema first. */
  edit(input: unknown, options?: DecisionOptions): Promise<ApprovalOutcome>;
  /** Rejects the call; the model is told it did not run. */
  reject(options?: DecisionOptions): Promise<ApprovalOutcome>;
}

/**
 * Waits until the run awaits approval of a tool call (the given one, by the run's own id `call_<step>_<index>`, or its
 * first pending one) and returns that call, ready to approve, edit or reject; fails at once if the run ends first.
 */
export async function waitForApproval(
  client: RelayClient,
  runId: string,
  options: WaitOptions & { toolCallId?: string } = {},
): Promise<AwaitedApproval> {
  const { toolCallId, ...waitOptions } = options;
  const matches = (approval: PendingApproval) => toolCallId === undefined || approval.toolCallId === toolCallId;
  const isAwaited = (run: RunSnapshot) => {
    if (run.pendingApprovals.some(matches)) return true;
    if (isTerminalStatus(run.status)) {
      throw new TestEnvironmentError(
        `Run ${runId} ended (${run.status}) without awaiting approval: ${JSON.stringify(run)}`,
      );
    }
    return false;
  };
  const explain = (run: RunSnapshot) => (toolCallId === undefined ? '' : otherCallsAwaited(run, toolCallId));
  const snapshot = await pollRun(client, runId, isAwaited, waitOptions, explain);
  const pending = snapshot.pendingApprovals.find(matches) as PendingApproval;
  return {
    ...pending,
    runId,
    approve: (decision = {}) => client.approve(runId, pending.toolCallId, decision),
    edit: (input, decision = {}) => client.approve(runId, pending.toolCallId, { ...decision, input }),
    reject: (decision = {}) => client.reject(runId, pending.toolCallId, decision),
  };
}

/** Why a run that awaits approval of other calls may never match `toolCallId`: it may be the model's id for one. */
function otherCallsAwaited(run: RunSnapshot, toolCallId: string): string {
  const pending = run.pendingApprovals.map((approval) => approval.toolCallId);
  if (pending.length === 0) return '';
  return (
    `; it awaits approval of ${pending.join(', ')}, not ${toolCallId}: runs give calls their own ids ` +
    '(call_<step>_<index>), not the ids the model sent'
  );
}
