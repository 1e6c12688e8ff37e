import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { RelayError } from '../shared/errors.js';
import { longestTimerDelayMs } from '../shared/timer-limit.js';
import type { ToolContext } from '../tool/tool-context.js';
import type { McpConnection } from './mcp-connection.js';
import {
  describeTransportError,
  isAskedToRetryLater,
  isRefusal,
  isSessionExpired,
  transportFailure,
} from './mcp-connection.js';

/** The `_meta` key under which a call carries the run's idempotency key to the server. */
const idempotencyKeyMetaKey = 'relay-e/idempotencyKey';

/** One call as the tool source makes it. */
export interface McpCall {
  server: string;
  /** The tool's own name on the server. */
  toolName: string;
  input: unknown;
  /** The call may be repeated without a second effect (annotated read-only or idempotent). */
  safeToRepeat: boolean;
}

/**
 * Calls a tool on an MCP server with the run's context: `ctx.signal` cancels the request (the SDK sends
 * `notifications/cancelled`), progress notifications go to `ctx.reportProgress`, and the idempotency key rides in
 * `_meta`. A result with `isError: true` throws `tool_reported_error`; transport and protocol failures throw their
 * own codes, retryable only when no request reached the server or the tool is safe to repeat.
 */
export async function callMcpTool(connection: McpConnection, call: McpCall, ctx: ToolContext): Promise<unknown> {
  let result: CallToolResult;
  try {
    result = await requestToolCall(connection, call, ctx).catch(async (error: unknown) => {
      if (!isSessionExpired(error) || ctx.signal.aborted) throw error;
      // The server no longer knows the session (it restarted) and ran nothing: call again on a new session.
      await connection.renewSession();
      return requestToolCall(connection, call, ctx);
    });
  } catch (error) {
    if (ctx.signal.aborted) throw error;
    // A server that could not be reached at all is already told apart by the connection.
    const failure = RelayError.isInstance(error) ? error : classifyFailure(call, error);
    // A server that asks for the request later is reachable: its connection stays for the other calls on it.
    if (failure.code === 'tool_transport_failed' && !isAskedToRetryLater(error)) await connection.reset();
    throw failure;
  }
  if (result.isError === true) throw new RelayError('tool_reported_error', reportedError(call, result));
  return toToolOutput(result);
}

/**
 * What an `isError` result tells the model: its text, else its details as a result would carry them (structured
 * content, else the other content described), so a server that reports without text is not reduced to "an error".
 * The executor bounds the message's size.
 */
function reportedError(call: McpCall, result: CallToolResult): string {
  const text = textOf(result);
  if (text) return text;
  const details = toToolOutput(result);
  // Only text items (all empty, or none) come back as a string: there is nothing more to say.
  return typeof details === 'string' ? `MCP tool '${call.toolName}' reported an error` : JSON.stringify(details);
}

async function requestToolCall(connection: McpConnection, call: McpCall, ctx: ToolContext): Promise<CallToolResult> {
  const client = await connection.client(ctx.signal);
  return (await client.callTool(
    {
      name: call.toolName,
      arguments: call.input as Record<string, unknown>,
      ...(ctx.idempotencyKey !== undefined ? { _meta: { [idempotencyKeyMetaKey]: ctx.idempotencyKey } } : {}),
    },
    undefined,
    {
      signal: ctx.signal,
      // The executor's timeout aborts a call (and so cancels the request): the SDK's own per-request limit (60 s by
      // default) is set out of the way.
      timeout: longestTimerDelayMs,
      onprogress: (progress) => ctx.reportProgress?.(progress),
    },
  )) as CallToolResult;
}

/**
 * What the model sees of a result: the structured content when the server gave one (its text content is the same
 * data again), else the text, else a list that names images, audio and resources instead of carrying their bytes.
 */
function toToolOutput(result: CallToolResult): unknown {
  if (result.structuredContent !== undefined) return result.structuredContent;
  const items = result.content.map(describeContent);
  return items.every((item) => typeof item === 'string') ? items.join('\n') : items;
}

function describeContent(item: CallToolResult['content'][number]): unknown {
  switch (item.type) {
    case 'text':
      return item.text;
    case 'image':
    case 'audio':
      return { type: item.type, mimeType: item.mimeType, bytes: Math.floor((item.data.length * 3) / 4) };
    case 'resource':
      return 'text' in item.resource
        ? { type: 'resource', uri: item.resource.uri, text: item.resource.text }
        : { type: 'resource', uri: item.resource.uri, mimeType: item.resource.mimeType };
    case 'resource_link':
      return { type: 'resource_link', uri: item.uri, name: item.name };
    default:
      return item;
  }
}

function textOf(result: CallToolResult): string {
  return result.content
    .filter((item) => item.type === 'text')
    .map((item) => item.text)
    .join('\n');
}

const deterministicProtocolErrors = new Set<number>([
  ErrorCode.ParseError,
  ErrorCode.InvalidRequest,
  ErrorCode.MethodNotFound,
  ErrorCode.InvalidParams,
]);

/** Errors the SDK raises itself when the link to the server breaks or stays silent: transport, not protocol. */
const linkErrors = new Set<number>([ErrorCode.ConnectionClosed, ErrorCode.RequestTimeout]);

function classifyFailure(call: McpCall, error: unknown): RelayError {
  const prefix = `MCP server '${call.server}', tool '${call.toolName}'`;
  if (error instanceof McpError && !linkErrors.has(error.code)) {
    const retryable = !deterministicProtocolErrors.has(error.code) && call.safeToRepeat;
    return new RelayError('tool_protocol_error', `${prefix}: ${error.message}`, {
      cause: error,
      details: { retryable, mcpErrorCode: error.code },
    });
  }
  if (isRefusal(error)) return transportFailure(`${prefix}: ${describeTransportError(error)}`, false, error);
  // The request may have reached the server before the link broke: repeat it only when that cannot hurt, or when
  // the server said it did not take it.
  const retryable = neverSent(error) || isAskedToRetryLater(error) || call.safeToRepeat;
  return transportFailure(`${prefix}: ${describeTransportError(error)}`, retryable, error);
}

/** A refused connection means no request left this process. */
function neverSent(error: unknown): boolean {
  const cause = error instanceof Error ? (error.cause as { code?: unknown } | undefined) : undefined;
  return cause?.code === 'ECONNREFUSED';
}
