import {
  ActivityCancellationType,
  condition,
  isCancellation,
  proxyActivities,
  proxyLocalActivities,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { Duration } from '@temporalio/common';
import type { RelayActivities } from '../activities/index.js';
import { boundEchoedInput } from '../src/shared/payload-limits.js';
import { approvalHints, toolActivitySummary } from '../src/shared/tool-catalog.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { ToolFailure, ToolResult } from '../src/shared/tool-result.js';
import type { ToolCall } from '../src/shared/transcript.js';
import type { RunContext } from './run-context.js';
import { publishRunState } from './run-visibility.js';

const { checkToolCallInput } = proxyLocalActivities<RelayActivities>({
  startToCloseTimeout: '10 seconds',
  retry: { maximumAttempts: 3 },
});

/** Handles every call of one step at once; the results come back in call order. */
export function handleToolCalls(context: RunContext, calls: readonly ToolCall[]): Promise<ToolResult[]> {
  return Promise.all(calls.map((call) => handleToolCall(context, call)));
}

/** Validate, wait for approval when the tool requires it, then execute: one call's whole path, as data. */
async function handleToolCall(context: RunContext, call: ToolCall): Promise<ToolResult> {
  const { run } = context;
  const check = context.validator.check(call.name, call.input);
  const ids = { toolCallId: call.id, toolName: call.name };
  if (!check.valid) return refuseInput(context, call, check);
  run.emit({ type: 'tool_call_validated', ...ids, input: check.input, requiresApproval: check.entry.requiresApproval });
  if (!check.entry.requiresApproval) return executeToolCall(context, check.entry, call, check.input);

  if (context.exact) {
    // The JSON Schema passed; the tool's own schema (refinements) may still refuse it. A human is never asked to
    // approve an input the tool would refuse.
    const verdict = await run.waitOnHistory(checkToolCallInput({ toolName: call.name, input: check.input }));
    run.stampWithLocalActivity(verdict.at);
    if (!verdict.valid) return refuseInput(context, call, verdict);
  }
  const approval = await awaitApproval(context, check.entry, call, check.input);
  if (!approval.approved) return approval.failure;
  return executeToolCall(context, check.entry, call, approval.input);
}

/** Tells the model the call's input was refused; no activity runs. */
function refuseInput(
  context: RunContext,
  call: ToolCall,
  refusal: { errorType: 'validation' | 'not_found'; error: string; issues: ToolFailure['issues'] & object },
): ToolFailure {
  const ids = { toolCallId: call.id, toolName: call.name };
  // The call itself is in the transcript already; an echo of a huge input would only double it.
  const input = boundEchoedInput(call.input);
  const { error, errorType, issues } = refusal;
  context.run.emit({ type: 'tool_validation_failed', ...ids, error, issues, input });
  return { success: false, ...ids, error, errorType, issues, input };
}

type ApprovalWait = { approved: true; input: unknown } | { approved: false; failure: ToolFailure };

async function awaitApproval(
  context: RunContext,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
): Promise<ApprovalWait> {
  const { run } = context;
  const ids = { toolCallId: call.id, toolName: call.name };
  // Where the tool comes from and whether it may destroy data, shown to the approver (MCP tools).
  const hints = approvalHints(entry);
  const requestedAt = run.eventTime();
  const expiresAt = new Date(Date.parse(requestedAt) + context.approvalTimeoutMs).toISOString();
  run.awaitApproval({ ...ids, ...hints, input, step: run.step, requestedAt, expiresAt });
  run.callStarted(call, 'awaiting_approval');
  run.emit({ type: 'tool_awaiting_approval', ...ids, ...hints, input, expiresAt }, { at: requestedAt });
  publishRunState(run);

  const decided = () => run.approvals.isDecided(call.id);
  const decidedInTime = await run.waitOnHistory(
    context.exact
      ? condition(decided, context.approvalTimeoutMs, { summary: `approval of ${call.name} (${call.id})` })
      : condition(decided, context.approvalTimeoutMs),
  );
  // A decision claimed before the timeout is applied once its time is recorded.
  if (decided() && run.approvals.decisionFor(call.id) === undefined) {
    await run.waitOnHistory(condition(() => run.approvals.decisionFor(call.id) !== undefined));
  }
  // A decision the update accepted is the one applied, even when the timeout fired in the same activation.
  const decision = context.exact || decidedInTime ? run.approvals.decisionFor(call.id) : undefined;
  run.settleApproval(call.id);
  run.callEnded(call.id);
  publishRunState(run);

  if (!decision) {
    run.emit({ type: 'tool_approval_timed_out', ...ids, expiresAt });
    const error = `No decision on this call before ${expiresAt}: it was not executed.`;
    return { approved: false, failure: { success: false, ...ids, error, errorType: 'approval_timeout' } };
  }
  if (!decision.approved) {
    const reason = context.exact && decision.reason ? ` Their reason: ${decision.reason}` : '';
    const error = `A human rejected this call: it was not executed.${reason}`;
    return { approved: false, failure: { success: false, ...ids, error, errorType: 'rejected' } };
  }
  return { approved: true, input: decision.input };
}

async function executeToolCall(
  context: RunContext,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
): Promise<ToolResult> {
  const { run } = context;
  const ids = { toolCallId: call.id, toolName: call.name };
  const { executeTool } = proxyActivities<RelayActivities>(toolActivityOptions(entry));
  let result: ToolResult;
  run.callStarted(call, 'executing');
  try {
    result = await run.waitOnHistory(
      executeTool.executeWithOptions({ summary: toolActivitySummary(entry, call.id) }, [
        {
          toolName: call.name,
          toolCallId: call.id,
          input,
          idempotencyKey: idempotencyKeyFor(context, call),
          tenantId: run.input.tenantId,
          ...(run.input.userId !== undefined ? { userId: run.input.userId } : {}),
          ...(run.input.sessionId !== undefined ? { sessionId: run.input.sessionId } : {}),
          runId: run.runId,
          config: run.input.config ?? {},
          ...(context.exact ? { retryTimeouts: entry.retry !== undefined } : {}),
        },
      ]),
    );
  } catch (error) {
    if (isCancellation(error)) throw error;
    result = { success: false, ...ids, error: describeFailure(error), errorType: 'execution' };
  }
  run.callEnded(call.id);
  if (result.success) {
    run.emit({ type: 'tool_succeeded', ...ids, output: result.data, ...(result.truncated ? { truncated: true } : {}) });
  } else {
    run.emit({ type: 'tool_failed', ...ids, error: result.error, errorType: result.errorType });
  }
  return result;
}

/**
 * Unique to one call of one run: the run id alone repeats when a workflow id is used again, so the first
 * execution's Temporal run id (the same across continue-as-new) is part of it.
 */
function idempotencyKeyFor(context: RunContext, call: ToolCall): string {
  const { run } = context;
  return context.exact ? `${run.runId}/${workflowInfo().firstExecutionRunId}/${call.id}` : `${run.runId}/${call.id}`;
}

/** The grace the activity's own timeout leaves after the tool's, so the executor's timeout always ends it first. */
const activityTimeoutGraceMs = 5_000;

/**
 * Tools that require approval are not retried unless they say so: a human approved one execution. The
 * activity waits for the tool to acknowledge a cancellation so that `ctx.signal` really fires before the
 * run reports itself cancelled.
 */
function toolActivityOptions(entry: ToolCatalogEntry): ActivityOptions {
  const retry = entry.retry ?? {};
  return {
    startToCloseTimeout: (entry.timeoutMs ?? 10 * 60_000) + activityTimeoutGraceMs,
    heartbeatTimeout: '5 seconds',
    cancellationType: ActivityCancellationType.WAIT_CANCELLATION_COMPLETED,
    retry: {
      maximumAttempts: retry.maximumAttempts ?? (entry.requiresApproval ? 1 : 3),
      initialInterval: msToNumber((retry.initialInterval ?? '1 second') as Duration),
      backoffCoefficient: retry.backoffCoefficient ?? 2,
      maximumInterval: msToNumber((retry.maximumInterval ?? '30 seconds') as Duration),
    },
  };
}

/** An error's message and its cause's, for events and the model. */
export function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}
