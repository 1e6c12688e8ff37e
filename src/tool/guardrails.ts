import { errorMessage } from '../shared/error-message.js';
import type { ToolDefinition } from './define-tool.js';
import type { ToolContext } from './tool-context.js';

/** A guardrail's refusal; the model is told `Denied by guardrail: <reason>`. */
export interface GuardrailDenial {
  allow: false;
  reason: string;
}

/** What a `before` guardrail answers: nothing or `{ allow: true }` lets the call run. */
export type BeforeGuardrailVerdict = GuardrailDenial | { allow: true } | void;

/** What an `after` guardrail answers: `{ output }` replaces the output (to redact it), a denial rejects it. */
export type AfterGuardrailVerdict = GuardrailDenial | { allow: true } | { output: unknown } | void;

/**
 * Checks around a tool's `execute`, on a tool or on the executor (the executor's run first). A guardrail that
 * throws denies the call with the error's message.
 */
export interface ToolGuardrails<TInput = unknown, TOutput = unknown> {
  /** Runs after the input is validated and before `execute`. */
  before?(
    input: TInput,
    ctx: ToolContext,
    tool: ToolDefinition,
  ): BeforeGuardrailVerdict | Promise<BeforeGuardrailVerdict>;
  /** Runs on the output before it is serialised, so a redaction also shrinks it. */
  after?(
    output: TOutput,
    ctx: ToolContext,
    tool: ToolDefinition,
  ): AfterGuardrailVerdict | Promise<AfterGuardrailVerdict>;
}

/** The output that passed every `after` guardrail, possibly replaced by them. */
export interface GuardrailApproval {
  allow: true;
  output: unknown;
}

/** Runs the `before` guardrails in order and stops at the first denial. */
export async function runBeforeGuardrails(
  layers: ReadonlyArray<ToolGuardrails | undefined>,
  input: unknown,
  ctx: ToolContext,
  tool: ToolDefinition,
): Promise<GuardrailDenial | undefined> {
  for (const guardrails of layers) {
    if (!guardrails?.before) continue;
    const denial = toDenial(await ask(() => guardrails.before?.(input, ctx, tool)));
    if (denial) return denial;
  }
  return undefined;
}

/** Runs the `after` guardrails in order, each seeing the output the previous one let through. */
export async function runAfterGuardrails(
  layers: ReadonlyArray<ToolGuardrails | undefined>,
  output: unknown,
  ctx: ToolContext,
  tool: ToolDefinition,
): Promise<GuardrailApproval | GuardrailDenial> {
  let current = output;
  for (const guardrails of layers) {
    if (!guardrails?.after) continue;
    const seen = current;
    const verdict = await ask(() => guardrails.after?.(seen, ctx, tool));
    const denial = toDenial(verdict);
    if (denial) return denial;
    if (typeof verdict === 'object' && verdict !== null && 'output' in verdict) current = verdict.output;
  }
  return { allow: true, output: current };
}

async function ask<T>(guardrail: () => T | Promise<T>): Promise<T | GuardrailDenial> {
  try {
    return await guardrail();
  } catch (error) {
    return { allow: false, reason: errorMessage(error) };
  }
}

function toDenial(verdict: unknown): GuardrailDenial | undefined {
  if (typeof verdict !== 'object' || verdict === null || !('allow' in verdict) || verdict.allow !== false)
    return undefined;
  // JavaScript guardrails may leave the reason out; the model still needs a sentence.
  const reason =
    'reason' in verdict && typeof verdict.reason === 'string' && verdict.reason ? verdict.reason : 'no reason given';
  return { allow: false, reason };
}
