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

/** Parses a proto-JSON history (`temporal workflow show --output json`) into the History message the SDK replays. */
export function historyFromJson(json: unknown): History {
  const history = protojson.fromJson(historyType, json, { ignoreUnknownFields: true });
  if (history === null) throw new TypeError('Not a workflow history');
  return history;
}

/** Serialises a History (as `handle.fetchHistory()` returns it) to indented proto JSON, the CLI's format. */
export function historyToJson(history: History): string {
  return `${JSON.stringify(protojson.toJson(historyType, historyType.fromObject(history)), null, 2)}\n`;
}
