import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';
import { buildPoliteTool, buildStuckTool, recordingLogger } from './build-tools.js';

afterEach(() => {
  vi.useRealTimers();
});

/** Whether `promise` has settled, and its value once it has; read it after the microtasks have run. */
function watch<T>(promise: Promise<T>): { settled: boolean; value?: T } {
  const state: { settled: boolean; value?: T } = { settled: false };
  void promise.then((value) => Object.assign(state, { settled: true, value }));
  return state;
}

describe('ToolExecutor timeouts', () => {
  it('answers timeout quickly for a tool that ignores its signal, and aborts ctx.signal', async () => {
    vi.useFakeTimers();
    const seen: { signal?: AbortSignal } = {};
    const executor = new ToolExecutor(new ToolRegistry([buildStuckTool({ timeoutMs: 30, seen })]));

    const call = watch(executor.executeCall({ id: 'call_slow', name: 'stuck', arguments: {} }));
    // Fake time stands still until advanced: the tool has started, and the 30 ms have not begun to pass.
    await vi.advanceTimersByTimeAsync(0);
    expect(seen.signal?.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(29);
    expect(call.settled).toBe(false);
    // At its timeout, though the tool never settles and never looks at its signal.
    await vi.advanceTimersByTimeAsync(1);
    expect(call.settled).toBe(true);
    const result = call.value;

    expect(result).toStrictEqual({
      success: false,
      toolName: 'stuck',
      toolCallId: 'call_slow',
      error: "Tool 'stuck' timed out after 30 ms",
      errorType: 'timeout',
    });
    expect(seen.signal?.aborted).toBe(true);
    expect(seen.signal?.reason).toMatchObject({ name: 'TimeoutError' });
  });

  it('uses the executor default for a tool without its own timeout', async () => {
    const executor = new ToolExecutor(new ToolRegistry([buildStuckTool()]), { defaultTimeoutMs: 20 });

    await expect(executor.execute('stuck', {})).resolves.toMatchObject({
      errorType: 'timeout',
      error: "Tool 'stuck' timed out after 20 ms",
    });
  });

  it('prefers the tool timeout over the executor default', async () => {
    const executor = new ToolExecutor(new ToolRegistry([buildStuckTool({ timeoutMs: 15 })]), {
      defaultTimeoutMs: 60_000,
    });

    await expect(executor.execute('stuck', {})).resolves.toMatchObject({ error: "Tool 'stuck' timed out after 15 ms" });
  });

  it('lets a tool that honours its signal finish on time without a warning', async () => {
    const logger = recordingLogger();
    const polite = defineTool({
      name: 'polite',
      description: 'Waits for its signal.',
      inputSchema: z.object({}),
      timeoutMs: 20,
      execute: (_input, ctx) =>
        new Promise((_resolve, reject) =>
          ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error)),
        ),
    });

    const result = await new ToolExecutor(new ToolRegistry([polite])).execute('polite', {}, { context: { logger } });

    expect(result).toMatchObject({ errorType: 'timeout' });
    expect(logger.records).toEqual([]);
  });
});

describe('ToolExecutor cancellation', () => {
  it('answers cancelled once the tool stops, and aborts ctx.signal with the caller reason', async () => {
    const seen: { signal?: AbortSignal } = {};
    const executor = new ToolExecutor(new ToolRegistry([buildPoliteTool({ seen })]));
    const controller = new AbortController();

    const pending = executor.executeCall(
      { id: 'call_x', name: 'polite', arguments: {} },
      { signal: controller.signal },
    );
    await vi.waitFor(() => expect(seen.signal).toBeDefined());
    controller.abort(new Error('run cancelled'));

    await expect(pending).resolves.toStrictEqual({
      success: false,
      toolName: 'polite',
      toolCallId: 'call_x',
      error: "Tool 'polite' was cancelled",
      errorType: 'cancelled',
    });
    expect(seen.signal?.aborted).toBe(true);
    expect(seen.signal?.reason).toEqual(new Error('run cancelled'));
  });

  it('does not start a tool whose caller has already aborted', async () => {
    const seen: { signal?: AbortSignal } = {};
    const executor = new ToolExecutor(new ToolRegistry([buildStuckTool({ seen })]));

    const result = await executor.execute('stuck', {}, { signal: AbortSignal.abort() });

    expect(result).toMatchObject({ errorType: 'cancelled' });
    expect(seen.signal).toBeUndefined();
  });

  it('also listens to a signal passed in the context', async () => {
    const executor = new ToolExecutor(new ToolRegistry([buildPoliteTool()]));
    const controller = new AbortController();

    const pending = executor.execute('polite', {}, { context: { signal: controller.signal } });
    setTimeout(() => controller.abort(), 5);

    await expect(pending).resolves.toMatchObject({ errorType: 'cancelled' });
  });

  it('waits for a cancelled tool to end before it answers cancelled', async () => {
    // A transfer that lets its request finish when cancelled: the call is not over until it has.
    const done: string[] = [];
    const finishing = defineTool({
      name: 'transfer',
      description: 'Moves money; a request under way is let finish.',
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        await new Promise((resolve) => setTimeout(resolve, 200));
        done.push('transferred');
        return { transferred: true };
      },
    });
    const executor = new ToolExecutor(new ToolRegistry([finishing]));
    const controller = new AbortController();

    const pending = executor.execute('transfer', {}, { signal: controller.signal });
    setTimeout(() => controller.abort(), 10);

    await expect(pending).resolves.toMatchObject({ errorType: 'cancelled' });
    // Before, the answer came at the abort, and the transfer landed after the run had reported itself cancelled.
    expect(done).toEqual(['transferred']);
  });

  it('answers a cancelled tool that ignores its signal as cancelled at its own timeout, not before', async () => {
    vi.useFakeTimers();
    const seen: { signal?: AbortSignal } = {};
    const executor = new ToolExecutor(new ToolRegistry([buildStuckTool({ timeoutMs: 300, seen })]));
    const controller = new AbortController();

    const call = watch(executor.execute('stuck', {}, { signal: controller.signal }));
    await vi.advanceTimersByTimeAsync(10);
    expect(seen.signal?.aborted).toBe(false);
    controller.abort();
    expect(seen.signal?.aborted).toBe(true);
    // The tool ignores the abort: the call waits for it up to its timeout, 300 ms after it started.
    await vi.advanceTimersByTimeAsync(289);
    expect(call.settled).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    expect(call.settled).toBe(true);
    expect(call.value).toMatchObject({ errorType: 'cancelled' });
  });
});

describe('ToolExecutor output size', () => {
  function buildReportTool(text: string, maxResultBytes?: number) {
    return defineTool({
      name: 'report',
      description: 'Returns a long text.',
      inputSchema: z.object({}),
      ...(maxResultBytes === undefined ? {} : { maxResultBytes }),
      execute: () => ({ text }),
    });
  }

  it('keeps output at the limit as it is', async () => {
    const text = 'x'.repeat(100 - '{"text":""}'.length);

    const result = await new ToolExecutor(new ToolRegistry([buildReportTool(text, 100)])).execute('report', {});

    expect(result).toStrictEqual({ success: true, toolName: 'report', data: { text } });
  });

  it('cuts larger output to its JSON text at the tool limit, with the flag and the original size', async () => {
    const text = 'x'.repeat(1_000);

    const result = await new ToolExecutor(new ToolRegistry([buildReportTool(text, 100)])).executeCall({
      id: 'call_big',
      name: 'report',
      arguments: {},
    });

    expect(result).toStrictEqual({
      success: true,
      toolName: 'report',
      toolCallId: 'call_big',
      // The cut text as history stores it, a JSON string with its three quotes escaped, takes the 100 bytes.
      data: JSON.stringify({ text }).slice(0, 95),
      truncated: true,
      originalSize: 1_011,
    });
    expect(JSON.stringify((result as { data: string }).data)).toHaveLength(100);
  });

  it('uses the executor limit for tools without their own, 32 KiB unless set', async () => {
    const text = 'x'.repeat(40_000);
    const tools = new ToolRegistry([buildReportTool(text)]);

    const byDefault = await new ToolExecutor(tools).execute('report', {});
    const configured = await new ToolExecutor(tools, { maxResultBytes: 64 }).execute('report', {});

    expect(byDefault).toMatchObject({ truncated: true, originalSize: 40_011 });
    const storedLength = (result: typeof byDefault) => (result.success ? JSON.stringify(result.data).length : 0);
    expect(storedLength(byDefault)).toBe(32_768);
    expect(storedLength(configured)).toBe(64);
  });
});

describe('ToolExecutor error size', () => {
  it('cuts a failure’s message to the tool’s maxResultBytes as history stores it, saying how long it was', async () => {
    // A server that answers a failure with a whole HTML page, quotes and all.
    const page = `<html>${'<p class="x">Service unavailable</p>'.repeat(5_000)}</html>`;
    const failing = defineTool({
      name: 'flaky',
      description: 'Fails with a long message.',
      inputSchema: z.object({}),
      maxResultBytes: 1_000,
      execute: () => {
        throw new Error(page);
      },
    });

    // A logger of its own: the default one would print the page's first 8 KiB to the test's output.
    const result = await new ToolExecutor(new ToolRegistry([failing]), { logger: recordingLogger() }).execute(
      'flaky',
      {},
    );

    expect(result).toMatchObject({ success: false, errorType: 'execution' });
    const error = result.success ? '' : result.error;
    expect(Buffer.byteLength(JSON.stringify(error))).toBeLessThanOrEqual(1_000);
    expect(error).toMatch(new RegExp(`^<html><p class="x">.* … \\[cut from ${Buffer.byteLength(page)} bytes\\]$`));
  });
});

describe('ToolExecutor with a very long timeout', () => {
  it('treats a timeout beyond what Node timers hold as no limit rather than firing at once', async () => {
    const executor = new ToolExecutor(new ToolRegistry([buildPoliteTool()]), { defaultTimeoutMs: Infinity });
    const controller = new AbortController();

    const pending = executor.execute('polite', {}, { signal: controller.signal });
    await new Promise((resolve) => setTimeout(resolve, 20));
    controller.abort();

    await expect(pending).resolves.toMatchObject({ errorType: 'cancelled' });
  });
});

describe('ToolExecutor redact hook', () => {
  const token = 'tok-0123456789';
  const redact = <T>(value: T): T => JSON.parse(JSON.stringify(value).replaceAll(token, '[secret]')) as T;

  it('hides secrets before it cuts an output or a failure’s message, so no cut piece of one is left', async () => {
    const cutAt = (text: string) => `${'x'.repeat(50)}${text}${'y'.repeat(100)}`;
    const tools = new ToolRegistry([
      defineTool({
        name: 'echo',
        description: 'Echoes a token.',
        inputSchema: z.object({}),
        maxResultBytes: 60,
        execute: () => cutAt(token),
      }),
      defineTool({
        name: 'throws',
        description: 'Throws a token.',
        inputSchema: z.object({}),
        maxResultBytes: 90,
        execute: () => {
          throw new Error(cutAt(token));
        },
      }),
    ]);
    const executor = new ToolExecutor(tools, { logger: recordingLogger() });

    const output = await executor.execute('echo', {}, { redact });
    const failure = await executor.execute('throws', {}, { redact });

    expect(output).toMatchObject({ truncated: true, data: `"${'x'.repeat(50)}[secre` });
    expect(failure.error).toMatch(/^x{50}\[secret\]y+ … \[cut from 158 bytes\]$/);
  });

  it('logs a thrown error with secrets hidden in its name, message and stack, and without its cause', async () => {
    const logger = recordingLogger();
    const leaky = defineTool({
      name: 'leaky',
      description: 'Throws its token.',
      inputSchema: z.object({}),
      execute: () => {
        throw new Error(`token ${token} rejected`, { cause: new Error(`sent ${token}`) });
      },
    });

    await new ToolExecutor(new ToolRegistry([leaky]), { logger }).execute('leaky', {}, { redact });

    const [record] = logger.records;
    expect(record).toMatchObject({ level: 'warn', message: 'Tool execution failed' });
    const error = (record?.attributes as { error: Error }).error;
    expect(error).toMatchObject({ name: 'Error', message: 'token [secret] rejected' });
    expect(error.stack).toMatch(/^Error: token \[secret\] rejected\n {4}at /);
    expect(error.cause).toBeUndefined();
  });
});
