import { ActivityCancellationDetails, CancelledFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createExecuteTool } from '../../../activities/execute-tool.js';
import type { ExecuteToolInput, Recorded } from '../../../activities/index.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import { withEffectWarning } from '../../../src/shared/tool-result.js';
import type { ToolResult } from '../../../src/shared/tool-result.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

const call: ExecuteToolInput = {
  toolName: 'slow_transfer',
  toolCallId: 'call_1_0',
  input: {},
  idempotencyKey: 'run_test/first-execution/call_1_0',
  tenantId: 'acme',
  runId: 'run_test',
};

const ignore = () => undefined;
const quiet = { log: ignore, trace: ignore, debug: ignore, info: ignore, warn: ignore, error: ignore };

/** Why Temporal's worker cancels an activity, and the details it gives. */
type Cancellation = Parameters<MockActivityEnvironment['cancel']>;

const workerShutdown: Cancellation = ['WORKER_SHUTDOWN', new ActivityCancellationDetails({ workerShutdown: true })];
const runCancelled: Cancellation = ['CANCELLED', new ActivityCancellationDetails({ cancelRequested: true })];

/**
 * Runs the tool activity as Temporal's attempt `attempt` of 2, and cancels it for `reason` once the tool has begun.
 * The tool stops when its signal aborts, as a well-behaved tool does.
 */
async function cancelMidTool(attempt: number, cancellation: Cancellation): Promise<Recorded<ToolResult>> {
  let began: () => void = ignore;
  const beginning = new Promise<void>((resolve) => (began = resolve));
  const slowTransfer = defineTool({
    name: call.toolName,
    description: 'Sends money, slowly.',
    inputSchema: z.object({}),
    execute: (_input, ctx) =>
      new Promise((_resolve, reject) => {
        ctx.signal.addEventListener('abort', () => reject(ctx.signal.reason as Error));
        began();
      }),
  });
  const executeTool = createExecuteTool({
    executor: new ToolExecutor(new ToolRegistry([slowTransfer])),
    secrets: undefined,
    payloadStore: createMemoryPayloadStore(),
    keepsLargePayloads: false,
  });
  const environment = new MockActivityEnvironment({ attempt, retryPolicy: { maximumAttempts: 2 } }, { logger: quiet });
  const running: Promise<Recorded<ToolResult>> = environment.run(executeTool, call);
  await beginning;
  environment.cancel(...cancellation);
  return running;
}

describe('a tool cut short by its worker shutting down', () => {
  it('tells the model on the last attempt that the call may still have had an effect', async () => {
    const result = await cancelMidTool(2, workerShutdown);
    expect(result).toMatchObject({
      success: false,
      toolName: 'slow_transfer',
      errorType: 'execution',
      error: withEffectWarning(
        "Tool 'slow_transfer' was cut short because its worker shut down",
        'it was its last attempt',
      ),
    });
  });

  it('is thrown as a cancellation while attempts are left, for Temporal to run it again on another worker', async () => {
    const failure = await cancelMidTool(1, workerShutdown).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CancelledFailure);
  });
});

describe('a tool cancelled by its run', () => {
  it('is thrown as a cancellation even on the last attempt, so the run records it as cancelled', async () => {
    const failure = await cancelMidTool(2, runCancelled).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(CancelledFailure);
    expect(failure).toMatchObject({ message: "Tool 'slow_transfer' was cancelled" });
  });
});
