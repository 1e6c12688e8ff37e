import { WorkflowUpdateFailedError } from '@temporalio/client';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyTenant } from '../../src/http/api-keys.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { RelayError } from '../../src/shared/errors.js';
import type { ApprovalDecision } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { decideSignal, decideUpdate } from '../../workflows/messages.js';
import { httpTestModel, payCallId } from './http-test-kit.js';

// transfer_funds decided by `finance-lead` only: the name of the API key a decision comes in with.
const tenantId = 'approvers-test';
const keys = { lead: 'key-finance-lead', ops: 'key-ops-0123456789' };
const apiKeys = new Map<string, ApiKeyTenant>([
  [keys.lead, { tenantId, name: 'finance-lead' }],
  [keys.ops, { tenantId, name: 'ops' }],
]);
const ledger = createLedger();
const kit = useRelayTestKit();
let worker: RunningWorker;
let api: ApiServer;

beforeAll(async () => {
  const tools = createTestTools(ledger).map((tool): ToolDefinition =>
    tool.name === 'transfer_funds' ? defineTool({ ...(tool as ToolDefinition), approvers: ['finance-lead'] }) : tool,
  );
  worker = await kit.startWorker({ tools, models: { scripted: scriptedModel(httpTestModel) } });
  api = await startApiServer({ client: worker.client, apiKeys });
});

afterAll(async () => {
  await api?.close();
  await worker?.stop();
});

function decide(runId: string, key: string, decision: 'approve' | 'reject', body: object = {}, url = api.url) {
  return fetch(`${url}/v1/runs/${runId}/${decision}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ toolCallId: payCallId, reason: 'checked', ...body }),
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
    const awaiting = events.find((event) => event.type === 'tool_awaiting_approval');
    expect(awaiting).toMatchObject({ approvers: ['finance-lead'] });
    expect(awaiting).not.toHaveProperty('approvalsRequired');
    expect(eventTypes(events).filter((type) => type === 'tool_approved' || type === 'tool_rejected')).toEqual([
      'tool_approved',
    ]);
    await recordHistoryIfRequested(
      client.temporal.workflow.getHandle(runId),
      currentHistoryFile('named-approver-in-event'),
    );
  });
});

describe('a decision whose approver is not text', () => {
  it('is ignored when signalled (["finance-lead"] does not pass the approver list) and refused by update', async () => {
    const { client } = worker;
    const paidBefore = ledger.transfers.length;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    // A raw message, as a sender with Temporal access could send it: the client's types allow only a string.
    const listed = {
      toolCallId: payCallId,
      decision: 'approve',
      approver: ['finance-lead'],
    } as unknown as ApprovalDecision;
    const handle = client.temporal.workflow.getHandle(runId);
    await handle.signal(decideSignal, listed);
    const refused = await handle.executeUpdate(decideUpdate, { args: [listed] }).catch((error: unknown) => error);
    expect(refused).toBeInstanceOf(WorkflowUpdateFailedError);
    expect((refused as WorkflowUpdateFailedError).cause).toMatchObject({
      type: 'invalid_input',
      message: 'approver must be text, not a list',
    });
    expect(ledger.transfers).toHaveLength(paidBefore);

    // Still waiting: had the signal been taken, this approval would be refused as a second decision.
    expect((await decide(runId, keys.lead, 'approve')).status).toBe(200);
    await client.result(runId);
    const decisions = (await client.events(runId)).filter((event) => event.type === 'tool_approved');
    expect(decisions).toMatchObject([{ approver: 'finance-lead' }]);
    await recordHistoryIfRequested(handle, currentHistoryFile('approver-not-text'));
  });
});

describe('an approver’s edit with a field the tool does not name', () => {
  it('is refused by update and over HTTP (422 naming the field), ignored by signal, and never recorded as run', async () => {
    const { client } = worker;
    const paidBefore = ledger.transfers.length;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    // transfer_funds's Zod schema would drop `dry_run` before the tool ran: the approver must learn it now.
    const edit = { from: 'A', to: 'B', amount: 5, dry_run: true };
    const handle = client.temporal.workflow.getHandle(runId);
    const signalled = { toolCallId: payCallId, decision: 'approve', approver: 'finance-lead', input: edit } as const;
    await handle.signal(decideSignal, signalled);

    const refused = await client
      .approve(runId, payCallId, { approver: 'finance-lead', input: edit })
      .catch((error: unknown) => error);
    expect(RelayError.isInstance(refused) && refused.code).toBe('approval_input_invalid');
    const overHttp = await decide(runId, keys.lead, 'approve', { input: edit });
    expect(overHttp.status).toBe(422);
    expect(await overHttp.json()).toMatchObject({
      code: 'approval_input_invalid',
      issues: [{ path: 'dry_run', code: 'unrecognized_keys' }],
    });
    expect(ledger.transfers).toHaveLength(paidBefore);

    // Still waiting (the signal was not taken): the edit without the field runs as approved.
    expect((await decide(runId, keys.lead, 'approve', { input: { from: 'A', to: 'B', amount: 5 } })).status).toBe(200);
    await client.result(runId);
    const approved = (await client.events(runId)).filter((event) => event.type === 'tool_approved');
    expect(approved).toMatchObject([{ approver: 'finance-lead', edited: true }]);
    expect(ledger.transfers.slice(paidBefore)).toMatchObject([{ from: 'A', to: 'B', amount: 5 }]);
    await recordHistoryIfRequested(handle, currentHistoryFile('edit-with-undeclared-field'));
  });
});

describe('a tool whose calls need two approvers (four eyes)', () => {
  const fourEyes = { ...keys, cfo: 'key-cfo-0123456789' };
  let pair: { worker: RunningWorker; api: ApiServer; ledger: ReturnType<typeof createLedger> };

  beforeAll(async () => {
    const paid = createLedger();
    const tools = createTestTools(paid).map((tool): ToolDefinition =>
      tool.name === 'transfer_funds'
        ? defineTool({ ...(tool as ToolDefinition), approvers: ['finance-lead', 'cfo', 'ops'], approvalsRequired: 2 })
        : tool,
    );
    const twoKeyWorker = await kit.startWorker({ tools, models: { scripted: scriptedModel(httpTestModel) } });
    const keysOfFour = new Map([...apiKeys, [fourEyes.cfo, { tenantId, name: 'cfo' }]]);
    pair = {
      worker: twoKeyWorker,
      api: await startApiServer({ client: twoKeyWorker.client, apiKeys: keysOfFour }),
      ledger: paid,
    };
  });

  afterAll(async () => {
    await pair?.api.close();
    await pair?.worker.stop();
  });

  it('keeps a call waiting after one approval, refuses the same approver twice and an edit, and runs it at the second', async () => {
    const { client } = pair.worker;
    const url = pair.api.url;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    expect(waiting.pendingApprovals).toMatchObject([{ toolCallId: payCallId, approvalsRequired: 2, approvals: [] }]);

    const first = await decide(runId, fourEyes.lead, 'approve', {}, url);
    expect(first.status).toBe(200);
    expect(await first.json()).toMatchObject({ decision: 'approve', approvals: 1, approvalsRequired: 2 });
    const once = await client.getRun(runId);
    expect(once.status).toBe('awaiting_approval');
    expect(once.pendingApprovals[0]?.approvals).toMatchObject([{ approver: 'finance-lead', reason: 'checked' }]);
    // The tenant's approvals list (from the run's memo) shows the approval too.
    await expect
      .poll(async () => {
        const listed = await fetch(`${url}/v1/approvals`, { headers: { authorization: `Bearer ${fourEyes.ops}` } });
        const body = (await listed.json()) as { approvals: Array<{ runId: string; approvals?: unknown[] }> };
        return body.approvals.find((approval) => approval.runId === runId)?.approvals?.length;
      })
      .toBe(1);

    const again = await decide(runId, fourEyes.lead, 'approve', {}, url);
    expect(again.status).toBe(403);
    expect(await again.json()).toMatchObject({
      code: 'approver_not_allowed',
      detail: "'finance-lead' has approved this call already: it needs 2 different approvers",
    });
    const edited = await decide(runId, fourEyes.cfo, 'approve', { input: { from: 'A', to: 'C', amount: 1 } }, url);
    expect(edited.status).toBe(422);
    const editRefused = (await edited.json()) as { code: string; detail: string };
    expect(editRefused.code).toBe('invalid_input');
    expect(editRefused.detail).toMatch(/cannot be edited/);
    expect(pair.ledger.transfers).toEqual([]);

    const second = await decide(runId, fourEyes.cfo, 'approve', {}, url);
    expect(await second.json()).toMatchObject({ decision: 'approve', approvals: 2, approvalsRequired: 2 });
    await client.result(runId);
    expect(pair.ledger.transfers).toHaveLength(1);
    const events = await client.events(runId);
    // A follower of the run learns who may decide, and how many must, from the event that says the call waits.
    expect(events.find((event) => event.type === 'tool_awaiting_approval')).toMatchObject({
      approvers: ['finance-lead', 'cfo', 'ops'],
      approvalsRequired: 2,
    });
    const decisions = events.filter((event) => event.type === 'tool_approval_added' || event.type === 'tool_approved');
    expect(decisions).toMatchObject([
      { type: 'tool_approval_added', approver: 'finance-lead', approvals: 1, approvalsRequired: 2 },
      { type: 'tool_approved', approver: 'cfo', approvedBy: ['finance-lead', 'cfo'], edited: false },
    ]);
    await recordHistoryIfRequested(
      client.temporal.workflow.getHandle(runId),
      currentHistoryFile('four-eyes-approvers-in-event'),
    );
  });

  it('rejects the call at one rejection, whatever approvals it had', async () => {
    const { client } = pair.worker;
    const paidBefore = pair.ledger.transfers.length;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    expect((await decide(runId, fourEyes.lead, 'approve', {}, pair.api.url)).status).toBe(200);
    expect(await (await decide(runId, fourEyes.ops, 'reject', {}, pair.api.url)).json()).toMatchObject({
      decision: 'reject',
    });
    await client.result(runId);
    expect(
      eventTypes(await client.events(runId)).filter(
        (type) => type.startsWith('tool_approv') || type === 'tool_rejected',
      ),
    ).toEqual(['tool_approval_added', 'tool_rejected']);
    expect(pair.ledger.transfers).toHaveLength(paidBefore);
  });
});

describe('a decision made on another request of the call than the one waiting', () => {
  it('is refused with 409 approval_not_pending, and taken when it names the request that waits', async () => {
    const { client } = worker;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    const waiting = await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    const [call] = waiting.pendingApprovals;
    // As a page left open on a run whose id was used again: the call it shows was requested at another time.
    const stale = '2020-01-01T00:00:00.000Z';
    const refused = await decide(runId, keys.lead, 'approve', { requestedAt: stale });
    expect(refused.status).toBe(409);
    expect(await refused.json()).toMatchObject({
      code: 'approval_not_pending',
      detail: `Tool call '${payCallId}' waiting now was requested at ${call?.requestedAt}, not at ${stale}: the decision was made on another request`,
    });
    // A signal made on it is ignored, and says why.
    await client.signalDecision(runId, {
      toolCallId: payCallId,
      decision: 'approve',
      approver: 'finance-lead',
      requestedAt: stale,
    });
    await expect
      .poll(async () => (await client.events(runId)).filter((event) => event.type === 'decision_ignored'))
      .toEqual([expect.objectContaining({ code: 'approval_not_pending' })]);
    expect((await client.getRun(runId)).status).toBe('awaiting_approval');

    const taken = await decide(runId, keys.lead, 'approve', { requestedAt: call?.requestedAt });
    expect(taken.status).toBe(200);
    expect(await client.result(runId)).toMatchObject({ status: 'completed' });
  });
});
