import type { Client } from '@temporalio/client';
import type { RunEvent } from '../../src/shared/run-types.js';
import { eventPageQuery } from '../../workflows/messages.js';

/**
 * A run's whole event log as the workflow itself holds it, asked of a worker page by page; on a closed run the worker
 * answers by replaying it.
 */
export async function queriedEvents(temporal: Client, runId: string): Promise<RunEvent[]> {
  const handle = temporal.workflow.getHandle(runId);
  const events: RunEvent[] = [];
  for (let after = 0; ;) {
    const page = await handle.query(eventPageQuery, { after });
    events.push(...page.events);
    after = page.nextAfter;
    if (!page.hasMore) return events;
  }
}
