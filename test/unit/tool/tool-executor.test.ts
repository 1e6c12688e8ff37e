import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import type { ToolContext } from '../../../src/tool/tool-context.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import { buildAddTool, recordingLogger } from './build-tools.js';

function executorFor(...tools: Parameters<ToolRegistry['register']>[0][]): ToolExecutor {
  return new ToolExecutor(new ToolRegistry(tools), { logger: recordingLogger() });
}

describe('ToolExecutor.execute', () => {
  it('returns exactly success, tool name and data', async () => {
    const result = await executorFor(buildAddTool()).execute('add', { a: 10, b: 20 });

    expect(result).toStrictEqual({ success: true, toolName: 'add', data: { result: 30 } });
  });

  it('answers not_found for an unknown tool, naming the tools there are', async () => {
    const result = await executorFor(buildAddTool()).execute('subtract', { a: 1, b: 2 });

    expect(result).toStrictEqual({
      success: false,
      toolName: 'subtract',
      error: "Tool 'subtract' not found; available tools: add",
      errorType: 'not_found',
    });
  });

  it('passes the parsed input to execute, with refinements, defaults and transforms applied', async () => {
    const received: unknown[] = [];
    const order = defineTool({
      name: 'order',
      description: 'Place an order.',
      inputSchema: z.object({
        sku: z.string().trim().toUpperCase(),
        quantity: z.number().int().default(1),
        note: z.string().optional(),
        price: z
          .string()
          .transform(Number)
          .refine((price) => price > 0, 'Price must be positive'),
      }),
      execute: (input) => {
        received.push(input);
        return 'ok';
      },
    });
    const executor = executorFor(order);

    await expect(executor.execute('order', { sku: ' ab-1 ', price: '9.5' })).resolves.toMatchObject({ success: true });
    expect(received).toEqual([{ sku: 'AB-1', quantity: 1, price: 9.5 }]);

    const refused = await executor.execute('order', { sku: 'x', price: '-2' });
    expect(refused).toMatchObject({
      errorType: 'validation',
      error: "Validation failed: Price must be positive at 'price'",
    });
    expect(received).toHaveLength(1);
  });

  it('awaits async refinements of the schema', async () => {
    const reserve = defineTool({
      name: 'reserve',
      description: 'Reserve a username.',
      inputSchema: z.object({
        username: z.string().refine(async (name) => Promise.resolve(name !== 'taken'), 'Taken'),
      }),
      execute: ({ username }) => ({ username }),
    });
    const executor = executorFor(reserve);

    await expect(executor.execute('reserve', { username: 'ada' })).resolves.toMatchObject({ success: true });
    await expect(executor.execute('reserve', { username: 'taken' })).resolves.toMatchObject({
      errorType: 'validation',
      error: "Validation failed: Taken at 'username'",
    });
  });

  it('reports a schema refinement that throws as a validation failure instead of throwing', async () => {
    const fragile = defineTool({
      name: 'fragile',
      description: 'Has a broken refinement.',
      inputSchema: z.object({
        code: z.string().refine(() => {
          throw new Error('lookup table missing');
        }),
      }),
      execute: () => 'unreachable',
    });

    const result = await executorFor(fragile).execute('fragile', { code: 'x' });

    expect(result).toMatchObject({
      success: false,
      errorType: 'validation',
      error: 'Validation failed: Input check failed (lookup table missing)',
    });
  });
});

describe('ToolExecutor.executeCall', () => {
  it('returns the call id with the result', async () => {
    const result = await executorFor(buildAddTool()).executeCall(
      { id: 'call_abc123', name: 'add', arguments: { a: 15, b: 5 } },
      { context: { runId: 'run_999' } },
    );

    expect(result).toStrictEqual({ success: true, toolName: 'add', toolCallId: 'call_abc123', data: { result: 20 } });
  });

  it('returns invalid input to the model with the issues and never runs execute', async () => {
    let calls = 0;
    const addTool = buildAddTool();
    const counted = defineTool({
      ...addTool,
      execute: (input) => {
        calls += 1;
        return addTool.execute(input, undefined as never);
      },
    });

    const result = await executorFor(counted).executeCall({
      id: 'call_fail',
      name: 'add',
      arguments: { a: 'not-a-number', b: 5 },
    });

    expect(result).toStrictEqual({
      success: false,
      toolName: 'add',
      toolCallId: 'call_fail',
      error: "Validation failed: Expected number, received string at 'a'",
      errorType: 'validation',
      issues: [{ path: 'a', message: 'Expected number, received string', code: 'invalid_type' }],
      input: { a: 'not-a-number', b: 5 },
    });
    expect(calls).toBe(0);
  });

  it('joins several issues with semicolons', async () => {
    const result = await executorFor(buildAddTool()).executeCall({ name: 'add', arguments: { a: true } });

    expect(result).toMatchObject({
      error: "Validation failed: Expected number, received boolean at 'a'; Required at 'b'",
    });
  });

  it('writes nested paths the way JavaScript reads them', async () => {
    const checkout = defineTool({
      name: 'checkout',
      description: 'Buy the cart.',
      inputSchema: z.object({ items: z.array(z.object({ sku: z.string(), price: z.number().positive() })) }),
      execute: () => 'bought',
    });
    const items = [
      { sku: 'a', price: 1 },
      { sku: 'b', price: 2 },
      { sku: 'c', price: '3' },
    ];

    const result = await executorFor(checkout).executeCall({ name: 'checkout', arguments: { items } });

    expect(result).toMatchObject({
      errorType: 'validation',
      error: "Validation failed: Expected number, received string at 'items[2].price'",
      issues: [{ path: 'items[2].price' }],
    });
  });

  it('reads arguments sent as a JSON string', async () => {
    const result = await executorFor(buildAddTool()).executeCall({
      id: 'call_json',
      name: 'add',
      arguments: '{"a":1,"b":2}',
    });

    expect(result).toStrictEqual({ success: true, toolName: 'add', toolCallId: 'call_json', data: { result: 3 } });
  });

  it('echoes the parsed JSON string arguments when they fail the schema', async () => {
    const result = await executorFor(buildAddTool()).executeCall({ name: 'add', arguments: '{"a":"1","b":2}' });

    expect(result).toMatchObject({ errorType: 'validation', input: { a: '1', b: 2 } });
  });

  it('reports malformed JSON arguments as a validation failure with the raw text', async () => {
    const result = await executorFor(buildAddTool()).executeCall({
      id: 'call_bad',
      name: 'add',
      arguments: '{"a": 1,',
    });

    expect(result).toMatchObject({
      success: false,
      toolCallId: 'call_bad',
      errorType: 'validation',
      error: expect.stringMatching(/^Validation failed: Arguments are not valid JSON \(/) as unknown,
      issues: [{ path: '', code: 'invalid_json' }],
      input: '{"a": 1,',
    });
  });

  it('turns an Error thrown by the tool into an execution failure with its message, and logs it', async () => {
    const logger = recordingLogger();
    const failing = defineTool({
      name: 'failing',
      description: 'Always fails.',
      inputSchema: z.object({}),
      execute: () => {
        throw new Error('upstream returned 503');
      },
    });

    const result = await executorFor(failing).executeCall(
      { id: 'call_1', name: 'failing', arguments: {} },
      { context: { logger } },
    );

    expect(result).toStrictEqual({
      success: false,
      toolName: 'failing',
      toolCallId: 'call_1',
      error: 'upstream returned 503',
      errorType: 'execution',
    });
    expect(logger.records).toMatchObject([{ level: 'warn', message: 'Tool execution failed' }]);
  });

  it.each([
    ['a string', 'plain text', 'plain text'],
    ['an object', { code: 42 }, '{"code":42}'],
    ['undefined', undefined, 'undefined'],
  ])('turns %s thrown by the tool into an execution failure', async (_label, thrown, message) => {
    const throwing = defineTool({
      name: 'throwing',
      description: 'Throws something odd.',
      inputSchema: z.object({}),
      execute: async () => {
        await Promise.resolve();
        throw thrown;
      },
    });

    await expect(executorFor(throwing).execute('throwing', {})).resolves.toStrictEqual({
      success: false,
      toolName: 'throwing',
      error: message,
      errorType: 'execution',
    });
  });

  it.each([
    ['a function', () => ({ callback: () => 1 }), "'callback' is a function"],
    ['a BigInt', () => ({ total: 10n }), 'BigInt'],
    [
      'a cycle',
      () => {
        const node: Record<string, unknown> = {};
        node.self = node;
        return node;
      },
      'circular',
    ],
  ])('fails with a clear message when the output holds %s', async (_label, produce, reason) => {
    const odd = defineTool({
      name: 'odd',
      description: 'Returns odd output.',
      inputSchema: z.object({}),
      execute: produce,
    });

    const result = await executorFor(odd).execute('odd', {});

    expect(result).toMatchObject({
      success: false,
      errorType: 'execution',
      error: expect.stringMatching(/^Output is not JSON-serialisable: /) as unknown,
      // The tool ran: a retry would run it again.
      retryable: false,
    });
    expect(result.success ? '' : result.error).toContain(reason);
    expect(result.success ? '' : result.error).toContain('The tool ran, so it was not retried');
  });

  it('returns the JSON form of the output, as history and the model will see it', async () => {
    const when = defineTool({
      name: 'when',
      description: 'Tell the time.',
      inputSchema: z.object({}),
      execute: () => ({ at: new Date('2025-01-02T03:04:05.000Z'), missing: undefined }),
    });

    await expect(executorFor(when).execute('when', {})).resolves.toStrictEqual({
      success: true,
      toolName: 'when',
      data: { at: '2025-01-02T03:04:05.000Z' },
    });
  });

  it('never throws, even for a call object a JavaScript caller got wrong', async () => {
    const executor = executorFor(buildAddTool());

    const result = await executor.execute('add', { a: 1, b: 2 }, { signal: {} as AbortSignal });

    expect(result).toMatchObject({ success: false, errorType: 'execution' });
  });
});

describe('ToolExecutor context', () => {
  function contextProbe() {
    const seen: ToolContext[] = [];
    const probe = defineTool({
      name: 'probe',
      description: 'Reports its context.',
      inputSchema: z.object({}),
      execute: (_input, ctx) => {
        seen.push(ctx);
        return 'seen';
      },
    });
    return { probe, seen };
  }

  it('fills in the defaults for a call without context', async () => {
    const { probe, seen } = contextProbe();

    await new ToolExecutor(new ToolRegistry([probe])).execute('probe', {});

    const [ctx] = seen;
    expect(ctx).toMatchObject({ tenantId: 'default', config: {} });
    expect(ctx?.userId).toBeUndefined();
    expect(ctx?.toolCallId).toBeUndefined();
    expect(ctx?.idempotencyKey).toBeUndefined();
    expect(ctx?.signal).toBeInstanceOf(AbortSignal);
    expect(ctx?.signal.aborted).toBe(false);
    expect(Object.keys(ctx?.logger ?? {}).sort()).toEqual(['debug', 'error', 'info', 'warn']);
  });

  it('passes every context field through, with the call id as toolCallId', async () => {
    const { probe, seen } = contextProbe();
    const logger = recordingLogger();
    const context = {
      tenantId: 'acme',
      userId: 'user_1',
      sessionId: 'session_1',
      runId: 'run_999',
      idempotencyKey: 'wf_1:call_7',
      config: { region: 'eu' },
      logger,
    };

    await executorFor(probe).executeCall({ id: 'call_7', name: 'probe', arguments: {} }, { context });

    expect(seen[0]).toMatchObject({ ...context, toolCallId: 'call_7' });
    expect(seen[0]?.logger).toBe(logger);
  });

  it('gives tools a logger that names the tool and the call when the caller brings none', async () => {
    const logger = recordingLogger();
    const chatty = defineTool({
      name: 'chatty',
      description: 'Logs.',
      inputSchema: z.object({}),
      execute: (_input, ctx) => ctx.logger.info('looking up', { key: 'k' }),
    });

    await new ToolExecutor(new ToolRegistry([chatty]), { logger }).executeCall(
      { id: 'call_9', name: 'chatty', arguments: {} },
      { context: { runId: 'run_1' } },
    );

    expect(logger.records).toEqual([
      {
        level: 'info',
        message: 'looking up',
        attributes: { toolName: 'chatty', toolCallId: 'call_9', runId: 'run_1', key: 'k' },
      },
    ]);
  });
});
