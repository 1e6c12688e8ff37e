import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { DefaultLogger } from '@temporalio/worker';
import type { RelayClient } from '../../src/client/relay-client.js';
import { RelayError } from '../../src/shared/errors.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { bundleRelayWorkflows } from '../../src/worker/index.js';
import { startChildModule } from './reliability-kit.js';
import type { ChildModule } from './reliability-kit.js';

/** A scratch directory for one suite's ledger, bundle and server files. */
export function scratchDirectory(label: string): string {
  return mkdtempSync(path.join(tmpdir(), `relay-${label}-`));
}

/** Bundles the workflows once and writes the code to a file, so each worker process starts in a second, not five. */
export async function writeWorkflowBundle(directory: string): Promise<string> {
  const { code } = await bundleRelayWorkflows({ logger: new DefaultLogger('WARN') });
  const file = path.join(directory, 'workflow-bundle.js');
  writeFileSync(file, code);
  return file;
}

/** What a ledger worker process needs to know. */
export interface LedgerWorkerSettings {
  address: string;
  taskQueue: string;
  ledgerFile: string;
  bundleFile: string;
  /** Delay of every model call, in ms. @default 0 */
  modelDelayMs?: number;
  /** Delay of the balance read, in ms. @default 0 */
  toolDelayMs?: number;
}

/** Starts a ledger worker (ledger-worker.ts) in its own process. */
export function startLedgerWorker(
  settings: LedgerWorkerSettings,
  onLine?: (line: string) => void,
): Promise<ChildModule> {
  const env = {
    TEMPORAL_ADDRESS: settings.address,
    TASK_QUEUE: settings.taskQueue,
    LEDGER_FILE: settings.ledgerFile,
    WORKFLOW_BUNDLE: settings.bundleFile,
    MODEL_DELAY_MS: String(settings.modelDelayMs ?? 0),
    TOOL_DELAY_MS: String(settings.toolDelayMs ?? 0),
  };
  return startChildModule(path.join(import.meta.dirname, 'ledger-worker.ts'), env, onLine);
}

/** How {@link decideOnce} retries a decision whose call failed. */
export interface DecisionRetry {
  /** @default 20 */
  attempts?: number;
  /** Called with the error of every call that is retried. */
  onRetry?: (error: unknown) => void;
}

/**
 * Sends a decision until the run has it: a worker killed while it handled the update leaves the caller without
 * an answer, so a refusal as `approval_not_pending` is checked against the run's events before it counts. A call
 * can also be refused before it is pending: a worker that applied the model's answer proposing it (and answered a
 * query with it) can die before its task is recorded; the next worker then gets that answer and the update in one
 * task, and Temporal delivers the update first. RelayClient sends such a decision once more itself when the run shows
 * the call waiting right after; with workers being killed the run may not answer then, so the events are read
 * patiently here, and once they show the call waiting the decision is sent again.
 */
export async function decideOnce(
  client: RelayClient,
  runId: string,
  toolCallId: string,
  decision: 'approve' | 'reject',
  approver: string,
  retry: DecisionRetry = {},
): Promise<'applied' | 'already_applied'> {
  for (let attempt = 1; ; attempt++) {
    try {
      if (decision === 'approve') await client.approve(runId, toolCallId, { approver });
      else await client.reject(runId, toolCallId, { approver });
      return 'applied';
    } catch (error) {
      if (RelayError.hasCode(error, 'approval_not_pending')) {
        const events = await readEventsPatiently(client, runId);
        if (events.some((event) => isDecisionOn(event, toolCallId))) return 'already_applied';
        if (!isAwaitingApproval(events, toolCallId) || attempt >= (retry.attempts ?? 20)) throw error;
        retry.onRetry?.(error);
        continue;
      }
      if (attempt >= (retry.attempts ?? 20)) throw error;
      retry.onRetry?.(error);
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }
}

/**
 * How long a suite waits for a run to answer queries again. While workers are killed faster than Temporal's
 * 10 s workflow task timeout, a run can refuse queries for minutes; once the faults stop it answers in seconds.
 */
const queryPatienceMs = 5 * 60_000;

/** Reads a run's events, waiting out the time a run whose workflow task sat on a killed worker cannot answer. */
async function readEventsPatiently(client: RelayClient, runId: string): Promise<RunEvent[]> {
  const deadline = Date.now() + queryPatienceMs;
  for (;;) {
    try {
      return await client.events(runId);
    } catch (error) {
      if (Date.now() >= deadline) throw error;
      await new Promise((resolve) => setTimeout(resolve, 1_000));
    }
  }
}

/** True for the event that records a human decision on `toolCallId`. */
/** Whether the call waits for a human in these events: its last event says so (these runs notify nobody). */
function isAwaitingApproval(events: readonly RunEvent[], toolCallId: string): boolean {
  const ofCall = events.filter((event) => 'toolCallId' in event && event.toolCallId === toolCallId);
  return ofCall.at(-1)?.type === 'tool_awaiting_approval';
}

export function isDecisionOn(event: RunEvent, toolCallId: string): boolean {
  return (event.type === 'tool_approved' || event.type === 'tool_rejected') && event.toolCallId === toolCallId;
}
