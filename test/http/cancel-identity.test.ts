import { describe, expect, it } from 'vitest';
import type { temporal } from '@temporalio/proto';
import { RelayError } from '../../src/shared/errors.js';
import { useHttpTestApi } from './http-test-kit.js';

type CancelRequested = temporal.api.history.v1.IWorkflowExecutionCancelRequestedEventAttributes;

const { tenantA, keys, api } = useHttpTestApi();

async function startPaymentAwaitingApproval(key: string): Promise<string> {
  const started = await api.request('/v1/runs', {
    method: 'POST',
    key,
    json: { model: 'scripted:test', prompt: 'pay B', approvalTimeout: '1h' },
  });
  expect(started.status).toBe(201);
  const { runId } = (await started.json()) as { runId: string };
  await api.waitForRun(runId, key, (run) => run.status === 'awaiting_approval');
  return runId;
}

/** What Temporal recorded of the requests to cancel the run, from its history. */
async function cancelRequestsOf(runId: string): Promise<CancelRequested[]> {
  const history = await api.worker.client.temporal.workflow.getHandle(runId).fetchHistory();
  return (history.events ?? []).flatMap((event) => event.workflowExecutionCancelRequestedEventAttributes ?? []);
}

describe('who cancelled a run, in its Temporal history', () => {
  it("records the caller's key name and the reason on the run's WorkflowExecutionCancelRequested event", async () => {
    const runId = await startPaymentAwaitingApproval(keys.alice);
    const response = await api.request(`/v1/runs/${runId}/cancel`, {
      method: 'POST',
      key: keys.alice,
      json: { reason: 'wrong customer' },
    });
    expect([response.status, await response.json()]).toEqual([202, { runId, status: 'cancelling' }]);
    expect(await cancelRequestsOf(runId)).toEqual([
      expect.objectContaining({ identity: 'relay-e: alice', cause: 'wrong customer' }),
    ]);
    await api.waitForRun(runId, keys.alice, (run) => run.status === 'cancelled');
  });

  it('records tenant:<id> for a key without a name, and no reason for a cancel without a body', async () => {
    const runId = await startPaymentAwaitingApproval(keys.unnamedA);
    const response = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.unnamedA });
    expect(response.status).toBe(202);
    expect(await cancelRequestsOf(runId)).toEqual([
      expect.objectContaining({ identity: `relay-e: tenant:${tenantA}`, cause: '' }),
    ]);
  });

  it('refuses a reason over 1,000 characters, one that is not text and an unknown field, and leaves the run waiting', async () => {
    const runId = await startPaymentAwaitingApproval(keys.alice);
    for (const [label, json, path] of [
      ['1,001 characters', { reason: 'x'.repeat(1_001) }, 'reason'],
      ['a number', { reason: 42 }, 'reason'],
      ['a name of its own', { by: 'mallory' }, 'by'],
    ] as const) {
      const response = await api.request(`/v1/runs/${runId}/cancel`, { method: 'POST', key: keys.alice, json });
      expect(response.status, label).toBe(422);
      expect(response.headers.get('content-type')).toContain('application/problem+json');
      expect(await response.json()).toMatchObject({ code: 'invalid_input', issues: [{ path }] });
    }
    expect(await cancelRequestsOf(runId)).toEqual([]);
    const snapshot = await api.request(`/v1/runs/${runId}`, { key: keys.alice });
    expect(await snapshot.json()).toMatchObject({ status: 'awaiting_approval' });

    const whole = 'y'.repeat(1_000);
    const accepted = await api.request(`/v1/runs/${runId}/cancel`, {
      method: 'POST',
      key: keys.alice,
      json: { reason: whole },
    });
    expect(accepted.status).toBe(202);
    expect(await cancelRequestsOf(runId)).toEqual([expect.objectContaining({ cause: whole })]);
  });
});

describe('RelayClient.cancel with who and why', () => {
  it('refuses a by or reason that is not text, too long, or an empty by, before anything is sent', async () => {
    const runId = await startPaymentAwaitingApproval(keys.alice);
    const { client } = api.worker;
    for (const [label, options] of [
      ['a by of 1,001 characters', { by: 'x'.repeat(1_001) }],
      ['an empty by', { by: '' }],
      ['a reason of 1,001 characters', { reason: 'x'.repeat(1_001) }],
      ['a reason that is a number', { reason: 42 as unknown as string }],
      ['a by that is an object', { by: { name: 'ops' } as unknown as string }],
    ] as const) {
      const refused = await client.cancel(runId, { tenantId: tenantA }, options).catch((error: unknown) => error);
      expect(RelayError.isInstance(refused) && refused.code, label).toBe('invalid_input');
    }
    expect(await cancelRequestsOf(runId)).toEqual([]);
    await client.cancel(runId, { tenantId: tenantA }, { by: 'ops-bot', reason: 'duplicate' });
    expect(await cancelRequestsOf(runId)).toEqual([
      expect.objectContaining({ identity: 'relay-e: ops-bot', cause: 'duplicate' }),
    ]);
  });

  it("answers run_not_found for a missing run and for another tenant's, which stays uncancelled", async () => {
    const runId = await startPaymentAwaitingApproval(keys.alice);
    const { client } = api.worker;
    for (const [id, scope] of [
      ['run_that_never_was', {}],
      [runId, { tenantId: 'another-tenant' }],
    ] as const) {
      const refused = await client.cancel(id, scope, { by: 'ops-bot' }).catch((error: unknown) => error);
      expect(RelayError.isInstance(refused) && refused.code, id).toBe('run_not_found');
    }
    expect(await cancelRequestsOf(runId)).toEqual([]);
    await client.cancel(runId, { tenantId: tenantA });
    expect(await cancelRequestsOf(runId)).toEqual([
      expect.objectContaining({ identity: client.temporal.workflow.options.identity }),
    ]);
  });
});
