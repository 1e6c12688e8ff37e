import { z } from 'zod';
import { maxTenantIdLength } from './run-ids.js';

let schema: ReturnType<typeof buildAgentRunInputSchema> | undefined;

/**
 * The most characters a prompt, a system message or one transcript message may hold: about 50 000 tokens, far
 * below Temporal's 2 MiB payload limit, so an oversized input is refused with its path before a run starts.
 */
export const maxPromptChars = 200_000;

/**
 * The shape of `AgentRunInput`, checked by the client and the HTTP API before a run starts and by the run itself.
 * Built on first use: the worker shares this module between runs (see `relaySharedWorkflowModules`) and freezes
 * what exists when it loads, and Zod schemas must stay extensible.
 */
export function agentRunInputSchema(): ReturnType<typeof buildAgentRunInputSchema> {
  schema ??= buildAgentRunInputSchema();
  return schema;
}

function buildAgentRunInputSchema() {
  const durationSchema = z.union([
    z.number().int().positive(),
    z
      .string()
      .regex(/^\s*\d+(\.\d+)?\s*(ms|milliseconds?|s|secs?|seconds?|m|mins?|minutes?|h|hrs?|hours?|d|days?)?\s*$/i, {
        message: "Expected a duration such as '30s', '15 minutes' or '24h'",
      }),
  ]);

  const textSchema = z.string().max(maxPromptChars, {
    message: `Too long: at most ${maxPromptChars} characters are accepted`,
  });

  const toolCallSchema = z.object({ id: z.string().min(1), name: z.string().min(1), input: z.unknown() });

  const transcriptMessageSchema = z.discriminatedUnion('role', [
    z.object({ role: z.literal('system'), content: textSchema }),
    z.object({ role: z.literal('user'), content: textSchema }),
    z.object({ role: z.literal('assistant'), content: textSchema, toolCalls: z.array(toolCallSchema).optional() }),
    z.object({
      role: z.literal('tool'),
      toolCallId: z.string(),
      toolName: z.string(),
      result: z.object({ success: z.boolean(), toolName: z.string() }).loose(),
    }),
  ]);

  return z
    .object({
      tenantId: z.string().min(1).max(maxTenantIdLength),
      userId: z.string().min(1).max(256).optional(),
      sessionId: z.string().min(1).max(256).optional(),
      model: z.string().regex(/^[^:\s]+:\S+$/, { message: "Expected 'provider:model', e.g. 'openai:gpt-4.1-mini'" }),
      prompt: textSchema.min(1).optional(),
      messages: z.array(transcriptMessageSchema).min(1).optional(),
      system: textSchema.optional(),
      maxSteps: z.number().int().min(1).max(1_000).optional(),
      approvalTimeout: durationSchema.optional(),
      tools: z.array(z.string().regex(/^[a-zA-Z0-9_-]{1,64}$/)).optional(),
      config: z.record(z.string(), z.unknown()).optional(),
      continueAsNewAfterSteps: z.number().int().min(1).optional(),
      // Below 4 KiB a single tool schema could not fit; above 1.5 MiB the model request would near Temporal's 2 MiB.
      maxTranscriptBytes: z.number().int().min(4_096).max(1_572_864).optional(),
      // Strict, so a misspelt setting is refused rather than silently ignored.
      modelSettings: z
        .strictObject({
          temperature: z.number().min(0).max(2).optional(),
          topP: z.number().gt(0).max(1).optional(),
          maxOutputTokens: z.number().int().min(1).max(1_000_000).optional(),
          seed: z.number().int().optional(),
          stopSequences: z.array(z.string().min(1).max(256)).max(16).optional(),
        })
        .optional(),
    })
    .refine((input) => input.prompt !== undefined || input.messages !== undefined, {
      message: 'Give a prompt or messages',
      path: ['prompt'],
    });
}
