import type { Client } from '@temporalio/client';
import { optionalTsToDate } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';
import { isWorkflowNotFound } from '../client/is-workflow-not-found.js';
import { RelayError } from '../shared/errors.js';
import { longestTimerDelayMs } from '../shared/timer-limit.js';
import { errorMessage } from '../shared/error-message.js';
import { toRetentionMs } from './payload-retention.js';
import type { PayloadScope, PayloadStore, UnclosedRun } from './payload-store.js';

/** Options of `startPayloadJanitor`. */
export interface PayloadJanitorOptions {
  /** The store whose runs it marks closed and which it sweeps; the janitor never closes it. */
  store: PayloadStore;
  /**
   * A Temporal client on the namespace the runs live in. The janitor only describes workflows, without decoding
   * anything, so the client needs no encryption keys.
   */
  client: Client;
  /**
   * How long after one pass ends the next begins, in milliseconds; the first begins one interval after the start.
   * @default 600_000 (10 minutes)
   */
  intervalMs?: number;
  /**
   * How long a payload outlives the last run that used it, in milliseconds.
   * @default the store's `retentionMs`
   */
  retentionMs?: number;
  /**
   * How many runs one pass asks Temporal about, one after another. A pass takes the next runs after the last pass's,
   * so runs that stay open for long never keep newer ones from being checked.
   * @default 100
   */
  batchSize?: number;
  /**
   * Where a pass reports what it did, in one line, when it marked, swept or failed anything.
   * @default console
   */
  logger?: Pick<Console, 'info' | 'warn'>;
}

/** What one pass did. */
export interface PayloadJanitorReport {
  /** Runs the store listed as not marked closed, and the janitor asked Temporal about. */
  checked: number;
  /** Runs marked closed: those whose latest execution closed, at its close time, and the `notFound` ones, at now. */
  markedClosed: number;
  /** Runs Temporal no longer knows (its namespace retention deleted them); included in `markedClosed`. */
  notFound: number;
  /** Runs that could not be checked or marked; they are left as they were, for the next pass. */
  failed: number;
  /** Payloads the sweep at the end of the pass deleted. */
  swept: number;
}

/** A running janitor: see `startPayloadJanitor`. */
export interface PayloadJanitor {
  /** Runs a pass now, after the one running (if any) ends; rejects when listing the runs or the sweep fails. */
  runOnce(): Promise<PayloadJanitorReport>;
  /** Stops the passes; resolves once a pass that is running has ended. */
  stop(): Promise<void>;
}

const defaultIntervalMs = 10 * 60 * 1000;
const defaultBatchSize = 100;

const { WorkflowExecutionStatus } = proto.temporal.api.enums.v1;

/**
 * The statuses of a latest execution that closed for good. Anything else (running, paused, a status this SDK does not
 * know) counts as open: a janitor that is unsure keeps payloads.
 */
const closedStatuses = new Set<number>([
  WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED,
  WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED,
  WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED,
  WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED,
  WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TIMED_OUT,
]);

/** Where Temporal says a run is. */
type WorkflowState = { kind: 'open' } | { kind: 'closed'; closedAt: Date } | { kind: 'not_found' };

/**
 * Tells a payload store which runs closed, and sweeps it, every `intervalMs`: nothing else marks runs closed, since an
 * activity at every run's close would cost every run a round trip. Each pass takes a batch of the runs the store lists
 * as not marked closed and describes each run's workflow (its id is the run id; the latest execution, as a run
 * continues as new under the same id). A closed one is marked closed at its close time, one Temporal no longer knows
 * at now; an open one, or one whose description fails, is left for a later pass. Then it sweeps. Passes never
 * overlap, and a janitor never marks a run closed on a failure, so it never costs an open run a payload.
 */
export function startPayloadJanitor(options: PayloadJanitorOptions): PayloadJanitor {
  const { store, client } = options;
  const intervalMs = checkedIntervalMs(options.intervalMs ?? defaultIntervalMs);
  const batchSize = checkedBatchSize(options.batchSize ?? defaultBatchSize);
  const sweepOptions = options.retentionMs === undefined ? {} : { retentionMs: toRetentionMs(options.retentionMs) };
  const logger = options.logger ?? console;
  let after: UnclosedRun | undefined;
  let previousPass: Promise<unknown> = Promise.resolve();
  let stopped = false;
  let timer: NodeJS.Timeout | undefined;

  const runPass = async (): Promise<PayloadJanitorReport> => {
    const runs = await store.listUnclosedRuns({ limit: batchSize, ...(after ? { after } : {}) });
    // A short batch ends the round: the next pass starts again from the oldest run.
    after = runs.length < batchSize ? undefined : runs.at(-1);
    const { failures, ...checked } = await markClosedRuns(store, client, runs);
    const report = { ...checked, swept: await store.sweep(sweepOptions) };
    logReport(logger, report, failures);
    return report;
  };

  const runOnce = (): Promise<PayloadJanitorReport> => {
    if (stopped) {
      return Promise.reject(new RelayError('invalid_input', 'The payload janitor has stopped; start another one'));
    }
    const pass = previousPass.then(runPass);
    previousPass = pass.catch(() => undefined);
    return pass;
  };

  const scheduleNextPass = () => {
    timer = setTimeout(() => {
      void runOnce()
        .catch((error: unknown) => logger.warn(`Relay-E payload janitor: the pass failed: ${errorMessage(error)}`))
        .finally(() => {
          if (!stopped) scheduleNextPass();
        });
    }, intervalMs);
    // The janitor serves a worker: it never keeps a process alive that has nothing else to do.
    timer.unref();
  };
  scheduleNextPass();

  return {
    runOnce,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await previousPass;
    },
  };
}

/** Marks closed the runs Temporal reports closed or no longer knows, one after another. */
async function markClosedRuns(
  store: PayloadStore,
  client: Client,
  runs: readonly UnclosedRun[],
): Promise<Omit<PayloadJanitorReport, 'swept'> & { failures: string[] }> {
  const counts = { checked: runs.length, markedClosed: 0, notFound: 0, failed: 0 };
  const failures: string[] = [];
  for (const run of runs) {
    const scope: PayloadScope = { tenantId: run.tenantId, runId: run.runId };
    try {
      const state = await readWorkflowState(client, run.runId);
      if (state.kind === 'open') continue;
      await store.markRunClosed(scope, state.kind === 'closed' ? state.closedAt : new Date());
      counts.markedClosed++;
      if (state.kind === 'not_found') counts.notFound++;
    } catch (error) {
      counts.failed++;
      failures.push(`run '${run.runId}': ${errorMessage(error)}`);
    }
  }
  return { ...counts, failures };
}

/**
 * Where the run's workflow is, from its latest execution's raw description: the raw one decodes nothing, so runs
 * whose memo is encrypted are read without keys.
 */
async function readWorkflowState(client: Client, runId: string): Promise<WorkflowState> {
  try {
    const { workflowExecutionInfo: info } = await client.workflowService.describeWorkflowExecution({
      namespace: client.options.namespace,
      execution: { workflowId: runId },
    });
    if (!closedStatuses.has(info?.status ?? WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_UNSPECIFIED)) {
      return { kind: 'open' };
    }
    // A closed execution has a close time; without one, now is the later and so the safer close.
    return { kind: 'closed', closedAt: optionalTsToDate(info?.closeTime) ?? new Date() };
  } catch (error) {
    if (isWorkflowNotFound(error)) return { kind: 'not_found' };
    throw error;
  }
}

/** One line for a pass that marked, swept or failed anything; nothing for a pass that found nothing to do. */
function logReport(logger: Pick<Console, 'info' | 'warn'>, report: PayloadJanitorReport, failures: string[]): void {
  if (report.markedClosed === 0 && report.swept === 0 && failures.length === 0) return;
  const done =
    `Relay-E payload janitor: checked ${report.checked} unclosed runs, marked ${report.markedClosed} closed ` +
    `(${report.notFound} no longer in Temporal), swept ${report.swept} payloads`;
  if (failures.length === 0) {
    logger.info(done);
    return;
  }
  logger.warn(`${done}; ${failures.length} runs wait for the next pass, first ${failures[0]}`);
}

function checkedIntervalMs(intervalMs: number): number {
  // A longer interval would fire at once, so the janitor would pass without a pause.
  if (!Number.isFinite(intervalMs) || intervalMs <= 0 || intervalMs > longestTimerDelayMs) {
    throw new RelayError(
      'invalid_input',
      `The payload janitor's intervalMs must be positive and at most ${longestTimerDelayMs} (about 24.8 days), not ${intervalMs}`,
    );
  }
  return intervalMs;
}

function checkedBatchSize(batchSize: number): number {
  if (!Number.isSafeInteger(batchSize) || batchSize <= 0) {
    throw new RelayError(
      'invalid_input',
      `The payload janitor's batchSize must be a positive integer, not ${batchSize}`,
    );
  }
  return batchSize;
}
