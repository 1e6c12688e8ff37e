import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
// In your project: '@relay-e/engine' and '@relay-e/engine/testing'.
import { defineTool } from '../../src/index.js';
import { createTestEnvironment, replayHistories, runTool, scriptedModel } from '../../src/testing/index.js';
import type { RelayTestEnvironment } from '../../src/testing/index.js';

// The agent under test: a refund tool that a human must approve.
const refunds: Array<{ orderId: string; amountUsd: number; idempotencyKey?: string }> = [];
const refundOrder = defineTool({
  name: 'refund_order',
  description: 'Refund an order, up to 500 USD.',
  inputSchema: z.object({ orderId: z.string(), amountUsd: z.number().positive().max(500) }),
  requiresApproval: true,
  execute: async (input, ctx) => {
    refunds.push({ ...input, ...(ctx.idempotencyKey ? { idempotencyKey: ctx.idempotencyKey } : {}) });
    return { refunded: true, ...input };
  },
});

// The model, scripted: it asks for the refund, then answers from the tool's result.
const model = scriptedModel((request) => {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') {
    return { text: last.result.success ? 'Refunded.' : `Not refunded: ${last.result.errorType}.` };
  }
  return { toolCalls: [{ id: 'refund', name: 'refund_order', input: { orderId: 'o-1', amountUsd: 40 } }] };
});

let env: RelayTestEnvironment;

beforeAll(async () => {
  // 'time-skipping' runs Temporal's test server: a 24-hour approval timeout passes in test time.
  env = await createTestEnvironment({ mode: 'time-skipping', tools: [refundOrder], models: { scripted: model } });
});

afterAll(async () => {
  await env?.teardown();
});

async function startRefund(): Promise<string> {
  const { runId } = await env.client.startRun({ tenantId: 'acme', model: 'scripted:refunds', prompt: 'Refund o-1' });
  return runId;
}

describe('the refund agent', () => {
  it('refunds once, after a human approves', async () => {
    const runId = await startRefund();
    const approval = await env.waitForApproval(runId);
    expect(approval).toMatchObject({ toolName: 'refund_order', input: { orderId: 'o-1', amountUsd: 40 } });

    await approval.approve({ approver: 'support-lead' });
    expect(await env.result(runId)).toMatchObject({ output: 'Refunded.' });
    expect(refunds.filter((refund) => refund.idempotencyKey === `${runId}/refund`)).toHaveLength(1);
  });

  it('refunds the amount the approver edited', async () => {
    const runId = await startRefund();
    await (await env.waitForApproval(runId)).edit({ orderId: 'o-1', amountUsd: 25 });
    await env.result(runId);
    expect(refunds.find((refund) => refund.idempotencyKey === `${runId}/refund`)).toMatchObject({ amountUsd: 25 });
  });

  it('tells the model when nobody approves within 24 hours, and refunds nothing', async () => {
    const runId = await startRefund();
    const approval = await env.waitForApproval(runId);
    await env.advancePastApprovalTimeout(approval);

    expect(await env.result(runId)).toMatchObject({ output: 'Not refunded: approval_timeout.' });
    expect(model.requestsOf(runId)[1]?.messages.at(-1)).toMatchObject({
      role: 'tool',
      result: { success: false, errorType: 'approval_timeout' },
    });
    const events = await env.collectEvents(runId);
    expect(events.map((event) => event.type)).toContain('tool_approval_timed_out');
    expect(refunds.some((refund) => refund.idempotencyKey === `${runId}/refund`)).toBe(false);
  });

  it('keeps a recorded run replayable with the current workflow code', async () => {
    const corpus = await mkdtemp(path.join(os.tmpdir(), 'refund-histories-'));
    try {
      const runId = await startRefund();
      await (await env.waitForApproval(runId)).reject({ reason: 'duplicate request' });
      await env.result(runId);
      // In your project, keep these files in the repository and replay them in CI.
      await env.recordHistory(runId, path.join(corpus, 'rejected.json'));
      expect(await replayHistories(corpus)).toEqual(['rejected.json']);
    } finally {
      await rm(corpus, { recursive: true, force: true });
    }
  });
});

describe('the refund tool on its own', () => {
  it('refuses more than 500 USD before it runs', async () => {
    const result = await runTool(refundOrder, { orderId: 'o-2', amountUsd: 900 }, { tenantId: 'acme' });
    expect(result).toMatchObject({ success: false, errorType: 'validation' });
  });
});
