import type { Client } from '@temporalio/client';
import { tsToMs } from '@temporalio/common/lib/time.js';
import proto from '@temporalio/proto';

const { temporal } = proto;
const { EventType } = temporal.api.enums.v1;

/** Activity types that are a model call, in Relay-E, the peer and the bare floor. */
const modelActivityTypes = new Set(['callModel', 'invokeModel', 'modelTurn']);
/** Activity types that are a tool call. */
const toolActivityTypes = new Set(['executeTool', 'addNumbers']);

/** What one run's history says about its cost, read back from the server. */
export interface HistoryFacts {
  events: number;
  /** The history's size as the server stores and ships it (the encoded protobuf). */
  bytes: number;
  eventTypes: Record<string, number>;
  /** Payload bytes of each model call's input, in step order. */
  modelInputBytes: number[];
  /** Model call scheduled to the next model call scheduled: one agent step as the server saw it. */
  stepMs: number[];
  /** Workflow task started to completed, each task. */
  workflowTaskMs: number[];
  /** When each tool activity started, server time in ms since the epoch. */
  toolStartedAtMs: number[];
  /** The largest single event, encoded: a bound on the largest payload the execution recorded. */
  largestEventBytes: number;
  /** The execution this one continued as, when it continued as new. */
  continuedAsRunId?: string;
  /**
   * Encoded bytes by event type, activity events by activity type too (`ACTIVITY_TASK_SCHEDULED:callModel`), with
   * the payloads inside them apart (`callModel.input`, `callModel.result`, `callModel.summary`): where a run's bytes
   * are.
   */
  bytesByPart: Record<string, number>;
}

/** Fetches a workflow's history (its newest execution, or `runId`'s) and measures it. */
export async function readHistoryFacts(client: Client, workflowId: string, runId?: string): Promise<HistoryFacts> {
  const history = await client.workflow.getHandle(workflowId, runId).fetchHistory();
  const events = history.events ?? [];
  const eventTypes: Record<string, number> = {};
  const scheduledTypes = new Map<string, string>();
  const modelScheduledAt: number[] = [];
  const modelInputBytes: number[] = [];
  const workflowTaskMs: number[] = [];
  const toolStartedAtMs: number[] = [];
  let workflowTaskStartedAt: number | undefined;
  let largestEventBytes = 0;
  let continuedAsRunId: string | undefined;
  const bytesByPart: Record<string, number> = {};
  const count = (part: string, bytes: number) => {
    if (bytes > 0) bytesByPart[part] = (bytesByPart[part] ?? 0) + bytes;
  };
  for (const event of events) {
    const eventBytes = temporal.api.history.v1.HistoryEvent.encode(event).finish().length;
    largestEventBytes = Math.max(largestEventBytes, eventBytes);
    countParts(event, scheduledTypes, eventBytes, count);
    continuedAsRunId ??= event.workflowExecutionContinuedAsNewEventAttributes?.newExecutionRunId ?? undefined;
    const type = (EventType[event.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '');
    eventTypes[type] = (eventTypes[type] ?? 0) + 1;
    const time = tsToMs(event.eventTime);
    const scheduled = event.activityTaskScheduledEventAttributes;
    if (scheduled) {
      const activityType = scheduled.activityType?.name ?? '';
      scheduledTypes.set(String(event.eventId), activityType);
      if (modelActivityTypes.has(activityType)) {
        modelScheduledAt.push(time);
        modelInputBytes.push(
          (scheduled.input?.payloads ?? []).reduce((sum, payload) => sum + (payload.data?.length ?? 0), 0),
        );
      }
    }
    const started = event.activityTaskStartedEventAttributes;
    if (started && toolActivityTypes.has(scheduledTypes.get(String(started.scheduledEventId)) ?? '')) {
      toolStartedAtMs.push(time);
    }
    if (event.workflowTaskStartedEventAttributes) workflowTaskStartedAt = time;
    if (event.workflowTaskCompletedEventAttributes && workflowTaskStartedAt !== undefined) {
      workflowTaskMs.push(time - workflowTaskStartedAt);
      workflowTaskStartedAt = undefined;
    }
  }
  return {
    events: events.length,
    bytes: temporal.api.history.v1.History.encode(history).finish().length,
    eventTypes,
    modelInputBytes,
    stepMs: modelScheduledAt.slice(1).map((time, index) => time - (modelScheduledAt[index] ?? time)),
    workflowTaskMs,
    toolStartedAtMs,
    largestEventBytes,
    ...(continuedAsRunId ? { continuedAsRunId } : {}),
    bytesByPart,
  };
}

type HistoryEvent = proto.temporal.api.history.v1.IHistoryEvent;

/** Counts an event's bytes under its type (and activity type), and its input, result and summary apart. */
function countParts(
  event: HistoryEvent,
  scheduledTypes: ReadonlyMap<string, string>,
  eventBytes: number,
  count: (part: string, bytes: number) => void,
): void {
  const type = (EventType[event.eventType ?? 0] ?? 'UNKNOWN').replace(/^EVENT_TYPE_/, '');
  const scheduled = event.activityTaskScheduledEventAttributes;
  const scheduledId =
    event.activityTaskStartedEventAttributes?.scheduledEventId ??
    event.activityTaskCompletedEventAttributes?.scheduledEventId;
  const activityType = scheduled
    ? (scheduled.activityType?.name ?? '')
    : scheduledId !== undefined && scheduledId !== null
      ? scheduledTypes.get(String(scheduledId))
      : undefined;
  count(activityType !== undefined ? `${type}:${activityType}` : type, eventBytes);
  if (activityType === undefined) return;
  const payloads = (list: proto.temporal.api.common.v1.IPayloads | null | undefined) =>
    (list?.payloads ?? []).reduce(
      (sum, payload) => sum + temporal.api.common.v1.Payload.encode(payload).finish().length,
      0,
    );
  count(`${activityType}.input`, payloads(scheduled?.input));
  count(`${activityType}.result`, payloads(event.activityTaskCompletedEventAttributes?.result));
  const summary = scheduled ? event.userMetadata?.summary : undefined;
  if (summary) count(`${activityType}.summary`, temporal.api.common.v1.Payload.encode(summary).finish().length);
}

/** Measures every execution of a workflow, first to last, following its continue-as-new chain. */
export async function readExecutionChainFacts(client: Client, workflowId: string): Promise<HistoryFacts[]> {
  const description = await client.workflow.getHandle(workflowId).describe();
  const chain: HistoryFacts[] = [];
  let runId: string | undefined = description.raw.workflowExecutionInfo?.firstRunId ?? description.runId;
  while (runId !== undefined) {
    const facts = await readHistoryFacts(client, workflowId, runId);
    chain.push(facts);
    runId = facts.continuedAsRunId;
  }
  return chain;
}
