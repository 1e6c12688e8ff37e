import { ApplicationFailure } from '@temporalio/common';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createExecuteTool } from '../../../activities/execute-tool.js';
import type { ExecuteToolInput, Recorded } from '../../../activities/index.js';
import { createMemoryPayloadStore } from '../../../src/store/memory-payload-store.js';
import type { ToolResult } from '../../../src/shared/tool-result.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

/** A tool that opted into timeout retries and only ends when its timeout aborts `ctx.signal`. */
const hanging = defineTool({
  name: 'hanging_write',
  description: 'Writes, and never answers in time.',
  inputSchema: z.object({}),
  timeoutMs: 20,
  retry: { maximumAttempts: 2 },
  execute: (_input, ctx) => new Promise((resolve) => ctx.signal.addEventListener('abort', () => resolve(null))),
});

const call: ExecuteToolInput = {
  toolName: hanging.name,
  toolCallId: 'call_1_0',
  input: {},
  idempotencyKey: 'run_test/first-execution/call_1_0',
  tenantId: 'acme',
  runId: 'run_test',
  retryTimeouts: true,
};

const ignore = () => undefined;
const quiet = { log: ignore, trace: ignore, debug: ignore, info: ignore, warn: ignore, error: ignore };

/** Runs the tool activity as Temporal's attempt `attempt` of 2. */
function attemptToRun(attempt: number): Promise<Recorded<ToolResult>> {
  const registry = new ToolRegistry([hanging]);
  const executeTool = createExecuteTool({
    executor: new ToolExecutor(registry),
    secrets: undefined,
    payloadStore: createMemoryPayloadStore(),
    keepsLargePayloads: false,
  });
  const environment = new MockActivityEnvironment({ attempt, retryPolicy: { maximumAttempts: 2 } }, { logger: quiet });
  return environment.run(executeTool, call);
}

describe('a tool that retries its timeouts', () => {
  it('throws a timeout for Temporal to retry while attempts are left', async () => {
    const failure = await attemptToRun(1).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(ApplicationFailure);
    expect(failure).toMatchObject({ type: 'tool_execution_failed', details: ['timeout'] });
  });

  it('reports a timeout on its last attempt as a timeout that may have had an effect', async () => {
    const result = await attemptToRun(2);
    expect(result).toMatchObject({ success: false, errorType: 'timeout' });
    expect(!result.success && result.error).toMatch(/timed out after 20 ms\. It may still have had an effect/);
  });
});
