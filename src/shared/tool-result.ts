import type { ToolInputIssue } from './tool-input.js';

/**
 * Why a tool call did not succeed. The executor produces all but the approval outcomes, which the run adds when
 * it reports a call that never executed back to the model. `tool_error` is a failure the tool reported as its
 * answer (an MCP result with `isError: true`); `transport` and `protocol` are a remote tool server that could not
 * be reached or answered outside the protocol.
 */
export type ToolErrorType =
  | 'validation'
  | 'not_found'
  | 'guardrail'
  | 'execution'
  | 'timeout'
  | 'cancelled'
  | 'tool_error'
  | 'transport'
  | 'protocol'
  | 'rejected'
  | 'approval_timeout';

/** A tool call that ran and returned data. */
export interface ToolSuccess<TOutput = unknown> {
  success: true;
  toolName: string;
  toolCallId?: string;
  data: TOutput;
  /** Present when the output was over the size limit and `data` holds its cut JSON text. */
  truncated?: true;
  /** The size in bytes of the output's JSON before it was cut. */
  originalSize?: number;
  /** Never set on a success; declared so `result.error` reads without narrowing, as the product documents do. */
  error?: undefined;
}

/** A tool call that did not run, or ran and failed: data for the model, never an exception. */
export interface ToolFailure {
  success: false;
  toolName: string;
  toolCallId?: string;
  error: string;
  errorType: ToolErrorType;
  /** The input problems, with their paths, when `errorType` is `validation`. */
  issues?: ToolInputIssue[];
  /** What the model sent, echoed back on validation failures so it can correct itself. */
  input?: unknown;
  /**
   * For `transport` and `protocol` failures: whether another attempt is safe (the call cannot have had an effect).
   * `false` on an `execution` failure that came after the tool ran (its output could not be kept): it is not retried.
   */
  retryable?: boolean;
}

export type ToolResult<TOutput = unknown> = ToolSuccess<TOutput> | ToolFailure;

/**
 * A failure's text with the warning the model reads whenever a call that timed out may still have acted (`why` says
 * why it was not tried again): the executor's own timeouts and an activity Temporal stopped waiting for alike.
 */
export function withEffectWarning(error: string, why: string): string {
  return `${error}. It may still have had an effect: ${why}, so check before calling it again.`;
}
