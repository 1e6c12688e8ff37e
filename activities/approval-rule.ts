import { log } from '@temporalio/activity';
import type { ApprovalRuleContext, ToolDefinition } from '../src/tool/define-tool.js';
import { errorMessage } from '../src/shared/error-message.js';
import { within } from '../src/shared/within.js';

/**
 * How long a rule may take to answer. The input check it runs in has 10 s an attempt; a rule that never answered
 * would time the check out three times and fail the run, where a human should be asked.
 */
export const approvalRuleTimeoutMs = 5_000;

/**
 * Whether this call of `tool` needs a human: its rule's answer, when its `requiresApproval` is one. Fails closed: a
 * tool whose definition on this worker is no rule (redeployed since the run's catalog), a rule that throws or does not
 * answer within {@link approvalRuleTimeoutMs}, and any answer but `false` ask a human; a throw or a rule too slow is
 * logged, since the rule's author should hear of it.
 */
export async function askApprovalRule(
  tool: ToolDefinition,
  input: unknown,
  context: ApprovalRuleContext,
): Promise<boolean> {
  const rule = tool.requiresApproval;
  if (typeof rule !== 'function') return true;
  try {
    const answering = Promise.resolve().then(() => rule(input, context));
    const tooSlow = `it did not answer within ${approvalRuleTimeoutMs} ms`;
    return (await within(answering, approvalRuleTimeoutMs, tooSlow)) !== false;
  } catch (error) {
    log.warn('Approval rule threw or did not answer; a human is asked', {
      toolName: tool.name,
      toolCallId: context.toolCallId,
      error: errorMessage(error),
    });
    return true;
  }
}
