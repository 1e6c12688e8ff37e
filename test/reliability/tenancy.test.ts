import { expect, it } from 'vitest';
import { RelayError } from '../../src/shared/errors.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { decideSignal, decideUpdate } from '../../workflows/messages.js';
import { payCallId, useHttpTestApi } from '../http/http-test-kit.js';
import { writeResults } from './reliability-kit.js';

const { tenantA, tenantB, keys, kit, api } = useHttpTestApi();

type Request = { method: string; path: string; json?: unknown; headers?: Record<string, string> };

/** Every route that names a run, with each way of reading the event stream. */
function runRoutes(runId: string): Request[] {
  const id = encodeURIComponent(runId);
  return [
    { method: 'GET', path: `/v1/runs/${id}` },
    { method: 'GET', path: `/v1/runs/${id}/events` },
    { method: 'GET', path: `/v1/runs/${id}/events?after=1` },
    { method: 'GET', path: `/v1/runs/${id}/events`, headers: { 'last-event-id': '2' } },
    { method: 'POST', path: `/v1/runs/${id}/approve`, json: { toolCallId: payCallId } },
    {
      method: 'POST',
      path: `/v1/runs/${id}/approve`,
      json: { toolCallId: payCallId, input: { from: 'A', to: 'M', amount: 1 } },
    },
    { method: 'POST', path: `/v1/runs/${id}/reject`, json: { toolCallId: payCallId } },
    { method: 'POST', path: `/v1/runs/${id}/cancel` },
  ];
}

/** Everything a caller without a valid key might send instead of one. */
const missingCredentials: Array<{ label: string; headers: Record<string, string> }> = [
  { label: 'no key', headers: {} },
  { label: 'empty bearer', headers: { authorization: 'Bearer ' } },
  { label: 'unknown bearer', headers: { authorization: 'Bearer not-a-key' } },
  { label: 'key with a suffix', headers: { authorization: `Bearer ${keys.alice}x` } },
  { label: 'key prefix', headers: { authorization: `Bearer ${keys.alice.slice(0, -1)}` } },
  { label: 'basic scheme', headers: { authorization: `Basic ${Buffer.from(`${keys.alice}:`).toString('base64')}` } },
  { label: 'unknown x-api-key', headers: { 'x-api-key': 'not-a-key' } },
  { label: 'tenant id as key', headers: { 'x-api-key': tenantA } },
];

async function send(request: Request, headers: Record<string, string>): Promise<Response> {
  return api.request(request.path, {
    method: request.method,
    headers: { ...request.headers, ...headers },
    ...(request.json !== undefined ? { json: request.json } : {}),
  });
}

async function startRun(prompt: string): Promise<string> {
  const response = await api.request('/v1/runs', {
    method: 'POST',
    key: keys.alice,
    json: { model: 'scripted:t', prompt, approvalTimeout: '1h' },
  });
  expect(response.status).toBe(201);
  return ((await response.json()) as { runId: string }).runId;
}

function decisionsIn(events: readonly RunEvent[]): RunEvent[] {
  return events.filter((event) => event.type === 'tool_approved' || event.type === 'tool_rejected');
}

it('refuses every route, stream and decision on tenant A’s runs to tenant B (404) and to callers without a valid key (401), and records the authenticated approver', async () => {
  const waiting = await startRun('pay B');
  const completed = await startRun('add');
  const cancelled = await startRun('pay C');
  await api.waitForRun(waiting, keys.alice, (run) => run.status === 'awaiting_approval');
  await api.waitForRun(cancelled, keys.alice, (run) => run.status === 'awaiting_approval');
  await api.request(`/v1/runs/${cancelled}/cancel`, { method: 'POST', key: keys.alice });
  await api.waitForRun(completed, keys.alice, (run) => run.status === 'completed');
  await api.waitForRun(cancelled, keys.alice, (run) => run.status === 'cancelled');

  const tried: Array<{ who: string; method: string; path: string; status: number; problem: boolean }> = [];
  const record = async (who: string, request: Request, response: Response) => {
    const problem = response.headers.get('content-type') === 'application/problem+json';
    tried.push({ who, method: request.method, path: request.path, status: response.status, problem });
    await response.body?.cancel();
  };

  const runIds = [waiting, completed, cancelled, 'run_that_never_existed'];
  for (const runId of runIds) {
    for (const request of runRoutes(runId)) {
      await record('tenant B', request, await send(request, { authorization: `Bearer ${keys.bob}` }));
      for (const { label, headers } of missingCredentials) await record(label, request, await send(request, headers));
    }
  }
  const tenantRoutes: Request[] = [
    { method: 'POST', path: '/v1/runs', json: { model: 'scripted:t', prompt: 'hi' } },
    { method: 'GET', path: '/v1/runs' },
    { method: 'GET', path: '/v1/approvals' },
  ];
  for (const request of tenantRoutes) {
    for (const { label, headers } of missingCredentials) await record(label, request, await send(request, headers));
  }

  const byTenantB = tried.filter((entry) => entry.who === 'tenant B');
  const withoutKey = tried.filter((entry) => entry.who !== 'tenant B');
  expect(byTenantB.filter((entry) => entry.status !== 404 || !entry.problem)).toEqual([]);
  expect(withoutKey.filter((entry) => entry.status !== 401 || !entry.problem)).toEqual([]);

  // Tenant B's own listings and a body that names tenant A change nothing either. Tenant A's list the runs first, so
  // an empty list for B is the tenant filter's doing, not visibility's lag.
  const listedFor = async (path: string, key: string, field: 'approvals' | 'runs') => {
    const body = (await (await api.request(path, { key })).json()) as Record<string, Array<{ runId: string }>>;
    return (body[field] ?? []).map((entry) => entry.runId);
  };
  const patience = { timeout: 15_000 };
  await expect.poll(() => listedFor('/v1/approvals', keys.alice, 'approvals'), patience).toContain(waiting);
  await expect
    .poll(() => listedFor('/v1/runs?limit=100', keys.alice, 'runs'), patience)
    .toEqual(expect.arrayContaining([waiting, completed, cancelled]));
  const approvalsLeaked = (await listedFor('/v1/approvals', keys.bob, 'approvals')).filter((id) => runIds.includes(id));
  expect(approvalsLeaked).toEqual([]);
  const runsLeaked = (await listedFor('/v1/runs?limit=100', keys.bob, 'runs')).filter((id) => runIds.includes(id));
  expect(runsLeaked).toEqual([]);
  const smuggled = await api.request('/v1/runs', {
    method: 'POST',
    key: keys.bob,
    json: { model: 'scripted:t', prompt: 'hi', tenantId: tenantA },
  });
  expect(smuggled.status).toBe(422);
  // Refused: the listings show none of tenant A's runs; the body naming tenant A is not accepted.
  const tenantBOwnRequests = [approvalsLeaked.length === 0, runsLeaked.length === 0, smuggled.status >= 400];

  // Below HTTP: the client's tenant scope and the workflow's own check refuse tenant B too.
  const client = api.worker.client;
  const scope = { tenantId: tenantB };
  const clientCalls: Array<[string, () => Promise<unknown>]> = [
    ['getRun', () => client.getRun(waiting, scope)],
    ['events', () => client.events(waiting, scope)],
    ['approve', () => client.approve(waiting, payCallId, { ...scope, approver: 'mallory' })],
    ['reject', () => client.reject(waiting, payCallId, { ...scope, approver: 'mallory' })],
    ['cancel', () => client.cancel(waiting, scope)],
    ['result', () => client.result(waiting, scope)],
    ['watch', () => client.watch(waiting, scope).next()],
  ];
  const clientRefusals: string[] = [];
  for (const [name, call] of clientCalls) {
    const error = await call().then(
      () => undefined,
      (caught: unknown) => caught,
    );
    if (RelayError.hasCode(error, 'run_not_found')) clientRefusals.push(name);
  }
  expect(clientRefusals).toEqual(clientCalls.map(([name]) => name));
  const handle = kit.temporal.workflow.getHandle(waiting);
  const updateOutcome = await handle
    .executeUpdate(decideUpdate, { args: [{ toolCallId: payCallId, decision: 'approve', tenantId: tenantB }] })
    .then(
      () => 'accepted',
      (caught: unknown) => caught,
    );
  expect(updateOutcome).toMatchObject({ cause: { type: 'tenant_mismatch' } });
  const mallorysDecision = {
    toolCallId: payCallId,
    decision: 'approve' as const,
    approver: 'mallory',
    tenantId: tenantB,
  };
  const signalRefusal = await client.signalDecision(waiting, mallorysDecision).catch((caught: unknown) => caught);
  expect(RelayError.isInstance(signalRefusal) && signalRefusal.code).toBe('run_not_found');
  // Sent past the client's check, the run drops it itself.
  await handle.signal(decideSignal, mallorysDecision);

  const untouched = await client.getRun(waiting);
  expect(untouched).toMatchObject({ status: 'awaiting_approval', pendingApprovals: [{ toolCallId: payCallId }] });
  const decisionsByTenantB = decisionsIn(await client.events(waiting));
  expect(decisionsByTenantB).toEqual([]);
  expect(api.ledger.transfers).toEqual([]);
  // The workflow-level attempts: the update is refused when it throws; the signal when it records no decision.
  const workflowLevelRefusals = [updateOutcome !== 'accepted', decisionsByTenantB.length === 0];

  const approved = await api.request(`/v1/runs/${waiting}/approve`, {
    method: 'POST',
    key: keys.alice,
    json: { toolCallId: payCallId },
  });
  expect(approved.status).toBe(200);
  await api.waitForRun(waiting, keys.alice, (run) => run.status === 'completed');
  const decisions = decisionsIn(await client.events(waiting));
  expect(decisions).toEqual([expect.objectContaining({ type: 'tool_approved', approver: 'alice' })]);
  expect(api.ledger.transfers).toEqual([expect.objectContaining({ to: 'B', amount: 100 })]);

  const refusedHttp = tried.filter((entry) => entry.status === (entry.who === 'tenant B' ? 404 : 401)).length;
  const attempts = tried.length + tenantBOwnRequests.length + clientCalls.length + workflowLevelRefusals.length;
  const refused =
    refusedHttp +
    tenantBOwnRequests.filter(Boolean).length +
    clientRefusals.length +
    workflowLevelRefusals.filter(Boolean).length;
  await writeResults('tenancy', {
    requestsTried: attempts,
    crossTenantHttp: byTenantB.length,
    withoutValidKeyHttp: withoutKey.length,
    credentialVariants: missingCredentials.length,
    runStates: ['awaiting_approval', 'completed', 'cancelled', 'missing'],
    clientAndWorkflowLevelAttempts: clientCalls.length + workflowLevelRefusals.length,
    refused,
    acceptedAcrossTenants: attempts - refused,
    approverRecorded: decisions.map((event) => (event.type === 'tool_approved' ? event.approver : undefined)),
  });
});
