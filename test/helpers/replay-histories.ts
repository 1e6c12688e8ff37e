import path from 'node:path';
import type { WorkflowHandle } from '@temporalio/client';
import { recordHistory } from '../../src/testing/replay-histories.js';

/** True when RELAY_E_RECORD_HISTORIES=1: tests then rewrite their history fixtures instead of only checking them. */
export function isRecordingHistories(): boolean {
  return process.env['RELAY_E_RECORD_HISTORIES'] === '1';
}

/** Records the workflow's history into `file` only when {@link isRecordingHistories}; returns whether it did. */
export async function recordHistoryIfRequested(
  handle: Pick<WorkflowHandle, 'client' | 'workflowId' | 'describe'>,
  file: string,
): Promise<boolean> {
  if (!isRecordingHistories()) return false;
  await recordHistory(handle, file);
  return true;
}

/** The recorded agent-run histories, a folder per patch side (test/replay/agent-run-replay.test.ts lists them). */
export const agentRunHistories = path.join(import.meta.dirname, '../fixtures/histories/agent-run');

/** The recorded histories of `relayWorkerCatalog`, the workflow that keeps what a task queue's workers serve. */
export const workerCatalogHistories = path.join(import.meta.dirname, '../fixtures/histories/worker-catalog');

/** The recorded histories of `deliverApprovalNotices`, the workflow a run hands its last notices to. */
export const approvalNoticeHistories = path.join(import.meta.dirname, '../fixtures/histories/approval-notices');

/**
 * The file a test records a path's history into today: the folder of the newest patch a new run asks
 * (workflows/run-patches.ts). A new patch gets a new folder here, and the replay test lists it.
 */
export function currentHistoryFile(name: string): string {
  return path.join(agentRunHistories, 'continue-as-new-suggestion-recorded', `${name}.json`);
}
