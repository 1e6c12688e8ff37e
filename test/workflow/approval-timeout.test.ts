import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { RelayError } from '../../src/shared/errors.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import type { RelayTestEnvironment } from '../../src/testing/create-test-environment.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { currentHistoryFile, isRecordingHistories } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// Time skipping: the test server's clock jumps to the next timer whenever every run waits, so the default 24-hour
// approval timeout passes in test time, not wall time.
const ledger = createLedger();
const model = scriptedModel((request) =>
  request.step === 1
    ? { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }] }
    : { text: 'Nobody approved.' },
);
let env: RelayTestEnvironment;

beforeAll(async () => {
  env = await createTestEnvironment({
    mode: 'time-skipping',
    tools: createTestTools(ledger),
    models: { scripted: model },
  });
});

afterAll(async () => {
  await env?.teardown();
});

const historyFile = currentHistoryFile('approval-timeout');

function eventOf<T extends RunEvent['type']>(events: readonly RunEvent[], type: T) {
  return events.find((event): event is Extract<RunEvent, { type: T }> => event.type === type);
}

describe('an approval nobody decides on', () => {
  it('times out after the default 24 hours as a denial the model is told about, and runs nothing', async () => {
    const { runId } = await env.client.startRun({
      tenantId: 'acme',
      userId: 'u1',
      model: 'scripted:test',
      prompt: 'pay',
    });
    const approval = await env.waitForApproval(runId);
    expect(Date.parse(approval.expiresAt) - Date.parse(approval.requestedAt)).toBe(24 * 3_600_000);

    const result = await env.result(runId);
    expect(result.output).toBe('Nobody approved.');
    expect(ledger.transfers).toHaveLength(0);
    expect(model.requestsOf(runId)[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      toolCallId: 'call_1_0',
      result: { success: false, errorType: 'approval_timeout' },
    });

    const events = await env.client.events(runId);
    const timedOut = eventOf(events, 'tool_approval_timed_out');
    expect(timedOut).toMatchObject({ toolCallId: 'call_1_0', expiresAt: approval.expiresAt });
    expect(Date.parse(timedOut?.at ?? '')).toBeGreaterThanOrEqual(Date.parse(approval.expiresAt));

    const late = await approval.approve().catch((error: unknown) => error);
    expect(RelayError.isInstance(late) && late.code).toBe('approval_not_pending');
    if (isRecordingHistories()) await env.recordHistory(runId, historyFile);
  });

  it('still runs the call when approved a moment before the deadline', async () => {
    const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    const approval = await env.waitForApproval(runId);
    await env.advanceTime(Date.parse(approval.expiresAt) - Date.parse(approval.requestedAt) - 60_000);
    expect((await env.client.getRun(runId)).status).toBe('awaiting_approval');

    await approval.approve({ approver: 'alice' });
    await env.result(runId);
    expect(ledger.transfers).toHaveLength(1);
    expect(ledger.transfers[0]?.idempotencyKey).toMatch(new RegExp(`^${runId}/[\\w-]+/call_1_0$`));
  });
});
