import {
  ActivityCancellationType,
  ApplicationFailure,
  condition,
  ContinueAsNew,
  continueAsNew,
  allHandlersFinished,
  isCancellation,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  upsertMemo,
  upsertSearchAttributes,
  workflowInfo,
} from '@temporalio/workflow';
import type { ActivityOptions } from '@temporalio/workflow';
import { msToNumber } from '@temporalio/common/lib/time.js';
import type { Duration } from '@temporalio/common';
import type { RelayActivities } from '../activities/index.js';
import type { AgentRunInput, ApprovalDecision, ApprovalOutcome, RunResult } from '../src/shared/run-types.js';
import { relaySearchAttributes } from '../src/shared/search-attributes.js';
import { agentRunInputSchema } from '../src/shared/run-input-schema.js';
import { closedRunMemoKey, closedRunRecord } from '../src/shared/closed-run-record.js';
import { boundEchoedInput } from '../src/shared/payload-limits.js';
import { checkToolInput } from '../src/shared/tool-input.js';
import { compactTranscript, defaultMaxTranscriptBytes } from '../src/shared/transcript-budget.js';
import type { ToolCatalogEntry } from '../src/shared/tool-catalog.js';
import type { ToolFailure, ToolResult } from '../src/shared/tool-result.js';
import type { ProposedToolCall, ToolCall } from '../src/shared/transcript.js';
import { decideSignal, decideUpdate, eventsQuery, snapshotQuery } from './messages.js';
import { RunState } from './run-state.js';
import type { CarriedRunState } from './run-state.js';
import { ToolCallValidator } from './tool-call-validator.js';

// Both activities are short or heartbeat, so a worker that dies holding one costs seconds, not the full timeout.
const catalogActivityOptions = { startToCloseTimeout: '10 seconds', retry: { maximumAttempts: 5 } } as const;
const { snapshotToolCatalog } = proxyActivities<RelayActivities>(catalogActivityOptions);

// The catalog is read from the worker's own registry, so a local activity on the worker running the workflow does
// the same job without a round trip through the task queue (about a tenth of a short run's time on the dev server;
// bench/throughput.ts). Patched so that runs which snapshotted it as a regular activity replay as they were.
const catalogAsLocalActivityPatch = 'catalog-as-local-activity';
const { snapshotToolCatalog: snapshotToolCatalogLocally } =
  proxyLocalActivities<RelayActivities>(catalogActivityOptions);

const { callModel } = proxyActivities<RelayActivities>({
  startToCloseTimeout: '5 minutes',
  heartbeatTimeout: '10 seconds',
  retry: { initialInterval: '1 second', backoffCoefficient: 2, maximumInterval: '1 minute', maximumAttempts: 8 },
});

/** Default time a call may wait for a human decision. */
const defaultApprovalTimeout = '24h';

/**
 * One durable agent run: call the model, check every proposed tool call against the run's catalog, wait for a
 * human where a tool requires approval, execute the rest as activities, feed the results back, and repeat until
 * the model answers in text or the step budget is spent.
 */
export async function agentRun(input: AgentRunInput, carried?: CarriedRunState): Promise<RunResult> {
  checkRunInput(input);
  const run = new RunState(workflowInfo().workflowId, input, carried);
  const approvalTimeoutMs = msToNumber(input.approvalTimeout ?? defaultApprovalTimeout);
  let validator = new ToolCallValidator(run.catalog);
  registerHandlers(run, () => validator);

  try {
    if (!carried) {
      const catalogRequest = { ...(input.tools ? { tools: input.tools } : {}) };
      run.catalog = patched(catalogAsLocalActivityPatch)
        ? await snapshotToolCatalogLocally(catalogRequest)
        : await snapshotToolCatalog(catalogRequest);
      validator = new ToolCallValidator(run.catalog);
      run.emit({
        type: 'run_started',
        model: input.model,
        maxSteps: run.maxSteps,
        tools: run.catalog.map((tool) => tool.name),
      });
      publishSearchAttributes(run);
    }
    const stepsAtStart = run.step;

    for (;;) {
      if (run.step >= run.maxSteps) return finishRun(run, 'max_steps');
      run.step += 1;

      const compaction = compactTranscript(run.transcript, input.maxTranscriptBytes ?? defaultMaxTranscriptBytes);
      if (compaction) run.emit({ type: 'transcript_compacted', ...compaction });

      const response = await callModel.executeWithOptions({ summary: `model ${input.model}, step ${run.step}` }, [
        {
          model: input.model,
          messages: run.transcript,
          tools: modelTools(run.catalog),
          step: run.step,
          runId: run.runId,
          tenantId: input.tenantId,
          ...(input.modelSettings ? { settings: input.modelSettings } : {}),
        },
      ]);
      run.addUsage(response.usage);
      const proposed = response.toolCalls ?? [];
      run.emit({
        type: 'model_responded',
        ...(response.text !== undefined ? { text: response.text } : {}),
        toolCallCount: proposed.length,
        ...(response.usage ? { usage: response.usage } : {}),
        ...(response.finishReason ? { finishReason: response.finishReason } : {}),
      });

      if (proposed.length === 0) return finishRun(run, 'final_answer', response.text ?? '');

      const calls = assignCallIds(proposed, run.step);
      run.transcript.push({ role: 'assistant', content: response.text ?? '', toolCalls: calls });
      const results = await Promise.all(calls.map((call) => handleToolCall(run, validator, call, approvalTimeoutMs)));
      calls.forEach((call, index) => {
        run.transcript.push({
          role: 'tool',
          toolCallId: call.id,
          toolName: call.name,
          result: results[index] as ToolResult,
        });
      });
      // After a plain step status and pending count are what was last published; an upsert would only add a
      // history event a step (13 instead of 12, bench/history-size.ts). Patched so recorded runs replay as before.
      if (!patched(skipUnchangedSearchAttributesPatch) || searchAttributesChanged(run)) publishSearchAttributes(run);

      const stepsThisExecution = run.step - stepsAtStart;
      if (workflowInfo().continueAsNewSuggested || stepsThisExecution >= (input.continueAsNewAfterSteps ?? Infinity)) {
        await condition(allHandlersFinished);
        return await continueAsNew<typeof agentRun>(input, run.carry());
      }
    }
  } catch (error) {
    if (error instanceof ContinueAsNew) throw error;
    if (isCancellation(error)) {
      // Nothing here awaits, so the cancelled scope cannot interrupt recording the end of the run.
      run.finish('cancelled', 'cancelled');
      run.emit({ type: 'run_cancelled' });
      publishSearchAttributes(run);
      throw error;
    }
    const message = describeFailure(error);
    run.finish('failed', 'error', { error: message });
    run.emit({ type: 'run_failed', error: message });
    publishSearchAttributes(run);
    throw ApplicationFailure.create({ type: 'run_failed', message, nonRetryable: true, cause: asError(error) });
  } finally {
    recordClosedRun(run);
  }
}

const closedRunRecordPatch = 'closed-run-record';

/**
 * Leaves a closed run's final snapshot and newest events in its memo (encoded like every payload), so that reading
 * it needs no worker; a run that continues as new has no stop reason yet and records nothing.
 */
function recordClosedRun(run: RunState): void {
  if (run.stopReason === undefined || !patched(closedRunRecordPatch)) return;
  upsertMemo({ [closedRunMemoKey]: closedRunRecord(run.snapshot(), run.eventsAfter(0)) });
}

function finishRun(run: RunState, stopReason: 'final_answer' | 'max_steps', output?: string): RunResult {
  run.finish('completed', stopReason, output !== undefined ? { output } : {});
  if (output !== undefined) run.transcript.push({ role: 'assistant', content: output });
  run.emit({ type: 'run_completed', stopReason, ...(output !== undefined ? { output } : {}) });
  publishSearchAttributes(run);
  return {
    runId: run.runId,
    status: 'completed',
    stopReason,
    ...(output !== undefined ? { output } : {}),
    steps: run.step,
    usage: run.usage,
  };
}

/** Validate, wait for approval when the tool requires it, then execute: one call's whole path, as data. */
async function handleToolCall(
  run: RunState,
  validator: ToolCallValidator,
  call: ToolCall,
  approvalTimeoutMs: number,
): Promise<ToolResult> {
  const check = validator.check(call.name, call.input);
  const ids = { toolCallId: call.id, toolName: call.name };
  if (!check.valid) {
    // The call itself is in the transcript already; an echo of a huge input would only double it.
    const input = boundEchoedInput(call.input);
    run.emit({ type: 'tool_validation_failed', ...ids, error: check.error, issues: check.issues, input });
    return { success: false, ...ids, error: check.error, errorType: check.errorType, issues: check.issues, input };
  }
  run.emit({ type: 'tool_call_validated', ...ids, input: check.input, requiresApproval: check.entry.requiresApproval });

  let input = check.input;
  if (check.entry.requiresApproval) {
    const approval = await awaitApproval(run, call, check.input, approvalTimeoutMs);
    if (!approval.approved) return approval.failure;
    input = approval.input;
  }
  return executeToolCall(run, check.entry, call, input);
}

type ApprovalWait = { approved: true; input: unknown } | { approved: false; failure: ToolFailure };

async function awaitApproval(run: RunState, call: ToolCall, input: unknown, timeoutMs: number): Promise<ApprovalWait> {
  const ids = { toolCallId: call.id, toolName: call.name };
  const requestedAt = new Date();
  const expiresAt = new Date(requestedAt.getTime() + timeoutMs).toISOString();
  run.awaitApproval({ ...ids, input, step: run.step, requestedAt: requestedAt.toISOString(), expiresAt });
  run.emit({ type: 'tool_awaiting_approval', ...ids, input, expiresAt });
  publishSearchAttributes(run);

  const decidedInTime = await condition(() => run.decisionFor(call.id) !== undefined, timeoutMs);
  const decision = run.decisionFor(call.id);
  run.settleApproval(call.id);
  publishSearchAttributes(run);

  if (!decidedInTime || !decision) {
    run.emit({ type: 'tool_approval_timed_out', ...ids, expiresAt });
    const error = `No decision on this call before ${expiresAt}: it was not executed.`;
    return { approved: false, failure: { success: false, ...ids, error, errorType: 'approval_timeout' } };
  }
  if (!decision.approved) {
    const error = 'A human rejected this call: it was not executed.';
    return { approved: false, failure: { success: false, ...ids, error, errorType: 'rejected' } };
  }
  return { approved: true, input: decision.input };
}

async function executeToolCall(
  run: RunState,
  entry: ToolCatalogEntry,
  call: ToolCall,
  input: unknown,
): Promise<ToolResult> {
  const ids = { toolCallId: call.id, toolName: call.name };
  const { executeTool } = proxyActivities<RelayActivities>(toolActivityOptions(entry));
  let result: ToolResult;
  try {
    result = await executeTool.executeWithOptions({ summary: `tool ${call.name} (${call.id})` }, [
      {
        toolName: call.name,
        toolCallId: call.id,
        input,
        idempotencyKey: `${run.runId}/${call.id}`,
        tenantId: run.input.tenantId,
        ...(run.input.userId !== undefined ? { userId: run.input.userId } : {}),
        ...(run.input.sessionId !== undefined ? { sessionId: run.input.sessionId } : {}),
        runId: run.runId,
        config: run.input.config ?? {},
      },
    ]);
  } catch (error) {
    if (isCancellation(error)) throw error;
    result = { success: false, ...ids, error: describeFailure(error), errorType: 'execution' };
  }
  if (result.success) {
    run.emit({ type: 'tool_succeeded', ...ids, output: result.data, ...(result.truncated ? { truncated: true } : {}) });
  } else {
    run.emit({ type: 'tool_failed', ...ids, error: result.error, errorType: result.errorType });
  }
  return result;
}

/**
 * Tools that require approval are not retried unless they say so: a human approved one execution. The
 * activity waits for the tool to acknowledge a cancellation so that `ctx.signal` really fires before the
 * run reports itself cancelled.
 */
function toolActivityOptions(entry: ToolCatalogEntry): ActivityOptions {
  const retry = entry.retry ?? {};
  return {
    startToCloseTimeout: (entry.timeoutMs ?? 10 * 60_000) + 5_000,
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

function registerHandlers(run: RunState, currentValidator: () => ToolCallValidator): void {
  const validateDecision = (decision: ApprovalDecision): void => {
    const pending = run.pendingApproval(decision.toolCallId);
    if (decision.tenantId !== undefined && decision.tenantId !== run.input.tenantId) {
      throw ApplicationFailure.create({
        type: 'tenant_mismatch',
        message: 'This run belongs to another tenant',
        nonRetryable: true,
      });
    }
    if (!pending || run.isSettled(decision.toolCallId)) {
      const state = run.isSettled(decision.toolCallId)
        ? 'was already decided or has expired'
        : 'is not awaiting approval';
      throw ApplicationFailure.create({
        type: 'approval_not_pending',
        message: `Tool call '${decision.toolCallId}' ${state}`,
        nonRetryable: true,
      });
    }
    if (decision.decision !== 'approve' && decision.decision !== 'reject') {
      throw ApplicationFailure.create({
        type: 'invalid_input',
        message: "decision must be 'approve' or 'reject'",
        nonRetryable: true,
      });
    }
    if (decision.decision === 'approve' && decision.input !== undefined) {
      const check = currentValidator().check(pending.toolName, decision.input);
      if (!check.valid) {
        throw ApplicationFailure.create({
          type: 'approval_input_invalid',
          message: `Edited input rejected. ${check.error}`,
          details: [check.issues],
          nonRetryable: true,
        });
      }
    }
  };

  const applyDecision = (decision: ApprovalDecision): ApprovalOutcome => {
    const pending = run.pendingApproval(decision.toolCallId);
    if (!pending)
      throw ApplicationFailure.create({ type: 'approval_not_pending', message: 'Not pending', nonRetryable: true });
    const ids = { toolCallId: pending.toolCallId, toolName: pending.toolName };
    const who = {
      ...(decision.approver !== undefined ? { approver: decision.approver } : {}),
      ...(decision.reason !== undefined ? { reason: decision.reason } : {}),
    };
    if (decision.decision === 'reject') {
      run.applyDecision(decision.toolCallId, { approved: false, input: pending.input });
      run.emit({ type: 'tool_rejected', ...ids, ...who });
      return { ...ids, decision: 'reject' };
    }
    const edited = decision.input !== undefined;
    const check = edited ? currentValidator().check(pending.toolName, decision.input) : undefined;
    const input = check?.valid ? check.input : pending.input;
    run.applyDecision(decision.toolCallId, { approved: true, input });
    run.emit({ type: 'tool_approved', ...ids, ...who, input, edited });
    return { ...ids, decision: 'approve', input };
  };

  setHandler(decideUpdate, applyDecision, {
    validator: validateDecision,
    description:
      'Approve or reject a tool call awaiting approval: { toolCallId, decision: "approve"|"reject", approver, reason, input? }',
  });
  setHandler(
    decideSignal,
    (decision) => {
      try {
        validateDecision(decision);
      } catch (error) {
        log.warn('Ignored an invalid approval signal', {
          toolCallId: decision.toolCallId,
          reason: describeFailure(error),
        });
        return;
      }
      applyDecision(decision);
    },
    { description: 'The approval decision as a signal (fire and forget): same payload as the "decide" update' },
  );
  setHandler(snapshotQuery, () => run.snapshot(), {
    description: 'The run now: status, step, pending approvals with expiry, usage, output',
  });
  setHandler(eventsQuery, (after) => run.eventsAfter(after ?? 0), {
    description: 'The run event log after a sequence number',
  });
}

const skipUnchangedSearchAttributesPatch = 'skip-unchanged-search-attributes';

/** What each run last published (status and pending count; tenant and user never change within a run). */
const publishedSearchAttributes = new WeakMap<RunState, string>();

function searchAttributesChanged(run: RunState): boolean {
  return publishedSearchAttributes.get(run) !== `${run.status}/${run.pendingCount}`;
}

function publishSearchAttributes(run: RunState): void {
  publishedSearchAttributes.set(run, `${run.status}/${run.pendingCount}`);
  upsertSearchAttributes([
    { key: relaySearchAttributes.tenant, value: run.input.tenantId },
    ...(run.input.userId ? [{ key: relaySearchAttributes.user, value: run.input.userId }] : []),
    { key: relaySearchAttributes.status, value: run.status },
    { key: relaySearchAttributes.pendingApprovals, value: run.pendingCount },
  ]);
}

function modelTools(catalog: readonly ToolCatalogEntry[]) {
  return catalog.map(({ name, description, inputSchema }) => ({ name, description, inputSchema }));
}

/** Tool names longer than this are cut before they reach events, ids and the transcript. */
const maxToolNameEchoed = 128;

/** Gives every call a unique id: the model's own when it sent a fresh one, `call_<step>_<index>` otherwise. */
function assignCallIds(proposed: readonly ProposedToolCall[], step: number): ToolCall[] {
  const seen = new Set<string>();
  return proposed.map((call, index) => {
    const candidate = typeof call.id === 'string' && call.id.length > 0 && call.id.length <= 128 ? call.id : undefined;
    const id = candidate && !seen.has(candidate) ? candidate : `call_${step}_${index}`;
    seen.add(id);
    const name = typeof call.name === 'string' ? call.name : String(call.name);
    // No tool name is longer than 64 characters, so a longer one fails validation just the same when cut.
    return { id, name: name.length > maxToolNameEchoed ? name.slice(0, maxToolNameEchoed) : name, input: call.input };
  });
}

function checkRunInput(input: AgentRunInput): void {
  const check = checkToolInput(agentRunInputSchema(), input);
  if (!check.success) {
    throw ApplicationFailure.create({
      type: 'invalid_input',
      message: `Invalid run input. ${check.message}`,
      nonRetryable: true,
    });
  }
}

function describeFailure(error: unknown): string {
  if (error instanceof Error) {
    const cause = error.cause instanceof Error ? `: ${error.cause.message}` : '';
    return `${error.message}${cause}`;
  }
  return String(error);
}

function asError(error: unknown): Error | undefined {
  return error instanceof Error ? error : undefined;
}
