import type { Client } from '@temporalio/client';
import type { HandedOffNoticeOutcome } from '../shared/approval-notice.js';
import type { RunEvent } from '../shared/run-types.js';

/** The workflow a run handed its last approval notices to, and how far it got. */
export interface HandedOffNotices {
  /** That workflow's id (`approval-notices/<the run's execution id>`), as `tool_approval_notice_handed_off` names it. */
  deliveredBy: string;
  /** The ids of the notices the run handed to it (`<runId>/<toolCallId>/<kind>`). */
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
export async function readHandedOffNotices(
  temporal: Client,
  runId: string,
  events: readonly RunEvent[],
): Promise<HandedOffNotices[]> {
  const handedTo = new Map<string, string[]>();
  for (const event of events) {
    if (event.type !== 'tool_approval_notice_handed_off') continue;
    const notice = `${runId}/${event.toolCallId}/${event.notice.replace(/^approval\./, '')}`;
    handedTo.set(event.deliveredBy, [...(handedTo.get(event.deliveredBy) ?? []), notice]);
  }
  return Promise.all(
    [...handedTo].map(async ([deliveredBy, notices]) => {
      const handle = temporal.workflow.getHandle(deliveredBy);
      const status = (await handle.describe()).status.name;
      const outcomes = status === 'COMPLETED' ? { outcomes: (await handle.result()) as HandedOffNoticeOutcome[] } : {};
      return { deliveredBy, notices, status, ...outcomes };
    }),
  );
}
