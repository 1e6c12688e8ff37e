import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RunEvent } from '../../src/shared/run-types.js';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import type { RelayTestEnvironment } from '../../src/testing/create-test-environment.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { startApprovalReceiver } from '../helpers/approval-receiver.js';
import type { ApprovalReceiver } from '../helpers/approval-receiver.js';
import { currentHistoryFile, isRecordingHistories } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// Time skipping: the run's two 30-second graces for notices in flight, and the notice's retries, pass by moving the
// test server's clock.
const secret = 'handed-off-once-secret-0123';
/** A tool whose description alone takes a quarter of what a run can carry into its next execution. */
const manualTool = defineTool({
  name: 'read_manual',
  description: `Reads the manual, which says: ${'m'.repeat(500_000)}`,
  inputSchema: z.object({}),
  execute: () => 'read',
});
const model = scriptedModel((request) =>
  request.step > 1
    ? { text: 'done' }
    : { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }] },
);
let receiver: ApprovalReceiver;
let env: RelayTestEnvironment;

beforeAll(async () => {
  receiver = await startApprovalReceiver(secret);
  env = await createTestEnvironment({
    mode: 'time-skipping',
    tools: [...createTestTools(createLedger()), manualTool],
    models: { scripted: model },
    approvalWebhook: { url: receiver.url, secret },
  });
});

afterAll(async () => {
  await env?.teardown();
  await receiver?.close();
});

describe('a run that fails after handing its notices off', () => {
  it('fails with its own reason, run_failed recorded, without waiting for or handing off the same notices again', async () => {
    // The decision's notice keeps failing, at the run and at the workflow it is handed to, past both graces.
    receiver.answers.set(
      'call_1_0/approval.decided',
      Array.from({ length: 40 }, () => 503),
    );
    // About 1.4 MB of messages: with the catalog's manual, more than the run can carry into its next execution.
    const messages = Array.from({ length: 7 }, (_, index) => ({
      role: 'user' as const,
      content: String(index).repeat(200_000),
    }));
    const { runId } = await env.client.startRun({
      tenantId: 'acme',
      model: 'scripted:test',
      messages,
      maxTranscriptBytes: 1_572_864,
      continueAsNewAfterSteps: 1,
    });
    const approval = await env.waitForApproval(runId);
    await receiver.waitForNotices(runId, 1);
    await approval.approve();
    await expect(env.result(runId)).rejects.toMatchObject({
      cause: { type: 'run_failed', message: expect.stringContaining('over what it can carry') as unknown },
    });
    // Gzipped: its megabytes of messages and manual shrink to kilobytes.
    if (isRecordingHistories()) await env.recordHistory(runId, `${currentHistoryFile('failed-after-hand-off')}.gz`);

    const events = await env.client.events(runId);
    expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'payload_too_large' });
    const handedOff = events.filter(
      (event): event is Extract<RunEvent, { type: 'tool_approval_notice_handed_off' }> =>
        event.type === 'tool_approval_notice_handed_off',
    );
    expect(handedOff).toMatchObject([{ toolCallId: 'call_1_0', notice: 'approval.decided' }]);
    expect(await env.client.getRun(runId)).toMatchObject({ status: 'failed', stopReason: 'error' });

    // The workflow it was handed to still delivers it, once the receiver answers.
    receiver.answers.delete('call_1_0/approval.decided');
    expect(await env.temporal.workflow.getHandle(handedOff[0]?.deliveredBy ?? '').result()).toMatchObject([
      { id: `${runId}/call_1_0/decided`, outcome: 'delivered', status: 200 },
    ]);
  });
});
