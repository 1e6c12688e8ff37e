import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RelayError } from '../../src/shared/errors.js';
import { pendingApprovalsMemoKey } from '../../src/shared/pending-approvals-memo.js';
import type { ModelCall } from '../../src/model/model-provider.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { countScheduledActivities, eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { latch } from '../helpers/latch.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

async function startWorker(
  script: readonly ScriptedTurn[] | ((call: ModelCall) => ScriptedTurn),
  ledger = createLedger(),
) {
  const running = await kit.startWorker({
    tools: createTestTools(ledger),
    models: { scripted: scriptedModel(script) },
  });
  return { ...running, ledger };
}

function toolMessages(messages: readonly TranscriptMessage[]) {
  return messages.filter((message) => message.role === 'tool');
}

/** With RELAY_E_RECORD_HISTORIES=1, keeps the run's history as a replay fixture (test/replay replays them all). */
async function recordHistory(runId: string, name: string, firstExecution = false): Promise<void> {
  const handle = kit.temporal.workflow.getHandle(runId);
  const execution = firstExecution ? (await handle.describe()).raw.workflowExecutionInfo?.firstRunId : undefined;
  await recordHistoryIfRequested(
    execution ? kit.temporal.workflow.getHandle(runId, execution) : handle,
    currentHistoryFile(name),
  );
}

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/** The ids of the calls the run keeps in its memo as waiting for a human (what the approvals list reads), sorted. */
async function callsWaitingInMemo(runId: string): Promise<string[]> {
  const memo = (await kit.temporal.workflow.getHandle(runId).describe()).memo ?? {};
  const kept = memo[pendingApprovalsMemoKey] as { approvals: Array<{ toolCallId: string }> } | undefined;
  return (kept?.approvals.map((approval) => approval.toolCallId) ?? []).sort();
}

/**
 * The event that closed each of the run's tool activities (`executeTool`) and the one that closed the run, named by
 * type, in history's order.
 */
async function closingEventsOfToolActivity(runId: string): Promise<string[]> {
  const events = (await kit.temporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
  const toolActivities = new Set(
    events
      .filter((event) => event.activityTaskScheduledEventAttributes?.activityType?.name === 'executeTool')
      .map((event) => String(event.eventId)),
  );
  return events.flatMap((event) => {
    const activityClosed =
      event.activityTaskCompletedEventAttributes ??
      event.activityTaskFailedEventAttributes ??
      event.activityTaskCanceledEventAttributes ??
      event.activityTaskTimedOutEventAttributes;
    const runClosed =
      event.workflowExecutionCompletedEventAttributes ??
      event.workflowExecutionFailedEventAttributes ??
      event.workflowExecutionCanceledEventAttributes;
    if (!runClosed && !(activityClosed && toolActivities.has(String(activityClosed.scheduledEventId)))) return [];
    const attributes = Object.keys(event).find((key) => key.endsWith('EventAttributes')) ?? '';
    return [attributes.replace(/EventAttributes$/, '').replace(/^./, (first) => first.toUpperCase())];
  });
}

describe('agentRun', () => {
  it('executes a valid tool call and completes with the model answer', async () => {
    const { client, stop } = await startWorker([
      { toolCalls: [{ id: 'c1', name: 'add', input: { a: 2, b: 3 } }] },
      { text: 'The sum is 5.' },
    ]);
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'What is 2 + 3?' });
      const result = await client.result(runId);
      expect(result).toMatchObject({
        status: 'completed',
        stopReason: 'final_answer',
        output: 'The sum is 5.',
        steps: 2,
      });
      const events = await client.events(runId);
      expect(eventTypes(events)).toEqual([
        'run_started',
        'model_responded',
        'tool_call_validated',
        'tool_succeeded',
        'model_responded',
        'run_completed',
      ]);
      expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6]);
      expect(events[3]).toMatchObject({ toolCallId: 'call_1_0', toolName: 'add', output: { result: 5 } });
      const snapshot = await client.getRun(runId);
      expect(snapshot).toMatchObject({
        status: 'completed',
        stopReason: 'final_answer',
        step: 2,
        output: 'The sum is 5.',
      });
      expect(snapshot.usage.inputTokens).toBeGreaterThan(0);
      expect(await client.events(runId, { after: 4 })).toHaveLength(2);
      await recordHistory(runId, 'valid-call');
    } finally {
      await stop();
    }
  });

  it('returns the Zod issues to the model and schedules no activity, then runs the corrected call', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker((call) => {
      seenByModel.push(call.messages);
      if (call.step === 1) return { toolCalls: [{ id: 'bad', name: 'add', input: { a: 'not-a-number', b: 5 } }] };
      if (call.step === 2) return { toolCalls: [{ id: 'good', name: 'add', input: '{"a": 1, "b": 5}' }] };
      return { text: 'done' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'add' });
      await client.result(runId);
      const feedback = toolMessages(seenByModel[1] ?? [])[0];
      expect(feedback).toMatchObject({
        role: 'tool',
        toolCallId: 'call_1_0',
        result: {
          success: false,
          errorType: 'validation',
          error: "Validation failed: Expected number, received string at 'a'",
          issues: [{ path: 'a' }],
          input: { a: 'not-a-number', b: 5 },
        },
      });
      const events = await client.events(runId);
      expect(events.find((event) => event.type === 'tool_validation_failed')).toMatchObject({ toolCallId: 'call_1_0' });
      expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(1);
      await recordHistory(runId, 'invalid-input-retry');
    } finally {
      await stop();
    }
  });

  it('returns a field the tool would drop to the model, so no event records a field the tool never saw', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker((call) => {
      seenByModel.push(call.messages);
      if (call.step === 1) return { toolCalls: [{ id: 'extra', name: 'add', input: { a: 1, b: 5, dry_run: true } }] };
      if (call.step === 2) return { toolCalls: [{ id: 'plain', name: 'add', input: { a: 1, b: 5 } }] };
      return { text: 'done' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'add' });
      await client.result(runId);

      expect(toolMessages(seenByModel[1] ?? [])[0]?.result).toMatchObject({
        success: false,
        errorType: 'validation',
        error: "Validation failed: Not a field of the schema at 'dry_run'",
        issues: [{ path: 'dry_run', code: 'unrecognized_keys' }],
      });
      const validated = (await client.events(runId)).filter((event) => event.type === 'tool_call_validated');
      expect(validated.map((event) => ('input' in event ? event.input : undefined))).toEqual([{ a: 1, b: 5 }]);
      expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(1);
    } finally {
      await stop();
    }
  });

  it('tells the model a tool whose worker stopped answering mid-call may still have had an effect', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const charge = defineTool({
      name: 'charge',
      description: 'Charge a card.',
      inputSchema: z.object({ cents: z.number() }),
      retry: { maximumAttempts: 1 },
      execute: ({ cents }) => ({ charged: cents }),
    });
    // The tool's worker hangs mid-call: it never heartbeats again, so Temporal times the activity out.
    const hangsMidTool: ActivityInterceptorsFactory = (ctx) => ({
      inbound: {
        execute: (input, next) =>
          ctx.info.activityType === 'executeTool'
            ? new Promise((_resolve, reject) => {
                const gaveUp = setTimeout(() => reject(new Error('the test gave the hung call up')), 8_000);
                ctx.cancellationSignal.addEventListener('abort', () => {
                  clearTimeout(gaveUp);
                  reject(new Error('cancelled'));
                });
              })
            : next(input),
      },
    });
    const { client, stop } = await kit.startWorker({
      tools: [charge],
      models: {
        scripted: scriptedModel((call) => {
          seenByModel.push(call.messages);
          return call.step === 1 ? { toolCalls: [{ id: 'c', name: 'charge', input: { cents: 500 } }] } : { text: 'ok' };
        }),
      },
      workerOptions: { interceptors: { activity: [hangsMidTool] } },
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'charge' });
      await client.result(runId);

      const told = toolMessages(seenByModel[1] ?? [])[0]?.result;
      expect(told).toMatchObject({
        success: false,
        errorType: 'timeout',
        error: expect.stringMatching(
          /timed out.*It may still have had an effect: .*check before calling it again\.$/,
        ) as unknown,
      });
      expect((await client.events(runId)).find((event) => event.type === 'tool_failed')).toMatchObject({
        errorType: 'timeout',
      });
      await recordHistory(runId, 'tool-activity-timed-out');
    } finally {
      await stop();
    }
  }, 30_000);

  it('tells the model about an unknown tool without scheduling anything', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker((call) => {
      seenByModel.push(call.messages);
      return call.step === 1 ? { toolCalls: [{ name: 'launch_rockets', input: {} }] } : { text: 'ok' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'go' });
      await client.result(runId);
      const feedback = toolMessages(seenByModel[1] ?? [])[0];
      expect(feedback).toMatchObject({
        toolName: 'launch_rockets',
        result: { success: false, errorType: 'not_found' },
      });
      expect(feedback?.role === 'tool' && feedback.result.success === false && feedback.result.error).toContain('add');
      expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(0);
      await recordHistory(runId, 'unknown-tool');
    } finally {
      await stop();
    }
  });

  it('stops at maxSteps with a clear stop reason when the model keeps sending invalid input', async () => {
    const { client, stop } = await startWorker(() => ({ toolCalls: [{ name: 'add', input: { a: 'x' } }] }));
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'loop', maxSteps: 3 });
      const result = await client.result(runId);
      expect(result).toMatchObject({ status: 'completed', stopReason: 'max_steps', steps: 3 });
      expect(result.output).toBeUndefined();
      const events = await client.events(runId);
      expect(events.filter((event) => event.type === 'model_responded')).toHaveLength(3);
      expect(events.at(-1)).toMatchObject({ type: 'run_completed', stopReason: 'max_steps' });
      await recordHistory(runId, 'max-steps');
    } finally {
      await stop();
    }
  });

  it('runs parallel calls concurrently and returns their results in call order', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker((call) => {
      seenByModel.push(call.messages);
      if (call.step > 1) return { text: 'done' };
      return {
        toolCalls: [
          { id: 'slow', name: 'echo_after', input: { value: 'first', delayMs: 600 } },
          { id: 'fast', name: 'echo_after', input: { value: 'second', delayMs: 0 } },
          { id: 'mid', name: 'echo_after', input: { value: 'third', delayMs: 200 } },
        ],
      };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'parallel' });
      await client.result(runId);
      const results = toolMessages(seenByModel[1] ?? []);
      expect(results.map((message) => message.role === 'tool' && message.toolCallId)).toEqual([
        'call_1_0',
        'call_1_1',
        'call_1_2',
      ]);
      // The provider pairs results with calls by the ids it sent, so those go back to it.
      expect(results.map((message) => message.role === 'tool' && message.providerCallId)).toEqual([
        'slow',
        'fast',
        'mid',
      ]);
      const events = await client.events(runId);
      const finished = events.filter((event) => event.type === 'tool_succeeded').map((event) => event.toolCallId);
      expect(finished).toEqual(['call_1_1', 'call_1_2', 'call_1_0']);
      await recordHistory(runId, 'parallel-calls');
    } finally {
      await stop();
    }
  });

  describe('approvals', () => {
    const transferTurn: ScriptedTurn = {
      toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }],
    };

    it('waits for approval, then executes the approved input once and records who approved', async () => {
      const { client, stop, ledger } = await startWorker([transferTurn, { text: 'Transferred.' }]);
      try {
        const { runId } = await client.startRun({ ...base, prompt: 'pay B', approvalTimeout: '1h' });
        const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
        expect(waiting.pendingApprovals).toEqual([
          expect.objectContaining({
            toolCallId: 'call_1_0',
            toolName: 'transfer_funds',
            input: { from: 'A', to: 'B', amount: 100 },
          }),
        ]);
        const pending = waiting.pendingApprovals[0];
        expect(Date.parse(pending?.expiresAt ?? '') - Date.parse(pending?.requestedAt ?? '')).toBe(3_600_000);
        expect(ledger.transfers).toHaveLength(0);

        const outcome = await client.approve(runId, 'call_1_0', { approver: 'alice', reason: 'looks right' });
        expect(outcome).toEqual({
          toolCallId: 'call_1_0',
          toolName: 'transfer_funds',
          decision: 'approve',
          input: { from: 'A', to: 'B', amount: 100 },
        });
        await client.result(runId);
        expect(ledger.transfers).toEqual([
          {
            from: 'A',
            to: 'B',
            amount: 100,
            idempotencyKey: expect.stringMatching(new RegExp(`^${runId}/[\\w-]+/call_1_0$`)) as unknown,
          },
        ]);
        const events = await client.events(runId);
        expect(events.find((event) => event.type === 'tool_approved')).toMatchObject({
          approver: 'alice',
          reason: 'looks right',
          edited: false,
        });
        expect(events.find((event) => event.type === 'tool_awaiting_approval')).toMatchObject({
          toolCallId: 'call_1_0',
        });
        await recordHistory(runId, 'approved');
      } finally {
        await stop();
      }
    });

    it('makes waiting runs findable by tenant and status, with their waiting calls in the memo until decided', async () => {
      const tenantId = `tenant-${Date.now()}`;
      const { client, stop } = await startWorker([transferTurn, { text: 'ok' }]);
      try {
        const { runId } = await client.startRun({ ...base, tenantId, prompt: 'pay' });
        const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
        const query = `RelayTenant = '${tenantId}' AND RelayStatus = 'awaiting_approval' AND RelayPendingApprovals > 0`;
        let found: Array<{ runId: string; memo?: Record<string, unknown> }> = [];
        for (let attempt = 0; attempt < 50 && found.length === 0; attempt += 1) {
          found = [];
          for await (const workflow of kit.temporal.workflow.list({ query })) {
            found.push({ runId: workflow.workflowId, ...(workflow.memo ? { memo: workflow.memo } : {}) });
          }
          if (found.length === 0) await new Promise((resolve) => setTimeout(resolve, 200));
        }
        expect(found.map((run) => run.runId)).toEqual([runId]);
        // What the approvals list reads without asking the run: exactly what its snapshot says waits.
        expect(found[0]?.memo?.[pendingApprovalsMemoKey]).toEqual({
          model: base.model,
          userId: base.userId,
          approvals: waiting.pendingApprovals,
        });
        await client.reject(runId, 'call_1_0');
        await client.result(runId);
        const memo = (await kit.temporal.workflow.getHandle(runId).describe()).memo ?? {};
        expect(Object.keys(memo)).not.toContain(pendingApprovalsMemoKey);
      } finally {
        await stop();
      }
    });

    it('executes an edited input when it passes the schema and refuses one that does not, writing nothing', async () => {
      const { client, stop, ledger } = await startWorker([transferTurn, { text: 'ok' }]);
      try {
        const { runId } = await client.startRun({ ...base, prompt: 'pay' });
        await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
        const eventsBefore = await client.events(runId);

        const refusal = await client
          .approve(runId, 'call_1_0', { input: { from: 'A', to: 'B', amount: -5 } })
          .catch((error: unknown) => error);
        expect(RelayError.isInstance(refusal) && refusal.code).toBe('approval_input_invalid');
        expect(await client.events(runId)).toEqual(eventsBefore);
        expect((await client.getRun(runId)).status).toBe('awaiting_approval');

        await client.approve(runId, 'call_1_0', { approver: 'bob', input: { from: 'A', to: 'C', amount: 40 } });
        await client.result(runId);
        expect(ledger.transfers.map(({ to, amount }) => ({ to, amount }))).toEqual([{ to: 'C', amount: 40 }]);
        const approved = (await client.events(runId)).find((event) => event.type === 'tool_approved');
        expect(approved).toMatchObject({ edited: true, input: { from: 'A', to: 'C', amount: 40 } });
        await recordHistory(runId, 'approved-with-edit');
      } finally {
        await stop();
      }
    });

    it('tells the model a rejected call did not run', async () => {
      const seenByModel: TranscriptMessage[][] = [];
      const { client, stop, ledger } = await startWorker((call) => {
        seenByModel.push(call.messages);
        return call.step === 1 ? transferTurn : { text: 'Understood.' };
      });
      try {
        const { runId } = await client.startRun({ ...base, prompt: 'pay' });
        await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
        await client.reject(runId, 'call_1_0', { approver: 'carol', reason: 'too much' });
        await client.result(runId);
        expect(ledger.transfers).toHaveLength(0);
        expect(toolMessages(seenByModel[1] ?? [])[0]).toMatchObject({
          result: { success: false, errorType: 'rejected' },
        });
        expect((await client.events(runId)).find((event) => event.type === 'tool_rejected')).toMatchObject({
          approver: 'carol',
          reason: 'too much',
        });
        expect(await countScheduledActivities(kit.temporal, runId, 'executeTool')).toBe(0);
        await recordHistory(runId, 'rejected');
      } finally {
        await stop();
      }
    });

    it('refuses decisions for unknown calls, for calls already decided, and from another tenant', async () => {
      const { client, stop, ledger } = await startWorker([
        {
          toolCalls: [
            { id: 'p1', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 1 } },
            { id: 'p2', name: 'transfer_funds', input: { from: 'A', to: 'C', amount: 2 } },
          ],
        },
        { text: 'ok' },
      ]);
      try {
        const { runId } = await client.startRun({ ...base, prompt: 'pay twice' });
        await waitForRun(client, runId, (run) => run.pendingApprovals.length === 2);
        await expect.poll(() => callsWaitingInMemo(runId)).toEqual(['call_1_0', 'call_1_1']);

        const unknown = await client.approve(runId, 'nope').catch((error: unknown) => error);
        expect(RelayError.isInstance(unknown) && unknown.code).toBe('approval_not_pending');
        const foreign = await client.approve(runId, 'call_1_0', { tenantId: 'other' }).catch((error: unknown) => error);
        expect(RelayError.isInstance(foreign) && foreign.code).toBe('run_not_found');
        const foreignRead = await client.getRun(runId, { tenantId: 'other' }).catch((error: unknown) => error);
        expect(RelayError.isInstance(foreignRead) && foreignRead.code).toBe('run_not_found');

        await client.approve(runId, 'call_1_0', { approver: 'dan', tenantId: 'acme' });
        const twice = await client.approve(runId, 'call_1_0').catch((error: unknown) => error);
        expect(RelayError.isInstance(twice) && twice.code).toBe('approval_not_pending');
        await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);
        await expect.poll(() => callsWaitingInMemo(runId)).toEqual(['call_1_1']);
        // The approved transfer runs as an activity after the decision is recorded: wait for it, not for the decision.
        await expect.poll(() => ledger.transfers.map((transfer) => transfer.to)).toEqual(['B']);

        await client.reject(runId, 'call_1_1');
        await client.result(runId);
        expect(ledger.transfers.map((transfer) => transfer.to)).toEqual(['B']);
        await recordHistory(runId, 'parallel-approvals');
      } finally {
        await stop();
      }
    });

    it('accepts the same decision by signal', async () => {
      const { client, stop, ledger } = await startWorker([transferTurn, { text: 'ok' }]);
      try {
        const { runId } = await client.startRun({ ...base, prompt: 'pay' });
        await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
        await client.signalDecision(runId, { toolCallId: 'unknown', decision: 'approve' });
        await client.signalDecision(runId, { toolCallId: 'call_1_0', decision: 'approve', approver: 'erin' });
        await client.result(runId);
        expect(ledger.transfers).toHaveLength(1);
        expect((await client.events(runId)).find((event) => event.type === 'tool_approved')).toMatchObject({
          approver: 'erin',
        });
        await recordHistory(runId, 'approved-by-signal');
      } finally {
        await stop();
      }
    });
  });

  it('aborts the running tool through ctx.signal when the run is cancelled', async () => {
    const { client, stop, ledger } = await startWorker([
      { toolCalls: [{ id: 'w', name: 'wait_for_abort', input: {} }] },
    ]);
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'wait' });
      await waitForRun(client, runId, () => ledger.started.length === 1);
      await client.cancel(runId);
      const failure = await client.result(runId).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      expect(ledger.aborted).toEqual(['call_1_0']);
      const snapshot = await client.getRun(runId);
      expect(snapshot.status).toBe('cancelled');
      expect(eventTypes(await client.events(runId)).at(-1)).toBe('run_cancelled');
      await recordHistory(runId, 'cancelled');
    } finally {
      await stop();
    }
  });

  it('closes a cancelled run only after a tool that lets its request finish has ended', async () => {
    // What happened on the worker, in order: the payment landing, and the tool activity answering Temporal.
    const order: string[] = [];
    const started = latch();
    const finishing = defineTool({
      name: 'send_payment',
      description: 'Sends a payment; a request under way is let finish when cancelled.',
      inputSchema: z.object({}),
      execute: async (_input, ctx) => {
        started.reached();
        await new Promise((resolve) => ctx.signal.addEventListener('abort', resolve, { once: true }));
        // The request under way takes a while to come back (a timer, so an answer sent at the abort comes first).
        await new Promise((resolve) => setTimeout(resolve, 1_000));
        order.push('payment landed');
        return { sent: true };
      },
    });
    const recordsToolAnswer: ActivityInterceptorsFactory = (ctx) => ({
      inbound: {
        async execute(input, next) {
          try {
            return await next(input);
          } finally {
            if (ctx.info.activityType === 'executeTool') order.push('tool activity answered');
          }
        },
      },
    });
    const running = await kit.startWorker({
      tools: [...createTestTools(createLedger()), finishing],
      models: { scripted: scriptedModel([{ toolCalls: [{ name: 'send_payment', input: {} }] }]) },
      workerOptions: { interceptors: { activity: [recordsToolAnswer] } },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'pay' });
      await started.started;
      await client.cancel(runId);
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      // Before, the activity answered at the abort: the run said cancelled a second before the payment landed.
      expect(order).toEqual(['payment landed', 'tool activity answered']);
      // And the run waited for that answer: history has it before the run's cancellation.
      expect(await closingEventsOfToolActivity(runId)).toEqual(['ActivityTaskCanceled', 'WorkflowExecutionCanceled']);
      const events = await client.events(runId);
      expect(eventTypes(events).slice(-2)).toEqual(['tool_cancelled', 'run_cancelled']);
    } finally {
      await running.stop();
    }
  });

  it('ends the wait of a call still waiting for a human when the run fails, so its record shows none waiting', async () => {
    // Two transfers in one step; the second one's input check fails for good (an interceptor stands for a fault of
    // the worker), after the first has started to wait for a human.
    const breaksSecondCheck: ActivityInterceptorsFactory = (ctx) => ({
      inbound: {
        async execute(input, next) {
          const asked = input.args[0] as { input?: { amount?: number } } | undefined;
          if (ctx.info.activityType !== 'checkToolCallInput' || asked?.input?.amount !== 7) return next(input);
          await new Promise((resolve) => setTimeout(resolve, 500));
          throw ApplicationFailure.nonRetryable('The input check broke', 'check_broke');
        },
      },
    });
    const ledger = createLedger();
    const running = await kit.startWorker({
      tools: createTestTools(ledger),
      models: {
        scripted: scriptedModel([
          {
            toolCalls: [
              { name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } },
              { name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 7 } },
            ],
          },
        ]),
      },
      workerOptions: { interceptors: { activity: [breaksSecondCheck] } },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'two transfers' });
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      const events = await client.events(runId);
      // The premise: the first call was waiting when the run failed.
      expect(eventTypes(events).slice(-3)).toEqual(['tool_awaiting_approval', 'tool_cancelled', 'run_failed']);
      expect(events.at(-3)).toMatchObject({ toolCallId: 'call_1_0' });
      expect(events.at(-2)).toMatchObject({ toolCallId: 'call_1_0', stage: 'awaiting_approval' });
      expect(events.at(-1)).toMatchObject({ code: 'check_broke' });
      const closed = await client.getRun(runId);
      expect(closed).toMatchObject({ status: 'failed', pendingApprovals: [] });
      const { searchAttributes } = await kit.temporal.workflow.getHandle(runId).describe();
      expect(searchAttributes['RelayPendingApprovals']).toEqual([0]);
      expect(await callsWaitingInMemo(runId)).toEqual([]);
      expect(ledger.transfers).toEqual([]);
      await recordHistory(runId, 'failed-while-waiting');
    } finally {
      await running.stop();
    }
  });

  it('refuses a decision that comes while a cancelled run reads its clock: the call will never run', async () => {
    // The clock read at the cancellation is held until the decision has had its answer.
    const clockRead = latch();
    let holdClock = false;
    const holdsTheClock: ActivityInterceptorsFactory = (ctx) => ({
      inbound: {
        async execute(input, next) {
          if (ctx.info.activityType === 'readClock' && holdClock) {
            clockRead.reached();
            await clockRead.released;
          }
          return next(input);
        },
      },
    });
    const ledger = createLedger();
    const running = await kit.startWorker({
      tools: createTestTools(ledger),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } }] },
        ]),
      },
      workerOptions: { interceptors: { activity: [holdsTheClock] } },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'transfer, then cancel' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      holdClock = true;
      await client.cancel(runId);
      await clockRead.started;
      const decision = await client.approve(runId, 'call_1_0').catch((error: unknown) => error);
      clockRead.release();
      expect(RelayError.isInstance(decision) && decision.code).toBe('approval_not_pending');
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      const events = await client.events(runId);
      expect(eventTypes(events).slice(-3)).toEqual(['tool_awaiting_approval', 'tool_cancelled', 'run_cancelled']);
      expect(ledger.transfers).toEqual([]);
      await recordHistory(runId, 'decision-refused-while-cancelling');
    } finally {
      await running.stop();
    }
  });

  it('fails the run when the model stops before finishing its answer, and keeps the cut text in the log', async () => {
    // A token limit cuts the answer to 'The sum'; for the prompt 'filtered' a content filter leaves nothing.
    const { client, stop } = await startWorker((call) => {
      if (call.step === 1) return { toolCalls: [{ name: 'add', input: { a: 2, b: 3 } }] };
      const filtered = JSON.stringify(call.messages).includes('filtered');
      return filtered ? { text: '', finishReason: 'content-filter' } : { text: 'The sum', finishReason: 'length' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'What is 2 + 3?' });
      const failure = await client.result(runId).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const events = await client.events(runId);
      expect(eventTypes(events).slice(-2)).toEqual(['model_responded', 'run_failed']);
      expect(events.at(-2)).toMatchObject({ text: 'The sum', finishReason: 'length', toolCallCount: 0 });
      expect(events.at(-1)).toMatchObject({
        code: 'model_answer_unfinished',
        error: expect.stringContaining("finish reason 'length': it reached its output token limit") as unknown,
      });
      expect(await client.getRun(runId)).toMatchObject({ status: 'failed', step: 2 });
      await recordHistory(runId, 'answer-cut-off-fails');

      // Nothing to hand on at all: an answer a filter stopped, empty.
      const filtered = await client.startRun({ ...base, prompt: 'filtered' });
      await client.result(filtered.runId).catch(() => undefined);
      expect((await client.events(filtered.runId)).at(-1)).toMatchObject({
        type: 'run_failed',
        code: 'model_answer_unfinished',
        error: expect.stringContaining('a content filter stopped it') as unknown,
      });
    } finally {
      await stop();
    }
  });

  it('completes with an empty output when the model ends its turn with nothing to add', async () => {
    const { client, stop } = await startWorker([
      { toolCalls: [{ name: 'add', input: { a: 2, b: 3 } }] },
      { text: '', finishReason: 'stop' },
    ]);
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'Add 2 and 3; nothing to say.' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', stopReason: 'final_answer', output: '' });
    } finally {
      await stop();
    }
  });

  it('passes the run’s modelSettings to every model call', async () => {
    const seen: unknown[] = [];
    const { client, stop } = await startWorker((call) => {
      seen.push(call.settings);
      return call.step === 1 ? { toolCalls: [{ id: 'c1', name: 'add', input: { a: 1, b: 2 } }] } : { text: '3' };
    });
    try {
      const modelSettings = { temperature: 0.1, maxOutputTokens: 64, stopSequences: ['END'] };
      const { runId } = await client.startRun({ ...base, prompt: 'add', modelSettings });
      await client.result(runId);
      expect(seen).toEqual([modelSettings, modelSettings]);
    } finally {
      await stop();
    }
  });

  it('elides the oldest tool outputs once the transcript outgrows maxTranscriptBytes, and says so', async () => {
    const sentToModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker((call) => {
      sentToModel.push(call.messages);
      return call.step <= 5
        ? {
            toolCalls: [{ id: `read_${call.step}`, name: 'repeat_text', input: { text: 'x', times: 3_000 } }],
          }
        : { text: 'read them all' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'read', maxTranscriptBytes: 8_192 });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'read them all' });
      const compactions = (await client.events(runId)).filter((event) => event.type === 'transcript_compacted');
      expect(compactions.length).toBeGreaterThan(0);
      for (const compaction of compactions) expect(compaction.bytesAfter).toBeLessThanOrEqual(8_192);
      // Every request stayed within the budget; the last one still had the newest output in full.
      for (const messages of sentToModel)
        expect(Buffer.byteLength(JSON.stringify(messages))).toBeLessThanOrEqual(8_192);
      const lastResults = toolMessages(sentToModel.at(-1) ?? []).map((message) => message.result);
      expect(lastResults).toHaveLength(5);
      expect(lastResults[0]).toMatchObject({ success: true, data: { elided: true } });
      expect(lastResults[4]).toMatchObject({ success: true, data: { text: 'x'.repeat(3_000) } });
    } finally {
      await stop();
    }
  });

  it('aborts an in-flight model call when the run is cancelled', async () => {
    // The model call heartbeats; the heartbeat is what tells the activity its run was cancelled.
    let modelCallStarted = false;
    let abortReason: unknown;
    const running = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: {
        scripted: {
          generate: (_call, { signal }) =>
            new Promise((_resolve, reject) => {
              modelCallStarted = true;
              signal.addEventListener('abort', () => {
                // CANCELLED or NOT_FOUND (the run already ended) when a heartbeat learned of the cancellation;
                // TIMED_OUT would mean only the heartbeat timeout stopped it.
                abortReason = (signal.reason as Error).message;
                reject(new Error('aborted'));
              });
            }),
        },
      },
    });
    try {
      const { runId } = await running.client.startRun({ ...base, prompt: 'think for ever' });
      await waitForRun(running.client, runId, () => modelCallStarted);
      await running.client.cancel(runId);
      await waitForRun(running.client, runId, () => abortReason !== undefined);
      expect(abortReason).toMatch(/^(CANCELLED|NOT_FOUND)$/);
      expect((await running.client.getRun(runId)).status).toBe('cancelled');
    } finally {
      await running.stop();
    }
  });

  it('keeps its transcript, counters and event sequence across continue-as-new', async () => {
    const { client, stop } = await startWorker((call) =>
      call.step <= 3
        ? { toolCalls: [{ name: 'add', input: { a: call.step, b: 1 } }] }
        : { text: `steps seen: ${call.messages.length}` },
    );
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'count', continueAsNewAfterSteps: 1 });
      const result = await client.result(runId);
      expect(result).toMatchObject({ stopReason: 'final_answer', steps: 4, output: 'steps seen: 7' });
      const events = await client.events(runId);
      expect(events.map((event) => event.seq)).toEqual(events.map((_event, index) => index + 1));
      expect(events.filter((event) => event.type === 'tool_succeeded')).toHaveLength(3);
      const description = await kit.temporal.workflow.getHandle(runId).describe();
      expect(description.runId).not.toBe(description.raw.workflowExecutionInfo?.firstRunId);
      await recordHistory(runId, 'continue-as-new-first-execution', true);
      await recordHistory(runId, 'continue-as-new-last-execution');
    } finally {
      await stop();
    }
  });

  it('rejects a malformed run input before anything reaches Temporal', async () => {
    const error = await kit.client
      .startRun({ tenantId: '', model: 'no-provider', prompt: 'x' })
      .catch((failure: unknown) => failure);
    expect(RelayError.isInstance(error) && error.code).toBe('invalid_input');
    expect(RelayError.isInstance(error) && error.message).toContain("'tenantId'");
  });
});
