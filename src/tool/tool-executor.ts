import { RelayError } from '../shared/errors.js';
import type { ErrorCode } from '../shared/errors.js';
import { longestTimerDelayMs } from '../shared/timer-limit.js';
import { argumentsAsGiven, parseToolArguments } from '../shared/tool-input.js';
import type { ToolErrorType, ToolFailure, ToolResult } from '../shared/tool-result.js';
import type { ToolDefinition } from './define-tool.js';
import { errorMessage } from '../shared/error-message.js';
import type { ToolGuardrails } from './guardrails.js';
import { runAfterGuardrails, runBeforeGuardrails } from './guardrails.js';
import type { Logger, ToolContext } from './tool-context.js';
import { createToolContext, defaultLogger, withLogAttributes } from './tool-context.js';
import type { ToolRegistry } from './tool-registry.js';
import { boundText, truncateOutput } from './truncate-output.js';
import { takesInputAsGiven } from './tool-catalog.js';
import { checkCallInput } from './timed-patterns.js';

/** Long enough for a slow third-party API, short enough that a hung tool frees its worker slot within a minute. */
export const defaultToolTimeoutMs = 60_000;

/**
 * About 8 000 tokens: room for a page of records, yet small next to a model's context window and Temporal's
 * 2 MiB payload limit, so a long run's history stays bounded.
 */
export const defaultMaxResultBytes = 32_768;

/** How a `ToolExecutor` treats every call. */
export interface ToolExecutorOptions {
  /** Run for every tool, before the tool's own guardrails. */
  guardrails?: ToolGuardrails;
  /**
   * Time limit for a tool without its own `timeoutMs`, in milliseconds.
   * @default 60_000 (one minute: a slow API call fits, a hung tool is given up on soon)
   */
  defaultTimeoutMs?: number;
  /**
   * Output whose JSON is larger than this many bytes is cut to fit, for tools without their own limit.
   * @default 32_768 (32 KiB, about 8 000 tokens: bounded history and model context, far below Temporal's 2 MiB)
   */
  maxResultBytes?: number;
  /**
   * The logger tools get when the call's context brings none; records carry the tool name and call id.
   * @default JSON lines on stderr, level from `RELAY_E_LOG_LEVEL`
   */
  logger?: Logger;
}

/** One tool call to execute; `arguments` is unchecked and may be an object or a JSON string. */
export interface ToolCallRequest {
  id?: string;
  name: string;
  arguments: unknown;
}

/** What one `execute` or `executeCall` is given besides the call. */
export interface ToolExecutionOptions {
  /** Fields for `ctx`; those left out get `createToolContext`'s defaults. */
  context?: Partial<ToolContext>;
  /** Aborting it aborts `ctx.signal` and ends the call as `cancelled` once the tool has ended (at most at its timeout). */
  signal?: AbortSignal;
  /**
   * Hides what must not leave the call (the run's secrets) in a JSON value and returns it. Applied to the output and
   * the error message before they are cut to size, where a secret would be escaped or cut in two, and to the error
   * the failure log records. Without it, nothing is hidden.
   */
  redact?: Redact;
}

/** Returns a JSON value with what must not be kept replaced; see `ToolExecutionOptions.redact`. */
export type Redact = <T>(value: T) => T;

type ResultBase = Pick<ToolFailure, 'toolName' | 'toolCallId'>;

/**
 * Validates, guards and runs tool calls. It never throws: unknown tools, invalid input, denials, timeouts,
 * cancellation and errors thrown by tools all come back as a `ToolFailure` the model can read.
 */
export class ToolExecutor {
  readonly #registry: ToolRegistry;
  readonly #guardrails: ToolGuardrails | undefined;
  readonly #defaultTimeoutMs: number;
  readonly #maxResultBytes: number;
  readonly #logger: Logger;

  constructor(registry: ToolRegistry, options: ToolExecutorOptions = {}) {
    this.#registry = registry;
    this.#guardrails = options.guardrails;
    this.#defaultTimeoutMs = options.defaultTimeoutMs ?? defaultToolTimeoutMs;
    this.#maxResultBytes = options.maxResultBytes ?? defaultMaxResultBytes;
    this.#logger = options.logger ?? defaultLogger;
  }

  /** Runs the tool `name` with `input`; the same as `executeCall` without a call id. */
  execute(name: string, input: unknown, options?: ToolExecutionOptions): Promise<ToolResult> {
    return this.executeCall({ name, arguments: input }, options);
  }

  /** Runs one tool call; the result carries the call's id when it has one. */
  async executeCall(call: ToolCallRequest, options: ToolExecutionOptions = {}): Promise<ToolResult> {
    // Callers from JavaScript or from a model can hand over anything, null included; even then the answer is a result.
    const request: Partial<ToolCallRequest> = typeof call === 'object' && call !== null ? call : {};
    const toolCallId = typeof request.id === 'string' ? request.id : options.context?.toolCallId;
    const toolName = typeof request.name === 'string' ? request.name : '';
    const base: ResultBase = toolCallId === undefined ? { toolName } : { toolName, toolCallId };
    if (toolName === '') return failure(base, 'validation', 'A tool call needs a tool name (a non-empty string)');
    let result: ToolResult;
    try {
      result = await this.#executeCall({ name: toolName, arguments: request.arguments }, base, options);
    } catch (error) {
      result = failure(base, 'execution', errorMessage(error));
    }
    if (result.success) return result;
    const maxBytes = this.#registry.get(toolName)?.maxResultBytes ?? this.#maxResultBytes;
    const error = options.redact ? options.redact(result.error) : result.error;
    return { ...result, error: boundText(error, maxBytes) };
  }

  /** The time limit of a tool call, in milliseconds: the tool's own, else the executor's default. */
  timeoutFor(toolName: string): number {
    return this.#registry.get(toolName)?.timeoutMs ?? this.#defaultTimeoutMs;
  }

  async #executeCall(call: ToolCallRequest, base: ResultBase, options: ToolExecutionOptions): Promise<ToolResult> {
    const tool = this.#registry.get(call.name);
    if (!tool) return failure(base, 'not_found', this.#describeUnknown(call.name));

    const check = await checkCallInput(tool, call.arguments);
    if (!check.success) {
      const parsed = parseToolArguments(call.arguments);
      return {
        ...failure(base, 'validation', check.message),
        issues: check.issues,
        input: parsed.success ? parsed.data : call.arguments,
      };
    }

    const callerSignals = [options.signal, options.context?.signal].filter((signal) => signal !== undefined);
    const timeoutMs = tool.timeoutMs ?? this.#defaultTimeoutMs;
    const deadline = Date.now() + timeoutMs;
    const lifetime = startLifetime(tool.name, timeoutMs, callerSignals);
    try {
      if (lifetime.signal.aborted) return failure(base, ...(await lifetime.ended));
      const logger =
        options.context?.logger ?? withLogAttributes(this.#logger, { ...base, runId: options.context?.runId });
      const ctx = createToolContext({
        ...options.context,
        toolCallId: base.toolCallId,
        logger,
        signal: lifetime.signal,
      });
      const input: unknown = takesInputAsGiven(tool) ? argumentsAsGiven(call.arguments) : check.data;
      // A logger that throws (or any other fault around the tool) rejects here and becomes an execution failure.
      const run = this.#run(tool, input, ctx, base, options.redact).catch((error: unknown) =>
        failure(base, 'execution', errorMessage(error)),
      );
      const first = await Promise.race([
        run.then((result) => ({ result })),
        lifetime.ended.then((ending) => ({ ending })),
      ]);
      if ('result' in first) return first.result;
      if (first.ending[0] === 'cancelled')
        return await afterCancellation(run, failure(base, ...first.ending), deadline);
      // A tool that ignores its signal keeps running in the background; the caller gets its answer now.
      return failure(base, ...first.ending);
    } finally {
      lifetime.dispose();
    }
  }

  async #run(
    tool: ToolDefinition,
    input: unknown,
    ctx: ToolContext,
    base: ResultBase,
    redact: Redact | undefined,
  ): Promise<ToolResult> {
    const layers = [this.#guardrails, tool.guardrails];
    const denial = await runBeforeGuardrails(layers, input, ctx, tool);
    if (denial) return failure(base, 'guardrail', `Denied by guardrail: ${denial.reason}`);

    let output: unknown;
    try {
      output = await tool.execute(input, ctx);
    } catch (error) {
      // The model only sees the message; the stack goes to the log for whoever fixes the tool. A throw caused
      // by the call being cut short is expected and not worth a warning.
      if (!ctx.signal.aborted) {
        ctx.logger.warn('Tool execution failed', {
          toolName: tool.name,
          error: redact ? redactedError(error, redact) : error,
        });
      }
      return toFailure(base, error);
    }

    const verdict = await runAfterGuardrails(layers, output, ctx, tool);
    if (!verdict.allow) return failure(base, 'guardrail', `Denied by guardrail: ${verdict.reason}`);

    let kept: ReturnType<typeof truncateOutput>;
    try {
      kept = truncateOutput(verdict.output, tool.maxResultBytes ?? this.#maxResultBytes, redact);
    } catch (error) {
      // The tool has run: another attempt would run it again, so this failure is final.
      const message = `${errorMessage(error)}. The tool ran, so it was not retried: check before calling it again.`;
      return { ...failure(base, 'execution', message), retryable: false };
    }
    const { data, truncated, originalSize } = kept;
    return truncated ? { success: true, ...base, data, truncated, originalSize } : { success: true, ...base, data };
  }

  #describeUnknown(name: string): string {
    const available = this.#registry.list().map((tool) => tool.name);
    const hint = available.length > 0 ? `available tools: ${available.join(', ')}` : 'no tools are registered';
    return `Tool '${name}' not found; ${hint}`;
  }
}

/**
 * Answers a cancelled call once the tool has ended, or at its own timeout if it ignores its signal: the run reports
 * itself cancelled only after its tools stopped acting (a transfer letting its request finish lands before that).
 */
async function afterCancellation(
  run: Promise<ToolResult>,
  cancelled: ToolResult,
  deadline: number,
): Promise<ToolResult> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const outlived = new Promise<void>((resolve) => {
    timer = setTimeout(resolve, Math.min(Math.max(0, deadline - Date.now()), longestTimerDelayMs));
  });
  try {
    await Promise.race([run, outlived]);
    return cancelled;
  } finally {
    clearTimeout(timer);
  }
}

type Ending = [errorType: Extract<ToolErrorType, 'timeout' | 'cancelled'>, error: string];

interface Lifetime {
  /** The signal the tool sees: aborted by the timeout or by any caller signal. */
  signal: AbortSignal;
  /** Settles when the call is cut short, never when it ends normally. */
  ended: Promise<Ending>;
  dispose(): void;
}

function startLifetime(toolName: string, timeoutMs: number, callerSignals: readonly AbortSignal[]): Lifetime {
  const controller = new AbortController();
  let settle: (ending: Ending) => void = () => undefined;
  const ended = new Promise<Ending>((resolve) => (settle = resolve));
  const end = (ending: Ending, reason: unknown) => {
    if (controller.signal.aborted) return;
    // Settle first so the race is decided before the tool's own abort listeners run.
    settle(ending);
    controller.abort(reason);
  };

  const timeoutMessage = `Tool '${toolName}' timed out after ${timeoutMs} ms`;
  const timer = setTimeout(
    () => end(['timeout', timeoutMessage], new DOMException(timeoutMessage, 'TimeoutError')),
    // Node fires longer delays at once; the longest it accepts is as good as no limit.
    Math.min(timeoutMs, longestTimerDelayMs),
  );
  const cancel = (signal: AbortSignal) => end(['cancelled', `Tool '${toolName}' was cancelled`], signal.reason);
  const listeners = callerSignals.map((signal) => {
    const listener = () => cancel(signal);
    signal.addEventListener('abort', listener, { once: true });
    return () => signal.removeEventListener('abort', listener);
  });
  const alreadyAborted = callerSignals.find((signal) => signal.aborted);
  if (alreadyAborted) cancel(alreadyAborted);

  return {
    signal: controller.signal,
    ended,
    dispose() {
      clearTimeout(timer);
      for (const remove of listeners) remove();
    },
  };
}

/** Errors a tool throws on purpose to say what kind of failure it met (remote tool sources do). */
const errorTypesByCode: Partial<Record<ErrorCode, ToolErrorType>> = {
  tool_reported_error: 'tool_error',
  tool_transport_failed: 'transport',
  tool_protocol_error: 'protocol',
};

function toFailure(base: ResultBase, error: unknown): ToolFailure {
  const errorType = RelayError.isInstance(error) ? errorTypesByCode[error.code] : undefined;
  if (!RelayError.isInstance(error) || errorType === undefined) return failure(base, 'execution', errorMessage(error));
  const result = failure(base, errorType, errorMessage(error));
  const retryable = error.details?.retryable;
  return typeof retryable === 'boolean' ? { ...result, retryable } : result;
}

/**
 * A thrown error as the failure log records it, `redact` applied: a new error of its name, message and stack only,
 * since its other fields and its cause (an HTTP client's request and its headers) may hold a secret too.
 */
function redactedError(error: unknown, redact: Redact): Error {
  const copy = new Error(redact(errorMessage(error)));
  if (error instanceof Error) copy.name = redact(error.name);
  // A thrown non-error has no stack of its own; this function's would mislead.
  copy.stack =
    error instanceof Error && error.stack !== undefined ? redact(error.stack) : `${copy.name}: ${copy.message}`;
  return copy;
}

function failure(base: ResultBase, errorType: ToolErrorType, error: string): ToolFailure {
  return { success: false, ...base, error, errorType };
}
