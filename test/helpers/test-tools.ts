import { z } from 'zod';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolSource } from '../../src/tool/tool-source.js';

/** Side effects the test tools performed, in order, so tests can count executions. */
export interface ToolLedger {
  transfers: Array<{ from: string; to: string; amount: number; idempotencyKey?: string }>;
  aborted: string[];
  started: string[];
}

export function createLedger(): ToolLedger {
  return { transfers: [], aborted: [], started: [] };
}

/** The tools most workflow tests use: pure ones, a money mover that needs approval, and slow ones. */
export function createTestTools(ledger: ToolLedger) {
  return [
    defineTool({
      name: 'add',
      description: 'Add two numbers.',
      inputSchema: z.object({ a: z.number(), b: z.number() }),
      execute: async ({ a, b }) => ({ result: a + b }),
    }),
    defineTool({
      name: 'transfer_funds',
      description: 'Move money between accounts.',
      inputSchema: z.object({ from: z.string(), to: z.string(), amount: z.number().positive() }),
      requiresApproval: true,
      execute: async (input, ctx) => {
        ledger.transfers.push({ ...input, ...(ctx.idempotencyKey ? { idempotencyKey: ctx.idempotencyKey } : {}) });
        return { status: 'done', ...input };
      },
    }),
    defineTool({
      name: 'echo_after',
      description: 'Echo a value after a delay.',
      inputSchema: z.object({ value: z.string(), delayMs: z.number().int().min(0).max(5_000) }),
      execute: async ({ value, delayMs }) => {
        await new Promise((resolve) => setTimeout(resolve, delayMs));
        return { value };
      },
    }),
    defineTool({
      name: 'wait_for_abort',
      description: 'Wait until cancelled.',
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        ledger.started.push(ctx.toolCallId ?? '');
        await new Promise<void>((resolve) => ctx.signal.addEventListener('abort', () => resolve(), { once: true }));
        ledger.aborted.push(ctx.toolCallId ?? '');
        return { aborted: true };
      },
    }),
    defineTool({
      name: 'repeat_text',
      description: 'Return a text repeated: a small call with a large output.',
      inputSchema: z.object({ text: z.string().max(100), times: z.number().int().min(1).max(10_000) }),
      execute: ({ text, times }) => ({ text: text.repeat(times) }),
    }),
  ];
}

/** A tool source with no tools that counts how often it is closed (an MCP server's connection or process, in use). */
export function countingCloses(closed: { count: number }): ToolSource {
  return {
    kind: 'tool-source',
    name: 'counting',
    open: async () => ({
      tools: [],
      close: async () => {
        closed.count += 1;
      },
    }),
  };
}
