import { DefaultLogger } from '@temporalio/worker';
import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createActivities } from '../../../activities/index.js';
import type { ExecuteToolInput } from '../../../activities/index.js';
import { secretResolutionTimeoutMs } from '../../../activities/execute-tool.js';
import { ModelRegistry } from '../../../src/model/model-registry.js';
import type { SecretSource } from '../../../src/security/resolve-secret-references.js';
import type { ToolDefinition } from '../../../src/tool/define-tool.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import { ToolExecutor } from '../../../src/tool/tool-executor.js';
import { ToolRegistry } from '../../../src/tool/tool-registry.js';

/**
 * Starts one call of `tool` through the worker's tool activity, its config's token a secret from `secrets`; returns
 * the attempt and the heartbeats it sends.
 */
function callWithTokenSecret(tool: ToolDefinition, secrets: SecretSource) {
  const registry = new ToolRegistry([tool]);
  const activities = createActivities({
    registry,
    executor: new ToolExecutor(registry),
    models: new ModelRegistry({}),
    secrets,
  });
  const environment = new MockActivityEnvironment(
    { activityType: 'executeTool', workflowType: 'agentRun' },
    { logger: new DefaultLogger('WARN') },
  );
  const heartbeats: unknown[] = [];
  environment.on('heartbeat', (details: unknown) => heartbeats.push(details));
  const call: ExecuteToolInput = {
    toolName: tool.name,
    toolCallId: 'call_1_0',
    input: {},
    idempotencyKey: 'run_1/first-execution/call_1_0',
    tenantId: 'acme',
    runId: 'run_1',
    config: { token: { $secret: 'API_TOKEN' } },
  };
  const attempt = environment.run((input: ExecuteToolInput) => activities.executeTool(input), call);
  return { attempt, heartbeats };
}

describe('the tool activity’s secrets', () => {
  it('are replaced in the progress it reports (heartbeat details), as in its result', async () => {
    const chatty = defineTool({
      name: 'chatty',
      description: 'Reports progress that echoes its credentials.',
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        ctx.reportProgress?.({ progress: 1, total: 2, message: `signed in with ${String(ctx.config['token'])}` });
        return { echoed: ctx.config['token'] };
      },
    });

    const { attempt, heartbeats } = callWithTokenSecret(chatty, { API_TOKEN: 'sk-live-0123456789' });

    expect(await attempt).toMatchObject({ success: true, data: { echoed: '[secret]' } });
    expect(heartbeats).toContainEqual({ progress: 1, total: 2, message: 'signed in with [secret]' });
    expect(JSON.stringify(heartbeats)).not.toContain('sk-live-0123456789');
  });

  it('fail the attempt for Temporal to retry when they do not resolve in time, before the tool runs', async () => {
    let ran = false;
    const usesToken = defineTool({
      name: 'uses_token',
      description: 'Needs a token.',
      inputSchema: z.object({}),
      execute: () => {
        ran = true;
        return 'done';
      },
    });
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      // A secrets service that does not answer.
      const { attempt } = callWithTokenSecret(usesToken, () => new Promise<string>(() => undefined));
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
