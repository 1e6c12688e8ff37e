import { defineQuery, defineSignal, defineUpdate } from '@temporalio/workflow';
import type { ApprovalDecision, ApprovalOutcome, RunEvent, RunSnapshot } from '../src/shared/run-types.js';
import type { EventPage, EventPageRequest } from './run-state.js';

/** Approve or reject one pending tool call and get an answer: refused, without a trace in history, if invalid. */
export const decideUpdate = defineUpdate<ApprovalOutcome, [ApprovalDecision]>('decide');

/** The same decision, fire and forget (also what the Temporal UI's "Send signal" sends). One the run does not take is recorded as `decision_ignored` (ignored-decisions.ts). */
export const decideSignal = defineSignal<[ApprovalDecision]>('decide');

/** The run's current snapshot: status, step, pending approvals, usage, output. */
export const snapshotQuery = defineQuery<RunSnapshot>('snapshot');

/**
 * The run's events with a sequence number above `after` (0 when absent), at most one page of them (see
 * {@link eventPageQuery}): ask again after the last one's `seq` until none come back.
 */
export const eventsQuery = defineQuery<RunEvent[], [after?: number]>('events');

/** One page of the run's events, bounded in count and bytes, with where to resume. */
export const eventPageQuery = defineQuery<EventPage, [request?: EventPageRequest]>('eventPage');
