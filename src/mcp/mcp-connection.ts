import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { RelayError } from '../shared/errors.js';
import { errorMessage } from '../tool/error-message.js';
import type { Logger } from '../tool/tool-context.js';

/** How to reach a server once secret references are resolved. */
export type ResolvedTransport =
  | { type: 'stdio'; command: string; args: string[]; env: Record<string, string>; cwd?: string }
  | { type: 'http'; url: string; headers: Record<string, string> };

/** What one connection needs besides its transport. */
export interface McpConnectionOptions {
  server: string;
  transport: ResolvedTransport;
  logger: Logger;
  /**
   * Called when the server announces a tool list change, and after the connection came back from a drop (the
   * server may have restarted with other tools). Only the connection that keeps the catalog sets it; it also makes
   * the connection reconnect by itself, with backoff, instead of on the next call.
   */
  onToolsChanged?: () => void;
}

const firstRetryDelayMs = 250;
const maxRetryDelayMs = 10_000;

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
    await client?.close();
  }

  /** Every tool the server lists, following pagination. */
  async listTools(signal?: AbortSignal): Promise<Tool[]> {
    const client = await this.client(signal);
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, signal ? { signal } : {});
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    return tools;
  }

  async #connect(): Promise<Client> {
    const wait = this.#nextAttemptAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const { server, logger, onToolsChanged } = this.#options;
    const client = new Client({ name: 'relay-e', version: '0.1.0' }, { capabilities: {} });
    if (onToolsChanged) client.setNotificationHandler(ToolListChangedNotificationSchema, () => onToolsChanged());
    const transport = createTransport(this.#options.transport, server, logger);
    try {
      await client.connect(transport);
    } catch (error) {
      this.#recordFailure();
      await client.close().catch(() => undefined);
      // No request reached the server, so another attempt is safe, unless the server refused us (bad credentials).
      const retryable = !isRefusal(error);
      throw transportFailure(
        `MCP server '${server}' could not be reached: ${describeTransportError(error)}`,
        retryable,
        error,
      );
    }
    const reconnected = this.#failures > 0;
    this.#failures = 0;
    client.onclose = () => this.#dropped(client);
    if (this.#closed) {
      await client.close();
      throw transportFailure(`MCP server '${server}': the connection is closed`, false);
    }
    this.#client = client;
    if (reconnected) onToolsChanged?.();
    return client;
  }

  #dropped(client: Client): void {
    if (this.#client !== client) return;
    this.#client = undefined;
    if (this.#closed) return;
    this.#recordFailure();
    this.#options.logger.warn('MCP server connection dropped; reconnecting', { server: this.#options.server });
    if (this.#options.onToolsChanged) this.#scheduleReconnect();
  }

  #scheduleReconnect(): void {
    clearTimeout(this.#reconnectTimer);
    this.#reconnectTimer = setTimeout(
      () => {
        this.client().catch((error: unknown) => {
          if (this.#closed) return;
          this.#options.logger.warn('MCP server reconnect failed', { server: this.#options.server, error });
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
}

function createTransport(settings: ResolvedTransport, server: string, logger: Logger): Transport {
  if (settings.type === 'http') {
    return new StreamableHTTPClientTransport(new URL(settings.url), { requestInit: { headers: settings.headers } });
  }
  const transport = new StdioClientTransport({
    command: settings.command,
    args: settings.args,
    env: { ...getDefaultEnvironment(), ...settings.env },
    ...(settings.cwd !== undefined ? { cwd: settings.cwd } : {}),
    stderr: 'pipe',
  });
  // A server's stderr is its log; read it so the pipe never fills and blocks the server.
  transport.stderr?.on('data', (chunk: Buffer) => logger.debug('MCP server stderr', { server, text: String(chunk) }));
  return transport;
}

/** A failure to reach or talk to an MCP server; `retryable` says whether another attempt is safe. */
export function transportFailure(message: string, retryable: boolean, cause?: unknown): RelayError {
  return new RelayError('tool_transport_failed', message, { cause, details: { retryable } });
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
