import { setTimeout as sleep } from 'node:timers/promises';
import type { WorkflowExecutionDescription } from '@temporalio/client';
import { eventPageQuery, snapshotQuery } from '../../workflows/messages.js';
import { closedRunMemoKey, readClosedRunMemo, recordedEventsAfter, withOutput } from '../shared/closed-run-record.js';
import type { ClosedRunRecord } from '../shared/closed-run-record.js';
import type { RunEvent, RunSnapshot } from '../shared/run-types.js';
import { askWhileWorkersPoll, noWorkerPolling } from './ask-while-workers-poll.js';
import { noWorkerAnsweredIn } from './no-worker-answered.js';
import { readHandedOffNotices } from './read-handed-off-notices.js';
import { runVersioningOf } from './read-run-versioning.js';
import type { EventsOptions, RunInspection, TenantScope } from './relay-client.js';
import { callRun, describeInScope, runHandle, runNotFound } from './run-access.js';
import type { RunAccess } from './run-access.js';
import { closedBeforeItRan, snapshotFromDescription } from './snapshot-from-description.js';

/**
 * How long reading a closed run's whole event log waits for a worker, when its record had to leave events out: a
 * query to a closed run is answered by a worker replaying its history, and with none running the server would
 * hold the query for about half a minute.
 */
export const closedRunQueryTimeoutMs = 5_000;

/** The run's snapshot for `RelayClient.getRun`, a closed run's from the record it left in its memo. */
export async function readRun(access: RunAccess, runId: string, scope: TenantScope): Promise<RunSnapshot> {
  const description = await describeInScope(access, runId, scope);
  return snapshotOf(access, runId, description, await readClosedRunRecord(access, runId, description), scope);
}

/** What `RelayClient.inspect` reads of a run, from one description of it and, once closed, one read of its record. */
export async function inspectRun(access: RunAccess, runId: string, scope: TenantScope): Promise<RunInspection> {
  const description = await describeInScope(access, runId, scope);
  const closed = await readClosedRunRecord(access, runId, description);
  const snapshot = await snapshotOf(access, runId, description, closed, scope);
  const events = await eventsOf(servedBy(access, description), runId, closed, scope);
  return { snapshot, events, handedOffNotices: await readHandedOffNotices(access.temporal, events) };
}

/** The run's events for `RelayClient.events`, a closed run's from its record. */
export async function readRunEvents(access: RunAccess, runId: string, options: EventsOptions): Promise<RunEvent[]> {
  return (await describedEvents(access, runId, options)).events;
}

/**
 * The run described (its tenant checked), then its events as {@link readRunEvents} reads them: a description that
 * says the run has closed says those events were its last.
 */
export async function describedEvents(
  access: RunAccess,
  runId: string,
  options: EventsOptions,
): Promise<{ description: WorkflowExecutionDescription; events: RunEvent[] }> {
  const description = await describeInScope(access, runId, options);
  const closed = await readClosedRunRecord(access, runId, description);
  return { description, events: await eventsOf(servedBy(access, description), runId, closed, options) };
}

/** {@link readRun} of a run already described (and its tenant checked), from its record when it left one. */
async function snapshotOf(
  access: RunAccess,
  runId: string,
  description: WorkflowExecutionDescription,
  closed: ClosedRunRecord | undefined,
  scope: TenantScope,
): Promise<RunSnapshot> {
  const versioning = runVersioningOf(description);
  const snapshot = closed?.snapshot ?? (await unrecordedSnapshot(access, runId, description, scope));
  if (scope.tenantId !== undefined && snapshot.tenantId !== scope.tenantId) throw runNotFound(runId);
  return versioning ? { ...snapshot, versioning } : snapshot;
}

/**
 * The snapshot of a run without a record, from a worker's answer. A closed one is asked for a bounded time (see
 * {@link askClosedRun}); if no worker answers, or it closed before any ran it, its description tells it instead.
 */
async function unrecordedSnapshot(
  access: RunAccess,
  runId: string,
  description: WorkflowExecutionDescription,
  scope: TenantScope,
): Promise<RunSnapshot> {
  const served = servedBy(access, description);
  const query = () => callRun(served, runId, () => runHandle(served, runId).query(snapshotQuery), scope);
  const ask = () => askWhileServed(served, runId, query);
  if (description.status.name === 'RUNNING')
    return askRunningRun(access, runId, scope, ask, async (record) => record.snapshot);
  const answer = await askClosedRun(access, ask);
  return answer ? endedByTemporal(answer, description) : snapshotFromDescription(access.temporal, description);
}

/**
 * The access a run's questions go through: their `run_unavailable` names the run's task queue, whose workers answer
 * for it, rather than the one the client starts runs on.
 */
function servedBy(access: RunAccess, description: WorkflowExecutionDescription): RunAccess {
  return { temporal: access.temporal, taskQueue: description.taskQueue };
}

/**
 * Asks the run while a worker polls its task queue (`served`'s, see {@link servedBy}), failing with `run_unavailable`
 * once none does.
 */
function askWhileServed<T>(served: RunAccess, runId: string, ask: () => Promise<T>): Promise<T> {
  const workers = { taskQueue: served.taskQueue, runId, probe: true };
  return askWhileWorkersPoll(served, workers, ask, () => noWorkerPolling(runId, served.taskQueue));
}

/** How often a read of a running run that has no answer yet looks whether the run closed meanwhile. */
const closedMeanwhileCheckMs = 2_000;

/**
 * Asks a run described as running; when no worker answered because it closed meanwhile, its record answers. A worker
 * that evicts a run as it ends drops the queries still waiting for it, which the server times out as unanswered only
 * after about half a minute: so while no answer has come, the run is described again every
 * {@link closedMeanwhileCheckMs}, and once it closed with a record, the record answers. When the query fails, the run
 * is described again, and only one still running (or closed without a record) fails.
 */
async function askRunningRun<T>(
  access: RunAccess,
  runId: string,
  scope: TenantScope,
  ask: () => Promise<T>,
  fromRecord: (record: ClosedRunRecord) => Promise<T>,
): Promise<T> {
  const answered = new AbortController();
  const asked = ask();
  try {
    const record = recordOnceClosed(access, runId, scope, answered.signal);
    const first = await Promise.race([asked.then((answer) => ({ answer })), record.then((closed) => ({ closed }))]);
    if ('answer' in first) return first.answer;
    if (first.closed === undefined) return await asked;
    // The query may still end, answered or not: the record has answered.
    asked.catch(() => undefined);
    return await fromRecord(first.closed);
  } catch (error) {
    if (!noWorkerAnsweredIn(error, 0)) throw error;
    // The first failure is the one to report when the run cannot be described again either.
    const description = await describeInScope(access, runId, scope).catch(() => undefined);
    const record = description && (await readClosedRunRecord(access, runId, description));
    if (record === undefined) throw error;
    return fromRecord(record);
  } finally {
    answered.abort();
  }
}

/**
 * The record of a run described as running, once a later description finds it closed (checked every
 * {@link closedMeanwhileCheckMs} until `stop`); undefined when it closed without one (or it cannot be read), or once
 * stopped.
 */
async function recordOnceClosed(
  access: RunAccess,
  runId: string,
  scope: TenantScope,
  stop: AbortSignal,
): Promise<ClosedRunRecord | undefined> {
  for (;;) {
    await sleep(closedMeanwhileCheckMs, undefined, { signal: stop }).catch(() => undefined);
    if (stop.aborted) return undefined;
    const description = await describeInScope(access, runId, scope).catch(() => undefined);
    if (description && description.status.name !== 'RUNNING') {
      return readClosedRunRecord(access, runId, description).catch(() => undefined);
    }
  }
}

/**
 * Asks a closed run through a worker's replay, for at most {@link closedRunQueryTimeoutMs}: undefined when no worker
 * answered in that time, or when the run closed before any workflow task, so no worker ever will.
 */
async function askClosedRun<T>(access: RunAccess, ask: () => Promise<T>): Promise<T | undefined> {
  const deadline = Date.now() + closedRunQueryTimeoutMs;
  return access.temporal
    .withDeadline(deadline, ask)
    .catch((error: unknown) => (closedBeforeItRan(error) ? undefined : noWorkerAnswered(error, deadline)));
}

/**
 * Resolves to nothing when no worker answered a query before `deadline` (the run's record answers instead); any
 * other failure is thrown.
 */
function noWorkerAnswered(error: unknown, deadline: number): undefined {
  if (noWorkerAnsweredIn(error, deadline)) return undefined;
  throw error;
}

/**
 * The snapshot of a run Temporal ended without its code running to the end (terminated, or past its execution
 * timeout): such a run leaves no record, and a replay answers with its last live state, waiting calls and all. It
 * failed, as `listRuns` says, and nothing waits any more.
 */
function endedByTemporal(snapshot: RunSnapshot, description: WorkflowExecutionDescription): RunSnapshot {
  const status = description.status.name;
  if (status !== 'TERMINATED' && status !== 'TIMED_OUT') return snapshot;
  return {
    ...snapshot,
    status: 'failed',
    stopReason: 'error',
    pendingApprovals: [],
    error: `Temporal ${status === 'TERMINATED' ? 'terminated' : 'timed out'} the run; its event log ends where it stopped`,
    ...(description.closeTime ? { updatedAt: description.closeTime.toISOString() } : {}),
  };
}

/**
 * {@link readRunEvents} of a run already described (and its tenant checked), from its record when it left one;
 * `served` is what {@link servedBy} gave for it.
 */
async function eventsOf(
  served: RunAccess,
  runId: string,
  closed: ClosedRunRecord | undefined,
  options: EventsOptions,
): Promise<RunEvent[]> {
  const limit = options.limit ?? Infinity;
  const after = options.after ?? 0;
  const ask = () => askWhileServed(served, runId, () => readEventPages(served, runId, after, limit, options));
  if (!closed) {
    const fromRecord = (record: ClosedRunRecord) => eventsOf(served, runId, record, options);
    return askRunningRun(served, runId, options, ask, fromRecord).catch(noEventsIfClosedBeforeItRan);
  }
  const recorded = recordedEventsAfter(closed, after);
  if (recorded[0]?.type !== 'events_dropped') return recorded.slice(0, limit);
  const whole = await askClosedRun(served, ask);
  return (whole ?? recorded).slice(0, limit);
}

/** Reads the events query page by page, from `after` on, until the log or `limit` is reached. */
async function readEventPages(
  access: RunAccess,
  runId: string,
  after: number,
  limit: number,
  scope: TenantScope,
): Promise<RunEvent[]> {
  const events: RunEvent[] = [];
  for (let next = after; ;) {
    const request = { after: next, ...(Number.isFinite(limit) ? { limit: limit - events.length } : {}) };
    const page = await callRun(access, runId, () => runHandle(access, runId).query(eventPageQuery, request), scope);
    events.push(...page.events);
    next = page.nextAfter;
    if (!page.hasMore || events.length >= limit) return events;
  }
}

/** The events of a run that closed before any workflow task ran: it recorded none. */
function noEventsIfClosedBeforeItRan(error: unknown): RunEvent[] {
  if (closedBeforeItRan(error)) return [];
  throw error;
}

/**
 * The record a closed run left in its memo (decoded with this client's data converter, inflated when deflated), from
 * its description; undefined while the run is open, or for a run that closed before runs left records.
 */
async function readClosedRunRecord(
  access: RunAccess,
  runId: string,
  description: WorkflowExecutionDescription,
): Promise<ClosedRunRecord | undefined> {
  if (description.status.name === 'RUNNING') return undefined;
  const record = readClosedRunMemo(description.memo?.[closedRunMemoKey], runId);
  if (!record) return undefined;
  if (!record.outputInResult) return record;
  // A long output was left to the run's result (the close event in its history), so the memo stays small.
  const result = await callRun(access, runId, () => runHandle(access, runId).result());
  return withOutput(record, result.output ?? '');
}
