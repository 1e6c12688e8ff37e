import { boundIssues } from '../src/shared/payload-limits.js';
import { checkToolInputAsync } from '../src/shared/tool-input.js';
import type { ToolRegistry } from '../src/tool/tool-registry.js';
import type { ToolCallInputCheck, ToolInputVerdict } from './activity-types.js';
import { askApprovalRule } from './approval-rule.js';

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
    const check = await checkToolInputAsync(tool.inputSchema, call.input);
    if (check.success && call.approvalRuleContext) {
      const approvalNeeded = await askApprovalRule(tool, check.data, call.approvalRuleContext);
      return { valid: true, approvalNeeded, at: new Date().toISOString() };
    }
    if (check.success) return { valid: true, at };
    return { valid: false, errorType: 'validation', error: check.message, issues: boundIssues(check.issues), at };
  };
}
