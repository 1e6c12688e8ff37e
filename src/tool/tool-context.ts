import { errorMessage } from '../shared/error-message.js';
import { boundText } from './truncate-output.js';

/** Writes one structured log record; `attributes` are merged into it. */
export type LogFunction = (message: string, attributes?: Record<string, unknown>) => void;

/** What tools log through; any logger with these four methods (pino, winston, console wrappers) fits. */
export interface Logger {
  debug: LogFunction;
  info: LogFunction;
  warn: LogFunction;
  error: LogFunction;
}

/** The lowest level a logger writes; `silent` writes nothing. */
export type LogLevel = 'debug' | 'info' | 'warn' | 'error' | 'silent';

/** What every tool's `execute` receives besides its input. */
export interface ToolContext {
  tenantId: string;
  userId?: string;
  sessionId?: string;
  runId?: string;
  toolCallId?: string;
  /** Stable across retries and replays of one call: pass it to payment and email APIs to do things once. */
  idempotencyKey?: string;
  config: Record<string, unknown>;
  logger: Logger;
  /** Aborts when the call is cancelled or times out; pass it on to `fetch` and friends. */
  signal: AbortSignal;
  /** Tells the caller the tool is making progress (a Temporal activity heartbeat in a run); absent elsewhere. */
  reportProgress?: (progress: ToolProgress) => void;
}

/** How far a long tool call has come, as an MCP server's progress notification says it. */
export interface ToolProgress {
  progress: number;
  total?: number;
  message?: string;
}

/** How `createLogger` filters and where it writes. */
export interface LoggerOptions {
  /**
   * Records below this level are dropped.
   * @default the `RELAY_E_LOG_LEVEL` environment variable, read at each record, else `'info'` (a value that names no
   * level is `'info'` too, said once in a `warn` record)
   */
  level?: LogLevel;
  /** Merged into every record, under the record's own attributes. */
  attributes?: Record<string, unknown>;
  /**
   * Receives each record as one line of JSON, newline included.
   * @default writes to stderr
   */
  write?: (line: string) => void;
  /**
   * The most bytes of JSON any one text in a record (the message, an attribute, an error's message or stack) takes;
   * a longer one is cut with a note of its full size. A tool may fail with a whole HTML page, and a log line of
   * hundreds of kilobytes per failure chokes log pipelines.
   * @default 8_192
   */
  maxTextBytes?: number;
}

const severity: Record<LogLevel, number> = { debug: 10, info: 20, warn: 30, error: 40, silent: 50 };

/** The level `RELAY_E_LOG_LEVEL` names (any case, spaces around it ignored), or undefined for one it does not. */
export function logLevelNamed(text: string): LogLevel | undefined {
  const level = text.trim().toLowerCase();
  return Object.hasOwn(severity, level) ? (level as LogLevel) : undefined;
}

/** Why `RELAY_E_LOG_LEVEL` set to `text` names no level, listing those it may name. */
export function unknownLogLevelMessage(text: string): string {
  return `RELAY_E_LOG_LEVEL '${text}' is not a level (${Object.keys(severity).join(', ')})`;
}

/** Creates a logger that writes one JSON object per line: `time`, `level`, `message`, then the attributes. */
export function createLogger(options: LoggerOptions = {}): Logger {
  const write = options.write ?? ((line: string) => process.stderr.write(line));
  const maxTextBytes = options.maxTextBytes ?? 8_192;
  let toldUnknownLevel: string | undefined;
  const environmentLevel = (): LogLevel => {
    const text = process.env.RELAY_E_LOG_LEVEL;
    if (text === undefined || text.trim() === '') return 'info';
    const level = logLevelNamed(text);
    if (level === undefined && toldUnknownLevel !== text) {
      toldUnknownLevel = text;
      // Said once, so that nobody waits for records the level drops.
      const message = `${unknownLogLevelMessage(text)}; logging info and above`;
      const entry = { time: new Date().toISOString(), level: 'warn', message };
      write(`${toJsonLine(entry, maxTextBytes)}\n`);
    }
    return level ?? 'info';
  };
  const record =
    (level: Exclude<LogLevel, 'silent'>): LogFunction =>
    (message, attributes) => {
      if (severity[level] < severity[options.level ?? environmentLevel()]) return;
      const entry: Record<string, unknown> = { time: new Date().toISOString(), level, message };
      for (const [key, value] of Object.entries({ ...options.attributes, ...attributes })) {
        if (!(key in entry)) entry[key] = value;
      }
      write(`${toJsonLine(entry, maxTextBytes)}\n`);
    };
  return { debug: record('debug'), info: record('info'), warn: record('warn'), error: record('error') };
}

/** The logger tools get when their caller gives none: JSON lines on stderr, level from `RELAY_E_LOG_LEVEL`. */
export const defaultLogger: Logger = createLogger();

/** Wraps any logger so that every record also carries `attributes` (the record's own win on conflict). */
export function withLogAttributes(logger: Logger, attributes: Record<string, unknown>): Logger {
  const bind =
    (log: LogFunction): LogFunction =>
    (message, own) =>
      log(message, { ...attributes, ...own });
  return { debug: bind(logger.debug), info: bind(logger.info), warn: bind(logger.warn), error: bind(logger.error) };
}

/**
 * Completes a partial context with the defaults: tenant `'default'`, empty config, the default logger and a
 * signal that never aborts. Handy for calling a tool's `execute` directly in tests.
 */
export function createToolContext(context: Partial<ToolContext> = {}): ToolContext {
  return {
    ...context,
    tenantId: context.tenantId ?? 'default',
    config: context.config ?? {},
    logger: context.logger ?? defaultLogger,
    signal: context.signal ?? new AbortController().signal,
  };
}

// A log call must never throw, whatever the attributes hold.
function toJsonLine(entry: Record<string, unknown>, maxTextBytes: number): string {
  try {
    return JSON.stringify(entry, (_key, value: unknown) => {
      if (value instanceof Error) return { name: value.name, message: value.message, stack: value.stack };
      if (typeof value === 'bigint') return value.toString();
      if (typeof value === 'string') return boundText(value, maxTextBytes);
      return value;
    });
  } catch (error) {
    return JSON.stringify({
      time: entry.time,
      level: entry.level,
      message: entry.message,
      logError: errorMessage(error),
    });
  }
}
