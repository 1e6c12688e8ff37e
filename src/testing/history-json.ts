import { createRequire } from 'node:module';
import type { History } from '@temporalio/worker';

// The SDK's `historyFromJSON`/`historyToJSON` (@temporalio/common/lib/proto-utils) fail with "type must be
// a Type" whenever npm installs separate copies of protobufjs under @temporalio/common and @temporalio/proto:
// protojson checks `instanceof Type` against its own copy. Taking protojson from the copy that
// @temporalio/proto's generated types were built with works in every install layout.
interface ProtoJson {
  fromJson(type: unknown, json: unknown, options?: { ignoreUnknownFields?: boolean }): History | null;
  toJson(type: unknown, message: unknown): unknown;
}
interface HistoryType {
  fromObject(object: unknown): unknown;
}

const requireHere = createRequire(import.meta.url);
const protoEntry = requireHere.resolve('@temporalio/proto');
const protojson = createRequire(protoEntry)('protobufjs/ext/protojson') as ProtoJson;
const { patchProtobufRoot } = requireHere('@temporalio/proto/lib/patch-protobuf-root') as {
  patchProtobufRoot: (root: unknown) => { lookupType(name: string): HistoryType };
};
const historyType = patchProtobufRoot(requireHere('@temporalio/proto')).lookupType('temporal.api.history.v1.History');

/**
 * Parses a proto-JSON history (`temporal workflow show --output json`) into the History message the SDK replays;
 * enum values written in PascalCase, as older exports (tctl, the Web UI) write them, are read as well.
 */
export function historyFromJson(json: unknown): History {
  const history = protojson.fromJson(historyType, withConstantCaseEnums(json), { ignoreUnknownFields: true });
  if (history === null) throw new TypeError('Not a workflow history');
  return history;
}

/** Serialises a History (as `handle.fetchHistory()` returns it) to indented proto JSON, the CLI's format. */
export function historyToJson(history: History): string {
  return `${JSON.stringify(protojson.toJson(historyType, historyType.fromObject(history)), null, 2)}\n`;
}

type JsonObject = Record<string, unknown>;

/**
 * The enum fields the SDK's `historyFromJSON` reads in PascalCase too, by the prefix of their constant names: protojson
 * knows only `EVENT_TYPE_WORKFLOW_EXECUTION_STARTED`, and leaves a field it cannot read unset.
 */
const eventEnums = { eventType: 'EVENT_TYPE' };
const attributeEnums = {
  parentClosePolicy: 'PARENT_CLOSE_POLICY',
  workflowIdReusePolicy: 'WORKFLOW_ID_REUSE_POLICY',
  initiator: 'CONTINUE_AS_NEW_INITIATOR',
  retryState: 'RETRY_STATE',
};
const taskQueueEnums = { kind: 'TASK_QUEUE_KIND' };
const childFailureEnums = { retryState: 'RETRY_STATE' };

/** The history with those enum values in constant case (`WorkflowExecutionStarted` → `EVENT_TYPE_WORKFLOW_…`). */
function withConstantCaseEnums(json: unknown): unknown {
  if (!isJsonObject(json) || !Array.isArray(json['events'])) return json;
  const events = json['events'] as unknown[];
  return { ...json, events: events.map((event) => (isJsonObject(event) ? eventWithConstantEnums(event) : event)) };
}

function eventWithConstantEnums(event: JsonObject): JsonObject {
  const fixed = withConstants(event, eventEnums);
  for (const [field, attributes] of Object.entries(event)) {
    if (!field.endsWith('EventAttributes') || !isJsonObject(attributes)) continue;
    const { taskQueue, childWorkflowExecutionFailureInfo: childFailure } = attributes;
    fixed[field] = {
      ...withConstants(attributes, attributeEnums),
      ...(isJsonObject(taskQueue) ? { taskQueue: withConstants(taskQueue, taskQueueEnums) } : {}),
      ...(isJsonObject(childFailure)
        ? { childWorkflowExecutionFailureInfo: withConstants(childFailure, childFailureEnums) }
        : {}),
    };
  }
  return fixed;
}

/** A copy of `object` with each of the named fields that holds a PascalCase name given its constant name. */
function withConstants(object: JsonObject, prefixes: Record<string, string>): JsonObject {
  const fixed = { ...object };
  for (const [field, prefix] of Object.entries(prefixes)) {
    const value = object[field];
    if (typeof value === 'string' && value !== '' && !value.startsWith(prefix)) {
      fixed[field] = `${prefix}_${value.replace(/(?<=.)(?=[A-Z])/g, '_').toUpperCase()}`;
    }
  }
  return fixed;
}

function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
