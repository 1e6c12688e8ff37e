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
