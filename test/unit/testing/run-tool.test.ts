import { ApplicationFailure, CancelledFailure } from '@temporalio/common';
import { DefaultLogger } from '@temporalio/worker';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { runTool, startTool } from '../../../src/testing/run-tool.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import type { ToolContext } from '../../../src/tool/tool-context.js';

function recordingTool() {
  const contexts: ToolContext[] = [];
  const tool = defineTool({
    name: 'send_invoice',
    description: 'Send an invoice.',
    inputSchema: z.object({ customer: z.string(), amount: z.number().positive() }),
    execute: async (input, ctx) => {
      contexts.push(ctx);
      return { sent: true, ...input };
    },
  });
  return { tool, contexts };
}

/** A tool that runs until its call is cancelled; `started` resolves once `execute` runs. */
function toolThatWaitsForAbort() {
  const aborted: string[] = [];
  let markStarted: () => void = () => {};
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const tool = defineTool({
    name: 'wait_for_abort',
    description: 'Waits until cancelled.',
    inputSchema: z.object({}),
    execute: (_input, ctx) =>
      new Promise((resolve) => {
        ctx.signal.addEventListener('abort', () => {
          aborted.push(ctx.toolCallId ?? '');
          resolve({ aborted: true });
        });
        markStarted();
      }),
  });
  return { tool, started, aborted };
}

afterEach(() => {
  vi.useRealTimers();
});

describe('running one tool as a worker runs it, without a server', () => {
  it('gives execute the tenant, run, call and the idempotency key a run would', async () => {
    const { tool, contexts } = recordingTool();
    const result = await runTool(
      tool,
      { customer: 'c-1', amount: 12 },
      { tenantId: 'acme', userId: 'u1', runId: 'run_42', toolCallId: 'invoice', config: { currency: 'EUR' } },
    );
    expect(result).toEqual({
      success: true,
      toolName: 'send_invoice',
      toolCallId: 'invoice',
      data: { sent: true, customer: 'c-1', amount: 12 },
    });
    expect(contexts[0]).toMatchObject({
      tenantId: 'acme',
      userId: 'u1',
      runId: 'run_42',
      toolCallId: 'invoice',
      idempotencyKey: 'run_42/first-execution/invoice',
      config: { currency: 'EUR' },
    });
  });

  it('returns the validation failure the model would see and never calls execute', async () => {
    const { tool, contexts } = recordingTool();
    const result = await runTool(tool, { customer: 'c-1', amount: -3 });
    expect(result).toMatchObject({
      success: false,
      errorType: 'validation',
      issues: [{ path: 'amount', code: 'too_small' }],
    });
    expect(contexts).toHaveLength(0);
  });

  it('refuses input by the JSON Schema in its catalog, as the run does, before the tool could coerce it', async () => {
    const seen: unknown[] = [];
    const count = defineTool({
      name: 'count',
      description: 'Counts to n.',
      inputSchema: z.object({ n: z.coerce.number() }),
      execute: async (input) => {
        seen.push(input);
        return input;
      },
    });
    expect(await runTool(count, { n: '5' })).toEqual({
      success: false,
      toolName: 'count',
      toolCallId: 'call_1_0',
      errorType: 'validation',
      error: "Validation failed: Expected number, received string at 'n'",
      issues: [{ path: 'n', message: 'Expected number, received string', code: 'invalid_type' }],
      input: { n: '5' },
    });
    expect(seen).toEqual([]);
  });

  it('resolves secret references in the config for the tool and keeps their values out of its result', async () => {
    const echoToken = defineTool({
      name: 'echo_token',
      description: 'Returns the token it was given (a careless tool).',
      inputSchema: z.object({}),
      execute: async (_input, ctx) => ({ token: ctx.config['token'] }),
    });
    const result = await runTool(
      echoToken,
      {},
      { config: { token: { $secret: 'API_TOKEN' } }, secrets: { API_TOKEN: 's3cr3t' } },
    );
    expect(JSON.stringify(result)).not.toContain('s3cr3t');
    expect(result.success).toBe(true);
  });

  it('rejects with a retryable tool_execution_failed when the tool throws, as Temporal would see it', async () => {
    const broken = defineTool({
      name: 'broken',
      description: 'Always fails.',
      inputSchema: z.object({}),
      execute: () => {
        throw new Error('backend down');
      },
    });
    // The activity logs the failure at WARN, as a worker would; this test has no use for the line.
    const failure = await runTool(broken, {}, { logger: new DefaultLogger('ERROR') }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'tool_execution_failed', nonRetryable: false });
  });

  it.each([
    ['requires approval', { requiresApproval: true }],
    ['says so in its retry policy', { retry: { maximumAttempts: 1 } }],
  ])(
    'resolves to the execution failure a run records when a tool with one attempt (it %s) throws',
    async (_why, settings) => {
      const refund = defineTool({
        name: 'refund_order',
        description: 'Refund an order.',
        inputSchema: z.object({}),
        ...settings,
        execute: () => {
          throw new Error('boom');
        },
      });
      expect(await runTool(refund, {}, { logger: new DefaultLogger('ERROR') })).toEqual({
        success: false,
        toolName: 'refund_order',
        toolCallId: 'call_1_0',
        errorType: 'execution',
        error: 'Activity task failed: boom',
      });
    },
  );

  it('resolves to the execution failure a run records for a non-retryable failure (a missing secret)', async () => {
    const { tool, contexts } = recordingTool();
    const config = { token: { $secret: 'MISSING' } };
    const result = await runTool(tool, { customer: 'c-1', amount: 1 }, { config, logger: new DefaultLogger('ERROR') });
    expect(result).toMatchObject({ success: false, errorType: 'execution' });
    expect(result.error).toMatch(/^Activity task failed: The run's config refers to secret 'MISSING'/);
    expect(contexts).toHaveLength(0);
  });

  it('rejects a timed-out call of a tool with its own retry policy while attempts are left, as a run retries it', async () => {
    /** Sleeps past its 50 ms limit; the executor's timeout ends the call first. */
    const slow = (retry?: { maximumAttempts: number }) =>
      defineTool({
        name: 'slow_quote',
        description: 'Answers after a second.',
        inputSchema: z.object({}),
        timeoutMs: 50,
        ...(retry ? { retry } : {}),
        execute: (_input, ctx) =>
          new Promise((resolve) => {
            const answer = setTimeout(() => resolve({ quote: 1 }), 1_000);
            ctx.signal.addEventListener('abort', () => clearTimeout(answer));
          }),
      });
    const logger = new DefaultLogger('ERROR');
    const failure = await runTool(slow({ maximumAttempts: 3 }), {}, { logger }).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'tool_execution_failed', nonRetryable: false, details: ['timeout'] });

    // Without a retry policy the attempt that timed out may still be running: the model is told, nothing retries.
    const timedOut = await runTool(slow(), {}, { logger });
    expect(timedOut).toMatchObject({ success: false, errorType: 'timeout' });
    expect(timedOut.success || timedOut.error).toContain('it was not retried');

    // A policy of one attempt: that attempt is the last, so a run records the timeout, and so does runTool.
    const lastAttempt = await runTool(slow({ maximumAttempts: 1 }), {}, { logger });
    expect(lastAttempt).toMatchObject({ success: false, errorType: 'timeout' });
    expect(lastAttempt.success || lastAttempt.error).toContain('it was its last attempt');
  });

  it('aborts ctx.signal when the call is cancelled, and rejects with a CancelledFailure', async () => {
    const { tool, started, aborted } = toolThatWaitsForAbort();
    // #region cancel-a-running-tool
    const execution = startTool(tool, {}, { toolCallId: 'slow' });
    await started;
    execution.cancel();
    await expect(execution.result).rejects.toBeInstanceOf(CancelledFailure);
    expect(aborted).toEqual(['slow']);
    // #endregion cancel-a-running-tool
  });

  it('heartbeats once a second while the tool runs', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const { tool, started } = toolThatWaitsForAbort();
    const execution = startTool(tool, {});
    await started;
    vi.advanceTimersByTime(3_500);
    expect(execution.heartbeats).toBe(3);
    execution.cancel();
    await expect(execution.result).rejects.toBeInstanceOf(CancelledFailure);
  });
});
