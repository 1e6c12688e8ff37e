import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createActivities } from '../../../activities/index.js';
import type { ExecuteToolInput } from '../../../activities/index.js';
import { secretResolutionTimeoutMs } from '../../../activities/execute-tool.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

describe('the tool activity’s progress heartbeats', () => {
  it('replace the values of the call’s secrets, as its result does', async () => {
    const chatty = defineTool({
      name: 'chatty',
      description: 'Reports progress that echoes its credentials.',
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        ctx.reportProgress?.({ progress: 1, total: 2, message: `signed in with ${String(ctx.config['token'])}` });
        return { echoed: ctx.config['token'] };
      },
    });
    const registry = new ToolRegistry([chatty]);
    const activities = createActivities({
      registry,
      executor: new ToolExecutor(registry),
      models: new ModelRegistry({}),
      secrets: { API_TOKEN: 'sk-live-0123456789' },
    });
    const environment = new MockActivityEnvironment(
      { activityType: 'executeTool', workflowType: 'agentRun' },
      { logger: new DefaultLogger('WARN') },
    );
    const heartbeats: unknown[] = [];
    environment.on('heartbeat', (details: unknown) => heartbeats.push(details));
    const call: ExecuteToolInput = {
      toolName: 'chatty',
      toolCallId: 'call_1_0',
      input: {},
      idempotencyKey: 'run_1/first-execution/call_1_0',
      tenantId: 'acme',
      runId: 'run_1',
      config: { token: { $secret: 'API_TOKEN' } },
    };

    const result = await environment.run((input: ExecuteToolInput) => activities.executeTool(input), call);

    expect(result).toMatchObject({ success: true, data: { echoed: '[secret]' } });
    expect(heartbeats).toContainEqual({ progress: 1, total: 2, message: 'signed in with [secret]' });
    expect(JSON.stringify(heartbeats)).not.toContain('sk-live-0123456789');
  });
});

describe('the tool activity’s secrets', () => {
  it('fail the attempt for Temporal to retry when they do not resolve in time, before the tool runs', async () => {
    let ran = false;
    const tool = defineTool({
      name: 'uses_token',
      description: 'Needs a token.',
      inputSchema: z.object({}),
      execute: () => {
        ran = true;
        return 'done';
      },
    });
    const registry = new ToolRegistry([tool]);
    const activities = createActivities({
      registry,
      executor: new ToolExecutor(registry),
      models: new ModelRegistry({}),
      // A secrets service that does not answer.
      secrets: () => new Promise<string>(() => undefined),
    });
    const environment = new MockActivityEnvironment(
      { activityType: 'executeTool', workflowType: 'agentRun' },
      { logger: new DefaultLogger('WARN') },
    );
    const call: ExecuteToolInput = {
      toolName: 'uses_token',
      toolCallId: 'call_1_0',
      input: {},
      idempotencyKey: 'run_1/first-execution/call_1_0',
      tenantId: 'acme',
      runId: 'run_1',
      config: { token: { $secret: 'API_TOKEN' } },
    };
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const attempt = environment.run((input: ExecuteToolInput) => activities.executeTool(input), call);
      const failed = expect(attempt).rejects.toThrow(
        `The call's secrets did not resolve within ${secretResolutionTimeoutMs} ms; the tool has not run`,
      );
      await vi.advanceTimersByTimeAsync(secretResolutionTimeoutMs);
      await failed;
      expect(ran).toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
