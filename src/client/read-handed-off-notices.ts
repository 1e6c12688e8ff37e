import type { Client } from '@temporalio/client';
import type { ApprovalNotice, HandedOffNoticeOutcome } from '../shared/approval-notice.js';
import type { RunEvent } from '../shared/run-types.js';
import { readStartInput } from './read-history.js';

/** The workflow a run handed its last approval notices to, and how far it got. */
export interface HandedOffNotices {
  /** That workflow's id (`approval-notices/<the run's execution id>`), as `tool_approval_notice_handed_off` names it. */
  deliveredBy: string;
  /** The ids of the notices the run handed to it, as it delivers them (`<runId>/<toolCallId>/<kind>`). */
  notices: string[];
  /** Its Temporal status: `RUNNING` while it still delivers, `COMPLETED` once every notice has ended. */
  status: string;
  /** How each notice ended, once it has completed. */
  outcomes?: HandedOffNoticeOutcome[];
}

/**
 * What became of the notices a run handed off (its `tool_approval_notice_handed_off` events): the run's log closed
 * before they ended, so the workflow delivering them holds the answer. None for a run that handed off nothing.
 */
export async function readHandedOffNotices(temporal: Client, events: readonly RunEvent[]): Promise<HandedOffNotices[]> {
  const handedTo = new Set<string>();
  for (const event of events) {
    if (event.type === 'tool_approval_notice_handed_off') handedTo.add(event.deliveredBy);
  }
  return Promise.all(
    [...handedTo].map(async (deliveredBy) => {
      const handle = temporal.workflow.getHandle(deliveredBy);
      const status = (await handle.describe()).status.name;
      const notices = await readHandedOffIds(temporal, deliveredBy);
      const outcomes = status === 'COMPLETED' ? { outcomes: (await handle.result()) as HandedOffNoticeOutcome[] } : {};
      return { deliveredBy, notices, status, ...outcomes };
    }),
  );
}

/**
 * The ids of the notices `deliveredBy` was started with, from its first history event: the run's events name each
 * notice's type only, and an `approval.added` notice's id carries its number (`added-<n>`).
 */
async function readHandedOffIds(temporal: Client, deliveredBy: string): Promise<string[]> {
  const notices = await readStartInput<ApprovalNotice[]>(temporal, deliveredBy);
  return notices.map((notice) => notice.id);
}
