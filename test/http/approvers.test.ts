import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyTenant } from '../../src/http/api-keys.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { RelayError } from '../../src/shared/errors.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import { createRelayTestKit, eventTypes, waitForRun } from '../helpers/relay-test-kit.js';
import type { RelayTestKit, RunningWorker } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { httpTestModel, payCallId } from './http-test-kit.js';

// transfer_funds decided by `finance-lead` only: the name of the API key a decision comes in with.
const tenantId = 'approvers-test';
const keys = { lead: 'key-finance-lead', ops: 'key-ops' };
const apiKeys = new Map<string, ApiKeyTenant>([
  [keys.lead, { tenantId, name: 'finance-lead' }],
  [keys.ops, { tenantId, name: 'ops' }],
]);
const ledger = createLedger();
let kit: RelayTestKit;
let worker: RunningWorker;
let api: ApiServer;

beforeAll(async () => {
  kit = await createRelayTestKit();
  const tools = createTestTools(ledger).map((tool): ToolDefinition =>
    tool.name === 'transfer_funds' ? defineTool({ ...(tool as ToolDefinition), approvers: ['finance-lead'] }) : tool,
  );
  worker = await kit.startWorker({ tools, models: { scripted: scriptedModel(httpTestModel) } });
  api = await startApiServer({ client: worker.client, apiKeys });
});

afterAll(async () => {
  await api?.close();
  await worker?.stop();
  await kit?.close();
});

function decide(runId: string, key: string, decision: 'approve' | 'reject') {
  return fetch(`${api.url}/v1/runs/${runId}/${decision}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ toolCallId: payCallId, reason: 'checked' }),
  });
}

describe('a tool that names its approvers', () => {
  it('refuses a decision from anyone else, 403 over HTTP, and runs the call once a named approver approves', async () => {
    const { client } = worker;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    expect(waiting.pendingApprovals).toMatchObject([{ toolCallId: payCallId, approvers: ['finance-lead'] }]);

    const refused = await decide(runId, keys.ops, 'reject');
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: 'approver_not_allowed',
      detail: "Tool 'transfer_funds' is decided by finance-lead only, not by 'ops'",
    });
    // Through the client as well, and a decision that names nobody; a signal from anyone else is dropped.
    const unnamed = await client.approve(runId, payCallId).catch((error: unknown) => error);
    expect(RelayError.isInstance(unnamed) && unnamed.code).toBe('approver_not_allowed');
    // Had the signal been taken, the approval below would be refused as a second decision.
    await client.signalDecision(runId, { toolCallId: payCallId, decision: 'approve', approver: 'mallory' });
    expect(ledger.transfers).toEqual([]);

    const approved = await decide(runId, keys.lead, 'approve');
    expect(approved.status).toBe(200);
    await client.result(runId);
    expect(ledger.transfers).toHaveLength(1);
    const events = await client.events(runId);
    expect(events.find((event) => event.type === 'tool_approved')).toMatchObject({ approver: 'finance-lead' });
    expect(eventTypes(events).filter((type) => type === 'tool_approved' || type === 'tool_rejected')).toEqual([
      'tool_approved',
    ]);
    await recordHistoryIfRequested(client.temporal.workflow.getHandle(runId), currentHistoryFile('named-approver'));
  });
});
