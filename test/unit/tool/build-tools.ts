import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import type { Logger } from '../../../src/tool/tool-context.js';

/** A logger that keeps its records, so tests can read them and stderr stays quiet. */
export function recordingLogger(): Logger & {
  records: Array<{ level: string; message: string; attributes?: unknown }>;
} {
  const records: Array<{ level: string; message: string; attributes?: unknown }> = [];
  const at =
    (level: string) =>
    (message: string, attributes?: Record<string, unknown>): void => {
      records.push({ level, message, attributes });
    };
  return { records, debug: at('debug'), info: at('info'), warn: at('warn'), error: at('error') };
}

export function buildAddTool() {
  return defineTool({
    name: 'add',
    description: 'Add two numbers.',
    inputSchema: z.object({ a: z.number(), b: z.number() }),
    execute: ({ a, b }) => ({ result: a + b }),
  });
}

/** A tool that runs until its signal aborts, then stops at once with the signal's reason, as a tool should. */
export function buildPoliteTool(options: { seen?: { signal?: AbortSignal } } = {}) {
  return defineTool({
    name: 'polite',
    description: 'Runs until it is cancelled.',
    inputSchema: z.object({}),
    execute: (_input, ctx) => {
      if (options.seen) options.seen.signal = ctx.signal;
      return new Promise<never>((_resolve, reject) =>
        ctx.signal.addEventListener('abort', () => reject(new Error('stopped: cancelled')), { once: true }),
      );
    },
  });
}

/** A tool that never settles and never looks at its signal, the worst case for timeouts and cancellation. */
export function buildStuckTool(options: { timeoutMs?: number; seen?: { signal?: AbortSignal } } = {}) {
  return defineTool({
    name: 'stuck',
    description: 'Never finishes.',
    inputSchema: z.object({}),
    ...(options.timeoutMs === undefined ? {} : { timeoutMs: options.timeoutMs }),
    execute: (_input, ctx) => {
      if (options.seen) options.seen.signal = ctx.signal;
      return new Promise<never>(() => undefined);
    },
  });
}
