import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { WorkflowFailedError } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import type { ActivityInterceptorsFactory } from '@temporalio/worker';
import { describe, expect, it } from 'vitest';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { latch } from '../helpers/latch.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

interface Received {
  type: string;
  toolCallId: string;
  outcome?: string;
}

/** The input check of the transfer of 7 holds until the test releases it, then fails for good, failing the run. */
function checkOfSevenBreaks(held: ReturnType<typeof latch>): ActivityInterceptorsFactory {
  return (ctx) => ({
    inbound: {
      async execute(input, next) {
        const asked = input.args[0] as { input?: { amount?: number } } | undefined;
        if (ctx.info.activityType !== 'checkToolCallInput' || asked?.input?.amount !== 7) return next(input);
        held.reached();
        await held.released;
        throw ApplicationFailure.nonRetryable('The input check broke', 'check_broke');
      },
    },
  });
}

/**
 * A webhook receiver that answers every notice at once but `approval.decided`, which it holds until the test releases
 * it: the failing run waits for that notice (its grace period) while the reminder's timer fires.
 */
async function receiverHoldingDecisions() {
  const held = latch();
  const received: Received[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const notice = JSON.parse(Buffer.concat(chunks).toString('utf8')) as Received;
      received.push(notice);
      const holds = notice.type === 'approval.decided';
      void (holds ? held.released : Promise.resolve()).then(() => response.writeHead(200).end());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/approvals`;
  const close = () => new Promise<void>((resolve) => server.close(() => resolve()));
  return { url, received, release: held.release, close };
}

/** The kinds of the run's history events, read again until its first timer (the reminder's) has fired. */
async function historyOnceReminderTimerFired(runId: string): Promise<string[]> {
  let kinds: string[] = [];
  await expect
    .poll(
      async () => {
        const events = (await kit.temporal.workflow.getHandle(runId).fetchHistory()).events ?? [];
        kinds = events.map((event) => Object.keys(event).find((key) => key.endsWith('EventAttributes')) ?? '');
        return kinds.includes('timerFiredEventAttributes');
      },
      { timeout: 30_000, interval: 200 },
    )
    .toBe(true);
  return kinds;
}

describe('a run that fails while a call waits, whose reminder is due as the run closes', () => {
  it('sends no approval.expiring for the call it withdrew', async () => {
    const receiver = await receiverHoldingDecisions();
    const ledger = createLedger();
    const held = latch();
    const turns = [
      {
        toolCalls: [
          { name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 5 } },
          { name: 'transfer_funds', input: { from: 'a', to: 'b', amount: 7 } },
        ],
      },
    ];
    const running = await kit.startWorker({
      tools: createTestTools(ledger),
      models: { scripted: scriptedModel(turns) },
      approvalWebhook: { url: receiver.url, secret: 'workflow-test-secret-0123' },
      // The reminder is due 4 s into the wait: after the check's failure, inside the run's grace for notices.
      remindApproversBeforeExpiry: '1s',
      workerOptions: { interceptors: { activity: [checkOfSevenBreaks(held)] } },
    });
    try {
      const { client } = running;
      const { runId } = await client.startRun({ ...base, prompt: 'two transfers', approvalTimeout: '5s' });
      await waitForRun(client, runId, (run) => run.pendingApprovals.some((call) => call.toolCallId === 'call_1_0'));
      await held.started;
      held.release();
      const kinds = await historyOnceReminderTimerFired(runId);
      receiver.release();
      expect(await client.result(runId).catch((error: unknown) => error)).toBeInstanceOf(WorkflowFailedError);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('failed-as-reminder-due'),
      );
      // The premise: the reminder's timer fired after the check had failed the run.
      expect(kinds.lastIndexOf('activityTaskFailedEventAttributes')).toBeLessThan(
        kinds.indexOf('timerFiredEventAttributes'),
      );
      const events = await client.events(runId);
      const notified = events.flatMap((event) =>
        event.type === 'tool_approval_notified' && event.toolCallId === 'call_1_0' ? [event.notice] : [],
      );
      expect(new Set(notified)).toEqual(new Set(['approval.requested', 'approval.decided']));
      expect(receiver.received.filter((notice) => notice.type === 'approval.expiring')).toEqual([]);
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'check_broke' });
      expect(ledger.transfers).toEqual([]);
    } finally {
      receiver.release();
      await running.stop();
      await receiver.close();
    }
  });
});
