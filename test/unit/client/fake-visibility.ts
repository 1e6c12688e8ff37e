import { Client, Connection } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import proto from '@temporalio/proto';
import type { temporal } from '@temporalio/proto';
import { relayConnectionInterceptors } from '../../../src/client/connection-interceptors.js';

type RawExecution = temporal.api.workflow.v1.IWorkflowExecutionInfo;

/** gRPC's limit on a message it receives, which the fake enforces on each listing page it answers. */
export const grpcMessageLimitBytes = 4 * 1024 * 1024;

/** A gRPC error's metadata, with no status details in it. */
const noMetadata = { get: (): Buffer[] => [] };

/** What gRPC throws for a message over its limit (the shape `isGrpcServiceError` recognises). */
export function messageTooLarge(bytes: number): Error {
  const details = `Received message larger than max (${bytes} vs ${grpcMessageLimitBytes})`;
  return Object.assign(new Error(`8 RESOURCE_EXHAUSTED: ${details}`), { code: 8, details, metadata: noMetadata });
}

/** What gRPC throws when the connection drops. */
export function unavailable(what: string): Error {
  const details = `${what}: Connection dropped`;
  return Object.assign(new Error(`14 UNAVAILABLE: ${details}`), { code: 14, details, metadata: noMetadata });
}

/** One listed agent run as visibility returns it, its memo padded to about `memoBytes`. */
export function rawRun(
  index: number,
  options: { open?: boolean; memoBytes?: number; memo?: Record<string, unknown>; tenantId?: string } = {},
): RawExecution {
  const { open = false, memoBytes = 0, tenantId = 'acme' } = options;
  const memo: Record<string, unknown> = { model: 'scripted:test', prompt: `prompt ${index}`, ...options.memo };
  // Incompressible, as a closed run's deflated record is.
  if (memoBytes > 0) memo['relayClosedRun'] = incompressible(memoBytes);
  const fields = Object.fromEntries(Object.entries(memo).map(([key, value]) => [key, toPayload(value)]));
  return proto.temporal.api.workflow.v1.WorkflowExecutionInfo.fromObject({
    execution: { workflowId: `run-${index}`, runId: `execution-${index}` },
    type: { name: 'agentRun' },
    startTime: { seconds: 1_700_000_000 + index },
    ...(open ? {} : { closeTime: { seconds: 1_700_001_000 + index } }),
    status: open ? 1 : 2,
    historyLength: 10,
    memo: { fields },
    searchAttributes: { indexedFields: { RelayTenant: { ...toPayload(tenantId), metadata: keywordMetadata() } } },
  });
}

function incompressible(length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  let state = length;
  for (let at = 0; at < length; at++) {
    state = (state * 1_103_515_245 + 12_345) >>> 0;
    bytes[at] = state >>> 24;
  }
  return bytes;
}

/** A Keyword search attribute's payload metadata, as the server returns it. */
function keywordMetadata(): Record<string, Uint8Array> {
  return { encoding: new TextEncoder().encode('json/plain'), type: new TextEncoder().encode('Keyword') };
}

function toPayload(value: unknown): temporal.api.common.v1.IPayload {
  const payload = defaultPayloadConverter.toPayload(value);
  if (!payload) throw new Error(`Cannot convert ${String(value)}`);
  return payload;
}

/** A listing request as the fake received it. */
export interface ListingRequest {
  query: string;
  pageSize: number;
  /** Where the page started, in the fake's list. */
  start: number;
}

/** How the fake visibility behaves. */
export interface FakeVisibilityOptions {
  /** Every request it received, in order. */
  requests?: ListingRequest[];
  /** The most executions it puts in a page, whatever the page size asked (a server's own cap). */
  maxPerPage?: number;
  /** How long a page takes to come back. */
  delayMs?: number;
  /** Thrown for the page starting at this index instead of answering it. */
  failAt?: { start: number; error: Error };
}

/**
 * A `Client` whose visibility lists `executions` in order, a page at a time, refusing a page whose message is over
 * gRPC's 4 MiB the way gRPC does (the SDK's `workflow.list()` and a raw `listWorkflowExecutions` both reach it).
 * Close it with `client.connection.close()`.
 */
export function fakeVisibility(executions: readonly RawExecution[], options: FakeVisibilityOptions = {}): Client {
  // RelayClient.connect's interceptors: a call the fake does not answer backs off, and the close ends it cleanly.
  const connection = Connection.lazy({ address: '127.0.0.1:1', interceptors: relayConnectionInterceptors() });
  const listWorkflowExecutions = async (request: temporal.api.workflowservice.v1.IListWorkflowExecutionsRequest) => {
    const token = request.nextPageToken ?? new Uint8Array();
    const start = token.length > 0 ? Number(new TextDecoder().decode(token)) : 0;
    const pageSize = Math.min(request.pageSize || 1_000, options.maxPerPage ?? Infinity);
    options.requests?.push({ query: request.query ?? '', pageSize: request.pageSize ?? 0, start });
    if (options.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, options.delayMs));
    if (options.failAt?.start === start) throw options.failAt.error;
    const end = Math.min(executions.length, start + pageSize);
    const message = proto.temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse.encode({
      executions: executions.slice(start, end),
      nextPageToken: new TextEncoder().encode(end < executions.length ? String(end) : ''),
    }).finish();
    if (message.byteLength > grpcMessageLimitBytes) throw messageTooLarge(message.byteLength);
    return proto.temporal.api.workflowservice.v1.ListWorkflowExecutionsResponse.decode(message);
  };
  Object.assign(connection.workflowService, { listWorkflowExecutions });
  return new Client({ connection, namespace: 'default' });
}
