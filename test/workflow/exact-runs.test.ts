import { WorkflowFailedError } from '@temporalio/client';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ModelCall } from '../../src/model/model-provider.js';
import { readHistory } from '../../src/client/read-history.js';
import { RelayError } from '../../src/shared/errors.js';
import { relaySearchAttributes } from '../../src/shared/search-attributes.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import { latch } from '../helpers/latch.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

/** A money mover whose Zod schema refines what its JSON Schema allows: no transfer to the same account. */
function refinedTransferTool(executed: unknown[]) {
  return defineTool({
    name: 'move_money',
    description: 'Move money between two different accounts.',
    inputSchema: z
      .object({ from: z.string(), to: z.string(), amount: z.number() })
      .refine((input) => input.from !== input.to, { message: 'from and to must differ', path: ['to'] }),
    requiresApproval: true,
    execute: async (input) => {
      executed.push(input);
      return { moved: input.amount };
    },
  });
}

/** A tool that overruns its timeout and ignores the abort: its first attempt runs on after the timeout. */
function overrunningTool(attempts: string[]) {
  return defineTool({
    name: 'slow_write',
    description: 'Write slowly.',
    inputSchema: z.object({}),
    timeoutMs: 300,
    execute: async (_input, ctx) => {
      attempts.push(ctx.idempotencyKey ?? '');
      await new Promise((resolve) => setTimeout(resolve, 1_500));
      return { written: true };
    },
  });
}

async function startWorker(
  script: readonly ScriptedTurn[] | ((call: ModelCall) => ScriptedTurn),
  extraTools: ToolDefinition[] = [],
) {
  const ledger = createLedger();
  const running = await kit.startWorker({
    tools: [...createTestTools(ledger), ...extraTools],
    models: { scripted: scriptedModel(script) },
  });
  return { ...running, ledger };
}

/** Failed workflow tasks in a run's history: of its newest execution, or of the one `executionRunId` names. */
async function workflowTaskFailures(runId: string, executionRunId?: string): Promise<number> {
  const history = await readHistory(kit.temporal, runId, executionRunId ? { executionRunId } : {});
  return (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes).length;
}

function toolMessages(messages: readonly TranscriptMessage[]) {
  return messages.filter((message) => message.role === 'tool');
}

const transfer = (id: string | undefined, to: string) => ({
  ...(id !== undefined ? { id } : {}),
  name: 'transfer_funds',
  input: { from: 'A', to, amount: 5 },
});

describe('exact call identities', () => {
  it('gives a call the provider id of an earlier step a fresh id, so it can still be decided, with its own idempotency key', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop, ledger } = await startWorker((call) => {
      seenByModel.push(call.messages);
      if (call.step <= 2) return { toolCalls: [transfer('same', call.step === 1 ? 'B' : 'C')] };
      return { text: 'done' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'pay twice' });
      await waitForRun(client, runId, (run) => run.pendingApprovals[0]?.toolCallId === 'call_1_0');
      await client.approve(runId, 'call_1_0');
      await waitForRun(client, runId, (run) => run.pendingApprovals[0]?.toolCallId === 'call_2_0');
      await client.approve(runId, 'call_2_0');
      await client.result(runId);
      expect(ledger.transfers.map((entry) => entry.to)).toEqual(['B', 'C']);
      const [first, second] = ledger.transfers.map((entry) => entry.idempotencyKey);
      expect(first).not.toEqual(second);
      expect(first).toMatch(new RegExp(`^${runId}/[\\w-]+/call_1_0$`));
      // The provider gets back the id it sent, in both steps.
      const sentBack = (seenByModel[2] ?? []).flatMap((message) =>
        message.role === 'assistant' ? (message.toolCalls ?? []).map((call) => call.providerCallId) : [],
      );
      expect(sentBack).toEqual(['same', 'same']);
      await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile('reused-provider-ids'));
    } finally {
      await stop();
    }
  });

  it('names calls with empty, over-long and repeated provider ids uniquely within the step', async () => {
    const { client, stop } = await startWorker([
      {
        toolCalls: [
          { id: '', name: 'add', input: { a: 1, b: 1 } },
          { id: 'x'.repeat(300), name: 'add', input: { a: 2, b: 2 } },
          { id: 'dup', name: 'add', input: { a: 3, b: 3 } },
          { id: 'dup', name: 'add', input: { a: 4, b: 4 } },
        ],
      },
      { text: 'ok' },
    ]);
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'add' });
      await client.result(runId);
      const succeeded = (await client.events(runId)).filter((event) => event.type === 'tool_succeeded');
      expect(succeeded.map((event) => event.toolCallId).sort()).toEqual([
        'call_1_0',
        'call_1_1',
        'call_1_2',
        'call_1_3',
      ]);
    } finally {
      await stop();
    }
  });
});

describe('run ids', () => {
  it('refuses a run id used before, even by a closed run, and scopes chosen ids by tenant', async () => {
    const { client, stop } = await startWorker(() => ({ text: 'hi' }));
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'one', runId: 'order-42' });
      expect(runId).toBe('acme~order-42');
      await client.result(runId);
      const again = await client
        .startRun({ ...base, prompt: 'two', runId: 'order-42' })
        .catch((error: unknown) => error);
      expect(RelayError.isInstance(again) && again.code).toBe('run_already_exists');
      // Another tenant choosing the same id neither fails nor meets the first tenant's run.
      const other = await client.startRun({ ...base, tenantId: 'globex', prompt: 'three', runId: 'order-42' });
      expect(other.runId).toBe('globex~order-42');
      expect((await client.result(other.runId)).output).toBe('hi');
    } finally {
      await stop();
    }
  });
});

describe('byte limits', () => {
  it('pages the events query by count and bytes, and carries events across continue-as-new by size', async () => {
    // 26 steps of 20 parallel calls: over 1,000 events, and more bytes of them than one execution carries over.
    const calls = Array.from({ length: 20 }, (_, index) => ({
      name: 'repeat_text',
      input: { text: 'ab', times: 60 + index },
    }));
    const { client, stop } = await startWorker((call) => (call.step <= 26 ? { toolCalls: calls } : { text: 'done' }));
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'long', maxSteps: 27, continueAsNewAfterSteps: 10 });
      await client.result(runId);
      const snapshot = await client.getRun(runId);
      expect(snapshot.lastEventSeq).toBeGreaterThan(1_000);
      const page = await client.events(runId, { after: snapshot.lastEventSeq - 30, limit: 10 });
      expect(page.map((event) => event.seq)).toEqual(
        Array.from({ length: 10 }, (_, index) => snapshot.lastEventSeq - 29 + index),
      );
      // Continue-as-new carried only what fits in bytes, and the sequence never restarted.
      const all = await client.events(runId);
      expect(all.at(-1)?.type).toBe('run_completed');
      const seqs = all.filter((event) => event.type !== 'events_dropped').map((event) => event.seq);
      expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
      for await (const execution of kit.temporal.workflow.list({ query: `WorkflowId = '${runId}'` })) {
        expect(await workflowTaskFailures(execution.workflowId, execution.runId)).toBe(0);
      }
    } finally {
      await stop();
    }
  }, 180_000);

  it('elides older texts when outputs are not enough, then fails the run with payload_too_large when the newest turn alone does not fit', async () => {
    const { client, stop } = await startWorker((call) => {
      if (call.step === 1)
        return { text: 'x'.repeat(6_000), toolCalls: [{ name: 'repeat_text', input: { text: 'y', times: 100 } }] };
      return { toolCalls: [{ name: 'repeat_text', input: { text: 'z'.repeat(100), times: 10_000 } }] };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'big', maxTranscriptBytes: 8_192, maxSteps: 4 });
      const failure = await client.result(runId).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(WorkflowFailedError);
      const events = await client.events(runId);
      const compactions = events.filter((event) => event.type === 'transcript_compacted');
      expect(compactions.some((event) => (event.elidedTexts ?? 0) > 0)).toBe(true);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'payload_too_large' });
      expect(await workflowTaskFailures(runId)).toBe(0);
      await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile('payload-too-large'));
    } finally {
      await stop();
    }
  });
});

describe('runs at the limits', () => {
  it('completes with a large model text and a step of the largest tool outputs, with no workflow task failure', async () => {
    // The executor cuts each output to 32 KiB; twenty of them make one step of about 640 KiB of results. Answers at
    // maxModelResponseBytes itself: model-text-limits.test.ts.
    const calls = Array.from({ length: 20 }, () => ({
      name: 'repeat_text',
      input: { text: 'o'.repeat(100), times: 1_000 },
    }));
    const answer = 'a'.repeat(300_000);
    const { client, stop } = await startWorker((call) => (call.step === 1 ? { toolCalls: calls } : { text: answer }));
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'big' });
      const result = await client.result(runId);
      expect(result.output).toHaveLength(answer.length);
      // The closed run's record keeps only its newest 256 KiB of events; the client asks the worker for the rest.
      const events = await client.events(runId);
      expect(events[0]?.type).toBe('run_started');
      const succeeded = events.filter((event) => event.type === 'tool_succeeded');
      expect(succeeded).toHaveLength(20);
      expect(succeeded.every((event) => event.truncated === true)).toBe(true);
      expect(await workflowTaskFailures(runId)).toBe(0);
    } finally {
      await stop();
    }
  });
});

describe('no overlapping executions', () => {
  it('does not retry a tool that overran its timeout, and tells the model it may have had an effect', async () => {
    const attempts: string[] = [];
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker(
      (call) => {
        seenByModel.push(call.messages);
        return call.step === 1 ? { toolCalls: [{ name: 'slow_write', input: {} }] } : { text: 'ok' };
      },
      [overrunningTool(attempts)],
    );
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'write' });
      await client.result(runId);
      await new Promise((resolve) => setTimeout(resolve, 2_000));
      expect(attempts).toHaveLength(1);
      const result = toolMessages(seenByModel[1] ?? [])[0];
      expect(result).toMatchObject({ result: { success: false, errorType: 'timeout' } });
      expect(result?.role === 'tool' && !result.result.success && result.result.error).toContain(
        'may still have had an effect',
      );
    } finally {
      await stop();
    }
  });
});

describe('approvals, exactly', () => {
  it('sends an input the tool’s own schema refuses back to the model before any human is asked', async () => {
    const executed: unknown[] = [];
    const { client, stop } = await startWorker(
      (call) =>
        call.step === 1
          ? { toolCalls: [{ name: 'move_money', input: { from: 'A', to: 'A', amount: 3 } }] }
          : { text: 'fixed' },
      [refinedTransferTool(executed)],
    );
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'move' });
      await client.result(runId);
      const events = await client.events(runId);
      expect(eventTypes(events)).not.toContain('tool_awaiting_approval');
      expect(events.find((event) => event.type === 'tool_validation_failed')).toMatchObject({
        issues: [{ path: 'to', message: 'From and to must differ' }],
      });
      expect(executed).toHaveLength(0);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('refined-input-refused-before-approval'),
      );
    } finally {
      await stop();
    }
  });

  it('tells the model why a human rejected its call', async () => {
    const seenByModel: TranscriptMessage[][] = [];
    const { client, stop } = await startWorker((call) => {
      seenByModel.push(call.messages);
      return call.step === 1 ? { toolCalls: [transfer('t', 'B')] } : { text: 'understood' };
    });
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'pay' });
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      await client.reject(runId, 'call_1_0', { approver: 'carol', reason: 'B is not a known payee' });
      await client.result(runId);
      const result = toolMessages(seenByModel[1] ?? [])[0];
      expect(result?.role === 'tool' && !result.result.success && result.result.error).toContain(
        'B is not a known payee',
      );
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('rejected-with-reason'),
      );
    } finally {
      await stop();
    }
  });

  it('applies every decision the update accepted, even when it lands as the approval times out', async () => {
    const { client, stop, ledger } = await startWorker((call) =>
      call.step === 1 ? { toolCalls: [transfer('t', 'B')] } : { text: 'end' },
    );
    try {
      // Decisions sent around the expiry: whichever way each race goes, an accepted approval must execute.
      for (const delayMs of [900, 950, 1_000, 1_050, 1_100]) {
        const before = ledger.transfers.length;
        const { runId } = await client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1s' });
        const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
        const expiresAt = Date.parse(waiting.pendingApprovals[0]?.expiresAt ?? '');
        await new Promise((resolve) => setTimeout(resolve, Math.max(0, expiresAt - 1_000 + delayMs - Date.now())));
        const accepted = await client.approve(runId, 'call_1_0').then(
          () => true,
          () => false,
        );
        await client.result(runId);
        const events = eventTypes(await client.events(runId));
        expect({ delayMs, executed: ledger.transfers.length - before }).toEqual({
          delayMs,
          executed: accepted ? 1 : 0,
        });
        expect(events.includes('tool_approval_timed_out')).toBe(!accepted);
      }
    } finally {
      await stop();
    }
  });
});

describe('a tool whose output cannot be kept', () => {
  it('runs once and tells the model it ran, since a retry would run it again', async () => {
    let charges = 0;
    const charge = defineTool({
      name: 'charge_card',
      description: 'Charge a card; returns the charge id as a BigInt, which JSON cannot hold.',
      inputSchema: z.object({ amount: z.number() }),
      execute: () => {
        charges += 1;
        return { id: 123n };
      },
    });
    const { client, stop } = await startWorker(
      [{ toolCalls: [{ name: 'charge_card', input: { amount: 5 } }] }, { text: 'checked' }],
      [charge],
    );
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'charge' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: 'checked' });
      expect(charges).toBe(1);
      const failed = (await client.events(runId)).find((event) => event.type === 'tool_failed');
      expect(failed).toMatchObject({ errorType: 'execution' });
      expect(failed && 'error' in failed ? failed.error : '').toContain('The tool ran, so it was not retried');
    } finally {
      await stop();
    }
  });
});

describe('cancellation', () => {
  it('records a call whose input was still being checked before approval as cancelled at that stage', async () => {
    // The rule answers only once the run has closed, so the cancellation surely reaches the run during the check.
    const rule = latch();
    const slowlyRuledPayment = defineTool({
      name: 'slowly_ruled_payment',
      description: 'A payment whose approval rule takes its time to answer.',
      inputSchema: z.object({ amount: z.number() }),
      requiresApproval: async () => {
        rule.reached();
        await rule.released;
        return true;
      },
      execute: () => ({ paid: true }),
    });
    const { client, stop } = await startWorker(
      [{ toolCalls: [{ name: 'slowly_ruled_payment', input: { amount: 5 } }] }, { text: 'never' }],
      [slowlyRuledPayment],
    );
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'pay' });
      await rule.started;
      await client.cancel(runId);
      await client.result(runId).catch(() => undefined);
      rule.release();
      const events = await client.events(runId);
      // Before, the log ended this call at tool_call_validated, as if it were still on its way.
      expect(eventTypes(events).slice(-3)).toEqual(['tool_call_validated', 'tool_cancelled', 'run_cancelled']);
      expect(events.at(-2)).toMatchObject({ toolCallId: 'call_1_0', stage: 'checking_input' });
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('cancelled-while-checking-input'),
      );
    } finally {
      // A rule still held would keep the worker's shutdown waiting for its activity.
      rule.release();
      await stop();
    }
  });

  it('leaves no pending approval behind, waits for running calls to stop, and records what became of each', async () => {
    const { client, stop, ledger } = await startWorker([
      { toolCalls: [transfer('t', 'B'), { id: 'w', name: 'wait_for_abort', input: {} }] },
      { text: 'never' },
    ]);
    try {
      const { runId } = await client.startRun({ ...base, prompt: 'both' });
      await waitForRun(client, runId, (run) => run.pendingApprovals.length === 1);
      await expect.poll(() => ledger.started.length).toBe(1);
      await client.cancel(runId);
      await client.result(runId).catch(() => undefined);
      // The wait for a human ended at once; the run still waited for the running tool to see the cancellation, as it
      // does for a step's only call, before it closed.
      expect(ledger.aborted).toEqual(['call_1_1']);
      const history = (await readHistory(kit.temporal, runId)).events ?? [];
      const toolCancelledAt = history.findIndex((event) => event.activityTaskCanceledEventAttributes);
      const runClosedAt = history.findIndex((event) => event.workflowExecutionCanceledEventAttributes);
      expect(toolCancelledAt).toBeGreaterThan(-1);
      expect(toolCancelledAt).toBeLessThan(runClosedAt);
      const snapshot = await client.getRun(runId);
      expect(snapshot).toMatchObject({ status: 'cancelled', pendingApprovals: [] });
      const description = await kit.temporal.workflow.getHandle(runId).describe();
      expect(description.typedSearchAttributes.get(relaySearchAttributes.pendingApprovals)).toBe(0);
      const cancelled = (await client.events(runId)).filter((event) => event.type === 'tool_cancelled');
      expect(cancelled).toHaveLength(2);
      expect(cancelled).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ toolCallId: 'call_1_0', toolName: 'transfer_funds', stage: 'awaiting_approval' }),
          expect.objectContaining({ toolCallId: 'call_1_1', toolName: 'wait_for_abort', stage: 'executing' }),
        ]),
      );
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('cancelled-while-calls-run'),
      );
    } finally {
      await stop();
    }
  });
});
