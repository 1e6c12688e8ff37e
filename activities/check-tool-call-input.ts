import { Context, log } from '@temporalio/activity';
import { boundIssues } from '../src/shared/payload-limits.js';
import { argumentsAsGiven, failedCheck } from '../src/shared/tool-input.js';
import type { ToolInputCheck } from '../src/shared/tool-input.js';
import { errorMessage } from '../src/shared/error-message.js';
import { checkCallInput } from '../src/tool/timed-patterns.js';
import { takesInputAsGiven } from '../src/tool/tool-catalog.js';
import type { ToolRegistry } from '../src/tool/tool-registry.js';
import type { ToolCallInputCheck, ToolInputVerdict } from './activity-types.js';
import { askApprovalRule } from './approval-rule.js';
import { hasAttemptsLeft } from './attempts.js';

/**
 * The input-check activity, bound to one worker's registry: checks a call's input with the tool's own Zod schema
 * (refinements included) before a human is asked to approve it, since what the run checked in the workflow is only
 * the JSON Schema, and asks the tool's approval rule when the run sends its context.
 */
export function createCheckToolCallInput(registry: ToolRegistry) {
  return async function checkToolCallInput(call: ToolCallInputCheck): Promise<ToolInputVerdict> {
    const tool = registry.get(call.toolName);
    const at = new Date().toISOString();
    if (!tool) {
      const error = `Tool '${call.toolName}' is no longer offered by this worker`;
      return {
        valid: false,
        errorType: 'not_found',
        error,
        issues: [{ path: '', message: error, code: 'unknown_tool' }],
        at,
      };
    }
    const check = await checkCallInput(tool, call.input, { onInternalError: 'throw' }).catch((error: unknown) =>
      checkThatThrew(call.toolName, error),
    );
    if (check.success && call.approvalRuleContext) {
      // The rule judges what the tool will get: an MCP server's tool gets the call as given (tool-catalog.ts).
      const input: unknown = takesInputAsGiven(tool) ? argumentsAsGiven(call.input) : check.data;
      const approvalNeeded = await askApprovalRule(tool, input, call.approvalRuleContext);
      return { valid: true, approvalNeeded, at: new Date().toISOString() };
    }
    if (check.success) return { valid: true, at };
    return { valid: false, errorType: 'validation', error: check.message, issues: boundIssues(check.issues), at };
  };
}

/**
 * A refinement that threw (a lookup it makes could not reach its database, say) says nothing of the input: Temporal
 * tries the check again while attempts are left; on the last, the model is told the check failed, and the operator
 * is told why.
 */
function checkThatThrew(toolName: string, error: unknown): ToolInputCheck<never> {
  if (hasAttemptsLeft(Context.current())) throw error;
  log.warn('A tool’s input check threw on its last attempt; the model is told the check failed', {
    toolName,
    error: errorMessage(error),
  });
  return failedCheck(error);
}
