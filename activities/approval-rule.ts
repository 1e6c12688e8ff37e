import { log } from '@temporalio/activity';
import type { ApprovalRuleContext, ToolDefinition } from '../src/tool/define-tool.js';
import { errorMessage } from '../src/tool/error-message.js';

/**
 * Whether this call of `tool` needs a human: its rule's answer, when its `requiresApproval` is one. Fails closed: a
 * tool whose definition on this worker is no rule (redeployed since the run's catalog), a rule that throws, and any
 * answer but `false` ask a human; a throw is logged, since the rule's author should hear of it.
 */
export async function askApprovalRule(
  tool: ToolDefinition,
  input: unknown,
  context: ApprovalRuleContext,
): Promise<boolean> {
  const rule = tool.requiresApproval;
  if (typeof rule !== 'function') return true;
  try {
    return (await rule(input, context)) !== false;
  } catch (error) {
    log.warn('Approval rule threw; a human is asked', {
      toolName: tool.name,
      toolCallId: context.toolCallId,
      error: errorMessage(error),
    });
    return true;
  }
}
