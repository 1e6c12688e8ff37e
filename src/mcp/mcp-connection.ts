import type { Stream } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { redactSecrets } from '../security/resolve-secret-references.js';
import { RelayError } from '../shared/errors.js';
import { errorMessage } from '../shared/error-message.js';
import { within } from '../shared/within.js';
import type { Logger } from '../tool/tool-context.js';
import { hideSecretsInError } from '../security/hide-secrets-in-error.js';
import { StdioServerProcess } from './stdio-server-process.js';
import type { StdioServerCommand } from './stdio-server-process.js';

/** How to reach a server once secret references are resolved. */
export type ResolvedTransport =
  ({ type: 'stdio' } & StdioServerCommand) | { type: 'http'; url: string; headers: Record<string, string> };

/** A transport with its secret references resolved, and the secret values that resolving put in it. */
export interface ResolvedSettings {
  transport: ResolvedTransport;
  /** Hidden from what the server writes on stderr and from the error of a connect that fails. */
  secretValues: readonly string[];
}

/** What one connection needs besides its transport. */
export interface McpConnectionOptions {
  server: string;
  /** The tenant whose secrets the connection holds, for its logs; absent for a connection every tenant shares. */
  tenantId?: string;
  /** Called before each connect and reconnect, so a link opened after a secret was rotated uses the new value. */
  settings: () => Promise<ResolvedSettings>;
  logger: Logger;
  /**
   * Called when the server announces a tool list change, and after the connection came back from a drop (the
   * server may have restarted with other tools). Only the connection that keeps the catalog sets it; it also makes
   * the connection reconnect by itself, with backoff, instead of on the next call.
   */
  onToolsChanged?: () => void;
  /**
   * Called when a call finds that the server no longer knows this connection's HTTP session: it restarted, perhaps
   * with other tools, and no session of the old one will be told so.
   */
  onSessionLost?: () => void;
}

const firstRetryDelayMs = 250;
const maxRetryDelayMs = 10_000;
/** How long a closing link waits for the server to end its HTTP session before it closes anyway. */
const sessionEndTimeoutMs = 2_000;
/** The most `tools/list` pages a server may answer with: a longer list is taken for one that never ends. */
const maxToolListPages = 1_000;
/** A stderr line longer than this is logged in pieces, so a server that never writes a newline is not buffered. */
const maxStderrLineLength = 64 * 1024;

/**
 * One client connection to an MCP server that heals: when the server exits or the link drops, the next use
 * reconnects (a stdio server is started again), waiting longer after each failure in a row, up to 10 s.
 */
export class McpConnection {
  readonly #options: McpConnectionOptions;
  #client: Client | undefined;
  #connecting: Promise<Client> | undefined;
  #failures = 0;
  #nextAttemptAt = 0;
  #closed = false;
  #reconnectTimer: NodeJS.Timeout | undefined;
  /** The secret values the current link was opened with, hidden from what its requests fail with. */
  #secretValues: readonly string[] = [];

  constructor(options: McpConnectionOptions) {
    this.#options = options;
  }

  /**
   * The connected client, connecting first when needed; a server that cannot be reached throws
   * `RelayError('tool_transport_failed')` marked retryable, since no request reached it.
   */
  async client(signal?: AbortSignal): Promise<Client> {
    if (this.#closed) throw transportFailure(`MCP server '${this.#options.server}': the connection is closed`, false);
    if (this.#client) return this.#client;
    this.#connecting ??= this.#connect().finally(() => (this.#connecting = undefined));
    return signal ? abortable(this.#connecting, signal) : this.#connecting;
  }

  /** Drops the current link (after a transport failure) so the next use starts a fresh one. */
  async reset(): Promise<void> {
    await this.#closeClient().catch(() => undefined);
  }

  /** Drops a link whose HTTP session the server no longer knows (see {@link isSessionExpired}), and says so. */
  async renewSession(): Promise<void> {
    await this.reset();
    this.#options.onSessionLost?.();
  }

  /**
   * Closes the link for good; a stdio server's process is stopped. A link that fails to close throws, for the caller
   * to report (the pool and the worker's tool sources log it).
   */
  async close(): Promise<void> {
    this.#closed = true;
    clearTimeout(this.#reconnectTimer);
    // A connect under way settles first; its failure went to whoever asked for the link.
    await this.#connecting?.catch(() => undefined);
    await this.#closeClient();
  }

  /** Forgets the current link and closes it. */
  async #closeClient(): Promise<void> {
    const client = this.#client;
    this.#client = undefined;
    if (client) await this.#shutDown(client);
  }

  /** Closes a link, ending its HTTP session on the server first: closing alone leaves the session open there. */
  async #shutDown(client: Client): Promise<void> {
    const { transport } = client;
    if (transport instanceof StreamableHTTPClientTransport) await this.#endSession(transport);
    await client.close();
  }

  /** Ends the session best effort, within a bound: a server that fails to end it only costs a warning. */
  async #endSession(transport: StreamableHTTPClientTransport): Promise<void> {
    try {
      await within(transport.terminateSession(), sessionEndTimeoutMs, 'ending the session timed out');
    } catch (error) {
      // A 404 says the server no longer knows the session: it has ended already.
      if (error instanceof StreamableHTTPError && error.code === 404) return;
      const reason = describeTransportError(error);
      this.#options.logger.warn('Could not end an MCP session', { ...this.#logAttributes(), error: reason });
    }
  }

  /**
   * Every tool the server lists, following pagination; a list that never ends throws `tool_protocol_error`. A server
   * that refuses a credential may quote it: the link's secrets are hidden from the error, which reaches the logs.
   */
  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    try {
      return await this.#listPages(await this.client(signal), signal).catch(async (error: unknown) => {
        if (!isSessionExpired(error) || signal?.aborted) throw error;
        // A server that restarted lists on a new session (this is how the catalog learns of its new tools).
        await this.reset();
        return this.#listPages(await this.client(signal), signal);
      });
    } catch (error) {
      throw hideSecretsInError(error, this.#secretValues);
    }
  }

  async #listPages(client: Client, signal: AbortSignal | undefined): Promise<Tool[]> {
    const tools: Tool[] = [];
    const cursors = new Set<string>();
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, signal ? { signal } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
      if (cursor !== undefined) this.#checkNextPage(cursor, cursors);
    } while (cursor !== undefined);
    return tools;
  }

  /** Refuses a cursor seen before, or one more page past the bound: either would page on forever. */
  #checkNextPage(cursor: string, seen: Set<string>): void {
    const { server } = this.#options;
    if (seen.has(cursor)) {
      const repeated = `repeated the tools/list cursor ${JSON.stringify(cursor)}: its tool list never ends`;
      throw listFailure(`MCP server '${server}' ${repeated}`);
    }
    seen.add(cursor);
    if (seen.size >= maxToolListPages) {
      throw listFailure(`MCP server '${server}' lists its tools in more than ${maxToolListPages} pages`);
    }
  }

  async #connect(): Promise<Client> {
    const wait = this.#nextAttemptAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const { server, onToolsChanged } = this.#options;
    const settings = await this.#options.settings().catch((error: unknown) => {
      this.#recordFailure();
      throw error;
    });
    const client = new Client({ name: 'relay-e', version: '0.1.0' }, { capabilities: {} });
    if (onToolsChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, () => onToolsChanged());
    const transport = createTransport(settings.transport, (line) => this.#logStderr(line, settings.secretValues));
    try {
      await client.connect(transport);
    } catch (error) {
      this.#recordFailure();
      await client.close().catch(() => undefined);
      // No request reached the server, so another attempt is safe, unless the server refused us (bad credentials).
      const retryable = !isRefusal(error);
      const reason = `MCP server '${server}' could not be reached: ${describeTransportError(error)}`;
      // A server that refuses a token may quote it; this error reaches the worker's log and the start's failure.
      throw hideSecretsInError(transportFailure(reason, retryable, error), settings.secretValues);
    }
    const reconnected = this.#failures > 0;
    this.#failures = 0;
    client.onclose = () => this.#dropped(client);
    if (this.#closed) {
      await this.#shutDown(client);
      throw transportFailure(`MCP server '${server}': the connection is closed`, false);
    }
    this.#client = client;
    this.#secretValues = settings.secretValues;
    if (reconnected) onToolsChanged?.();
    return client;
  }

  #dropped(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#closed) return;
    this.#recordFailure();
    this.#options.logger.warn('MCP server connection dropped; reconnecting', this.#logAttributes());
    if (this.#options.onToolsChanged) this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = setTimeout(
      () => {
        this.client().catch((error: unknown) => {
          if (this.#closed) return;
          this.#options.logger.warn('MCP server reconnect failed', { ...this.#logAttributes(), error });
          this.#scheduleReconnect();
        });
      },
      Math.max(0, this.#nextAttemptAt - Date.now()),
    );
    this.#reconnectTimer.unref();
  }

  #recordFailure(): void {
    this.#failures += 1;
    const delay = Math.min(firstRetryDelayMs * 2 ** (this.#failures - 1), maxRetryDelayMs);
    this.#nextAttemptAt = Date.now() + delay;
  }

  /** A stdio server may log the credentials it was started with: they are hidden before the line is logged. */
  #logStderr(line: string, secretValues: readonly string[]): void {
    this.#options.logger.debug('MCP server stderr', {
      ...this.#logAttributes(),
      text: redactSecrets(line, secretValues),
    });
  }

  #logAttributes(): Record<string, string> {
    const { server, tenantId } = this.#options;
    return tenantId === undefined ? { server } : { server, tenantId };
  }
}

/** Opens a transport; a stdio server's stderr goes to `onStderrLine` a line at a time. */
function createTransport(settings: ResolvedTransport, onStderrLine: (line: string) => void): Transport {
  if (settings.type === 'http') {
    return new StreamableHTTPClientTransport(new URL(settings.url), { requestInit: { headers: settings.headers } });
  }
  const transport = new StdioServerProcess(settings);
  // A server's stderr is its log; read it so the pipe never fills and blocks the server.
  forEachLine(transport.stderr, onStderrLine);
  return transport;
}

/** Passes a stream's text on by whole lines, so no secret is cut in two between two records (bar over-long lines). */
function forEachLine(stream: Stream, onLine: (line: string) => void): void {
  const decoder = new StringDecoder('utf8');
  let pending = '';
  stream.on('data', (chunk: Buffer) => {
    const lines = (pending + decoder.write(chunk)).split('\n');
    pending = lines.pop() ?? '';
    while (pending.length > maxStderrLineLength) {
      lines.push(pending.slice(0, maxStderrLineLength));
      pending = pending.slice(maxStderrLineLength);
    }
    for (const line of lines) onLine(line);
  });
  stream.on('end', () => {
    pending += decoder.end();
    if (pending !== '') onLine(pending);
  });
}

/** A failure to reach or talk to an MCP server; `retryable` says whether another attempt is safe. */
export function transportFailure(message: string, retryable: boolean, cause?: unknown): RelayError {
  return new RelayError('tool_transport_failed', message, { cause, details: { retryable } });
}

/** A server's `tools/list` that Relay-E cannot follow to its end. */
function listFailure(message: string): RelayError {
  return new RelayError('tool_protocol_error', message, { details: { retryable: false } });
}

/** HTTP 404 to a request in a session: the spec's word for a session the server has dropped, so a new one is due. */
export function isSessionExpired(error: unknown): boolean {
  return error instanceof StreamableHTTPError && error.code === 404;
}

/** The error's message, with the HTTP status when the server answered with one. */
export function describeTransportError(error: unknown): string {
  const status = error instanceof StreamableHTTPError && error.code !== undefined ? `HTTP ${error.code}: ` : '';
  return `${status}${errorMessage(error)}`;
}

/**
 * An HTTP 4xx answer: the server understood and said no, so the same request would be refused again. Not 408 or 429,
 * which say the server did not take the request and asks for it again later ({@link isAskedToRetryLater}).
 */
export function isRefusal(error: unknown): boolean {
  return (
    error instanceof StreamableHTTPError &&
    error.code !== undefined &&
    error.code >= 400 &&
    error.code < 500 &&
    !isAskedToRetryLater(error)
  );
}

/** HTTP 408 (request timeout) or 429 (too many requests): the request was not processed, so repeating it is safe. */
export function isAskedToRetryLater(error: unknown): boolean {
  return error instanceof StreamableHTTPError && (error.code === 408 || error.code === 429);
}

function abortable<T>(promise: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    promise.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
