import { MockActivityEnvironment } from '@temporalio/testing';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { approvalRuleTimeoutMs, askApprovalRule } from '../../../activities/approval-rule.js';
import { defineTool } from '../../../src/tool/define-tool.js';
import type { ApprovalRule } from '../../../src/tool/define-tool.js';

const context = { tenantId: 'acme', runId: 'run-1', toolCallId: 'call_1_0' };
const warnings: string[] = [];
const ignore = () => undefined;
const logger = {
  log: ignore,
  trace: ignore,
  debug: ignore,
  info: ignore,
  error: ignore,
  warn: (message: string) => warnings.push(message),
};

function payWith(requiresApproval: boolean | ApprovalRule<{ amount: number }>) {
  return defineTool({
    name: 'pay',
    description: 'Pay.',
    inputSchema: z.object({ amount: z.number() }),
    requiresApproval,
    execute: () => 'paid',
  });
}

/** Asks the rule inside an activity's context, as checkToolCallInput does. */
function ask(tool: ReturnType<typeof payWith>, amount: number): Promise<boolean> {
  return new MockActivityEnvironment({}, { logger }).run(() => askApprovalRule(tool, { amount }, context));
}

describe('an approval rule', () => {
  it('lets a call run unapproved only when it answers false, and gets who asks', async () => {
    const asked: unknown[] = [];
    const rule = ({ amount }: { amount: number }, who: unknown) => {
      asked.push(who);
      return amount > 100;
    };
    expect(await ask(payWith(rule), 50)).toBe(false);
    expect(await ask(payWith(rule), 500)).toBe(true);
    expect(asked[0]).toEqual(context);
    expect(
      await ask(
        payWith(async () => false),
        500,
      ),
    ).toBe(false);
  });

  it('asks a human when it throws (and says so in the log), answers other than false, or is no rule here', async () => {
    warnings.length = 0;
    expect(
      await ask(
        payWith(() => {
          throw new Error('limits service down');
        }),
        5,
      ),
    ).toBe(true);
    expect(warnings).toEqual(['Approval rule threw or did not answer; a human is asked']);
    expect(await ask(payWith((() => undefined) as unknown as ApprovalRule<{ amount: number }>), 5)).toBe(true);
    // Redeployed since the run's catalog: the tool on this worker always asks, or no longer does.
    expect(await ask(payWith(true), 5)).toBe(true);
    expect(await ask(payWith(false), 5)).toBe(true);
  });

  it('asks a human when it does not answer in time, rather than time the input check out and fail the run', async () => {
    warnings.length = 0;
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const asking = ask(
        payWith(() => new Promise<boolean>(() => undefined)),
        5,
      );
      await vi.advanceTimersByTimeAsync(approvalRuleTimeoutMs);
      expect(await asking).toBe(true);
      expect(warnings).toEqual(['Approval rule threw or did not answer; a human is asked']);
    } finally {
      vi.useRealTimers();
    }
  });
});
