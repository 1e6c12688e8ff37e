import path from 'node:path';
import { WorkflowFailedError } from '@temporalio/client';
import type { temporal } from '@temporalio/proto';
import { describe, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiKeyTenant } from '../../src/http/api-keys.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { RelayError } from '../../src/shared/errors.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue, withWorker } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { waitingRunWithoutWorker } from '../helpers/waiting-run.js';
import { readServerSentEvents, signInToInbox } from '../http/http-test-kit.js';
import type { ServerSentMessage } from '../http/http-test-kit.js';

// A run whose workflow task keeps failing (here: broken workflow code; in production: a worker that died holding
// it, until the task times out and another worker takes it) cannot answer queries or updates. Callers get a
// retryable `run_unavailable`, followers wait, and everything carries on once a good worker takes the run up.

const brokenWorkflows = path.join(import.meta.dirname, '../fixtures/broken/agent-run-failing-task.ts');
const kit = useRelayTestKit();

async function untilHistoryHas(runId: string, attributes: keyof temporal.api.history.v1.IHistoryEvent) {
  const handle = kit.temporal.workflow.getHandle(runId);
  const deadline = Date.now() + 20_000;
  while (!(await handle.fetchHistory()).events?.some((event) => event[attributes])) {
    if (Date.now() > deadline) throw new Error(`Run ${runId} has no ${attributes} in its history`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

async function errorOf(promise: Promise<unknown>): Promise<unknown> {
  return promise.then(
    () => undefined,
    (error: unknown) => error,
  );
}

/**
 * Waits for the broken workflow's first (good) workflow task, then sends the signal that fails the next ones,
 * and returns how the run refuses to answer because of it.
 */
async function breakRun(client: RelayClient, runId: string): Promise<RelayError> {
  await untilHistoryHas(runId, 'activityTaskScheduledEventAttributes');
  await client.signalDecision(runId, { toolCallId: 'nothing', decision: 'approve' });
  // Temporal refuses queries outright from the third attempt at a workflow task; before that they wait for it.
  const handle = kit.temporal.workflow.getHandle(runId);
  const deadline = Date.now() + 30_000;
  while (((await handle.describe()).raw.pendingWorkflowTask?.attempt ?? 0) < 3) {
    if (Date.now() > deadline) throw new Error(`Run ${runId} never reached its third workflow task attempt`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const error = await errorOf(client.getRun(runId));
  if (RelayError.isInstance(error) && error.code === 'run_unavailable') return error;
  throw new Error(`Run ${runId} should be unavailable; got: ${String(error)}`);
}

/** Follows the run over the API's event stream as tenant `acme`, keeping every message until the stream ends. */
function followOverHttp(api: ApiServer, runId: string) {
  const messages: ServerSentMessage[] = [];
  const ended = (async () => {
    const response = await fetch(`${api.url}/v1/runs/${runId}/events`, {
      headers: { 'x-api-key': 'key-acme-0123456789' },
    });
    if (response.status !== 200) throw new Error(`The event stream answered ${response.status}`);
    for await (const message of readServerSentEvents(response)) messages.push(message);
  })();
  ended.catch(() => undefined);
  return { messages, ended };
}

/** The messages a stream followed so far holds, its comment lines left out. */
function said(streamed: ReturnType<typeof followOverHttp> | undefined) {
  return (streamed?.messages ?? []).flatMap((message) => ('comment' in message ? [] : [message]));
}

const apiKeys = new Map<string, ApiKeyTenant>([
  ['key-acme-0123456789', { tenantId: 'acme', name: 'ops' }],
  ['key-other-0123456789', { tenantId: 'other' }],
]);

/**
 * Starts a run of tenant `acme` on a fresh task queue with a client and an API server over it, lets `use` break
 * and recover it, and closes what it opened.
 */
async function withRunOnFreshQueue(
  use: (setup: { client: RelayClient; api: ApiServer; taskQueue: string; runId: string }) => Promise<void>,
): Promise<void> {
  const taskQueue = uniqueTaskQueue('broken');
  const client = await RelayClient.connect({ connection: kit.env.connection, namespace: kit.namespace, taskQueue });
  const api = await startApiServer({ client, apiKeys, port: 0 });
  try {
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'add' });
    await use({ client, api, taskQueue, runId });
  } finally {
    await api.close();
    await client.close();
  }
}

// Each test waits on Temporal's clocks (workflow task retries, the query timeout) on its own task queue, so
// they run side by side.
describe.concurrent('a run no worker can answer for', () => {
  it('answers run_unavailable (503 over HTTP) while no worker can complete the run’s workflow task, keeps followers waiting and recovers on a good worker', async ({
    expect,
  }) => {
    await withRunOnFreshQueue(async ({ client, api, taskQueue, runId }) => {
      const followed: RunEvent[] = [];
      const told: string[] = [];
      let following: Promise<void> | undefined;
      let streamed: ReturnType<typeof followOverHttp> | undefined;
      let detail: string | undefined;
      await withWorker(kit.env, { workflowsPath: brokenWorkflows, taskQueue }, async () => {
        const unavailable = await breakRun(client, runId);
        expect(unavailable.message).toMatch(/cannot answer right now.*workflow task failed or timed out/);
        // Another tenant learns nothing, not even that the run is stuck.
        expect(await errorOf(client.getRun(runId, { tenantId: 'other' }))).toMatchObject({ code: 'run_not_found' });

        const response = await fetch(`${api.url}/v1/runs/${runId}`, {
          headers: { 'x-api-key': 'key-acme-0123456789' },
        });
        expect(response.status).toBe(503);
        expect(response.headers.get('content-type')).toBe('application/problem+json');
        expect(response.headers.get('retry-after')).toBe('5');
        const problem = (await response.json()) as { detail?: string };
        expect(problem).toMatchObject({ status: 503, code: 'run_unavailable' });
        // Read from the run's history: the error its workflow code throws.
        detail = problem.detail;
        expect(detail).toBe(
          `Run '${runId}' cannot answer: its workflow task fails on the workers (This workflow code is broken on ` +
            'purpose), and they take it again until one completes it.',
        );
        // The inbox's run page reads the run's state the same way.
        const cookie = await signInToInbox(api.url, 'key-acme-0123456789');
        const state = await fetch(`${api.url}/inbox/runs/${runId}/state`, { headers: { cookie } });
        expect(state.status).toBe(503);
        expect(((await state.json()) as { detail?: string }).detail).toBe(detail);

        // A decision is refused at once rather than after the client's decisionWaitMs, saying why; none is recorded.
        const approve = await fetch(`${api.url}/v1/runs/${runId}/approve`, {
          method: 'POST',
          headers: { 'x-api-key': 'key-acme-0123456789', 'content-type': 'application/json' },
          body: JSON.stringify({ toolCallId: 'nothing' }),
        });
        expect(approve.status).toBe(503);
        const refused = (await approve.json()) as { code?: string; detail?: string };
        expect(refused).toMatchObject({ code: 'run_unavailable' });
        expect(refused.detail).toBe(`${detail}\nThe decision was not recorded: decide again once the run answers.`);
        const otherTenant = await fetch(`${api.url}/v1/runs/${runId}`, {
          headers: { 'x-api-key': 'key-other-0123456789' },
        });
        expect(otherTenant.status).toBe(404);

        // Scoped to its tenant, the follower waits too: the tenant is read from the run's description, not asked of it.
        // It is told why nothing comes, as the API says it, once however often it asks.
        const onUnavailable = (error: RelayError) => told.push(`${error.code}: ${error.message}`);
        const onAvailable = () => told.push('available');
        following = (async () => {
          const options = { tenantId: 'acme', pollIntervalMs: 100, onUnavailable, onAvailable };
          for await (const event of client.watch(runId, options)) followed.push(event);
        })();
        await expect.poll(() => told.length).toBeGreaterThan(0);

        // An event stream opens all the same and says why, once.
        streamed = followOverHttp(api, runId);
        await expect.poll(() => said(streamed).some((message) => message.event === 'run_unavailable')).toBe(true);
      });

      // The broken worker is gone; a good one on the same task queue replays the run from its start.
      const good = await kit.startWorker({
        taskQueue,
        tools: createTestTools(createLedger()),
        models: {
          scripted: scriptedModel([{ toolCalls: [{ id: 's', name: 'add', input: { a: 2, b: 3 } }] }, { text: '5' }]),
        },
      });
      try {
        expect(await client.result(runId, { tenantId: 'acme' })).toMatchObject({ status: 'completed', output: '5' });
        await following;
        expect(followed.map((event) => event.type)).toEqual([
          'run_started',
          'model_responded',
          'tool_call_validated',
          'tool_succeeded',
          'model_responded',
          'run_completed',
        ]);
        expect(told).toEqual([`run_unavailable: ${detail}`, 'available']);

        // The stream said why the run could not answer, then that it answers again, then its events, as they came.
        await streamed?.ended;
        const messages = said(streamed);
        expect(messages.map((message) => message.event)).toEqual([
          'run_unavailable',
          'run_available',
          ...followed.map((event) => event.type),
        ]);
        expect(JSON.parse(messages[0]?.data ?? 'null')).toEqual({
          type: 'run_unavailable',
          problem: expect.objectContaining({ status: 503, code: 'run_unavailable', detail }) as unknown,
          retryAfter: 5,
        });
        expect(messages.slice(0, 2).map((message) => message.id)).toEqual([undefined, undefined]);
      } finally {
        await good.stop();
      }
    });
  }, 90_000);

  it('cancels a run that cannot answer, over HTTP, and the run ends cancelled once a worker takes it up', async ({
    expect,
  }) => {
    await withRunOnFreshQueue(async ({ client, api, taskQueue, runId }) => {
      await withWorker(kit.env, { workflowsPath: brokenWorkflows, taskQueue }, async () => {
        await breakRun(client, runId);
        const response = await fetch(`${api.url}/v1/runs/${runId}/cancel`, {
          method: 'POST',
          headers: { 'x-api-key': 'key-acme-0123456789' },
        });
        expect(response.status).toBe(202);
        expect(await response.json()).toEqual({ runId, status: 'cancelling' });
      });
      // The cancellation waited with the run: the first good worker to take it up ends it cancelled.
      const good = await kit.startWorker({ taskQueue, tools: [], models: {} });
      try {
        await expect(client.result(runId)).rejects.toBeInstanceOf(WorkflowFailedError);
        expect((await client.getRun(runId)).status).toBe('cancelled');
      } finally {
        await good.stop();
      }
    });
  }, 60_000);

  it('answers a decision no worker takes within decisionWaitMs with run_unavailable; a worker taking the run later applies it', async ({
    expect,
  }) => {
    const { runId, ledger, taskQueue, start } = await waitingRunWithoutWorker(kit, { finalText: 'paid' });
    const options = { connection: kit.env.connection, namespace: kit.namespace, taskQueue };
    await expect(RelayClient.connect({ ...options, decisionWaitMs: 0 })).rejects.toMatchObject({
      code: 'invalid_input',
    });
    const impatient = await RelayClient.connect({ ...options, decisionWaitMs: 2_000 });
    try {
      const error = await errorOf(impatient.approve(runId, 'call_1_0', { approver: 'alice', tenantId: 'acme' }));
      expect(error).toMatchObject({ code: 'run_unavailable' });
      expect((error as Error).message).toContain('took no decision within 2 s');
      expect(ledger.transfers).toHaveLength(0);
      const second = await start();
      try {
        expect((await second.client.result(runId)).output).toBe('paid');
        expect(ledger.transfers).toHaveLength(1);
        const events = await second.client.events(runId);
        expect(events).toContainEqual(expect.objectContaining({ type: 'tool_approved', approver: 'alice' }));
      } finally {
        await second.stop();
      }
    } finally {
      await impatient.close();
    }
  }, 60_000);

  it('answers a decision on a run whose worker stopped lately once its task queue shows no poll for 20 s, well within decisionWaitMs', async ({
    expect,
  }) => {
    const { client, runId, ledger, taskQueue, pending } = await waitingRunWithoutWorker(kit, { finalText: 'paid' });
    // Temporal lists the stopped worker for minutes, and the update's workflow task holds any probe of the run: the
    // decision looks at the listing every 3 s until the newest poll it shows has stood for 20 s.
    const asked = Date.now();
    const error = await errorOf(client.approve(runId, pending.toolCallId, { approver: 'alice', tenantId: 'acme' }));
    const waited = Date.now() - asked;
    expect(error).toMatchObject({ code: 'run_unavailable' });
    expect((error as Error).message).toContain(
      `took no decision: no worker has polled its task queue recently. Is a Relay-E worker running on task queue '${taskQueue}'?`,
    );
    expect(waited).toBeGreaterThanOrEqual(20_000);
    // The client's decisionWaitMs is a minute, which the decision waited out before.
    expect(waited).toBeLessThan(40_000);
    expect(ledger.transfers).toHaveLength(0);
  }, 90_000);

  it('keeps a read waiting while a worker polled its task queue lately, and says none polls once the server finds none did', async ({
    expect,
  }) => {
    const { client, runId, taskQueue } = await waitingRunWithoutWorker(kit, { finalText: 'paid' });
    const stopped = Date.now();
    // Temporal lists the stopped worker for minutes, and its server knows a poll came in the last 20 s
    // (matching.queryPollerUnavailableWindow): the read is not cut short, and meets the deadline given to it.
    const error = await errorOf(client.temporal.withDeadline(Date.now() + 5_000, () => client.getRun(runId)));
    expect(Date.now() - stopped).toBeGreaterThanOrEqual(4_500);
    expect(error).toBeInstanceOf(Error);
    expect((error as Error).message).not.toContain('no worker has polled');
    // Without a deadline of its own the read waits until a probe of the run is told no worker polled lately, and then
    // names the task queue whose workers answer for the run, not the one its client starts runs on.
    const elsewhere = await RelayClient.connect({
      connection: kit.env.connection,
      namespace: kit.namespace,
      taskQueue: uniqueTaskQueue('elsewhere'),
    });
    try {
      const unanswered = await errorOf(elsewhere.getRun(runId));
      // The server counts the 20 s from the worker's last poll, which started a little before it stopped.
      expect(Date.now() - stopped).toBeGreaterThanOrEqual(15_000);
      expect(unanswered).toMatchObject({ code: 'run_unavailable' });
      expect((unanswered as Error).message).toContain(`task queue '${taskQueue}'`);
      expect((unanswered as Error).message).not.toContain(elsewhere.taskQueue);
      // Once none polled in those 20 s, a read is told so by a probe (every 3 s; each lands on one partition of the
      // task queue, and only those that reach its root are told) well within Temporal's own query timeout (30 s).
      const asked = Date.now();
      await expect(client.getRun(runId)).rejects.toMatchObject({ code: 'run_unavailable' });
      expect(Date.now() - asked).toBeLessThan(25_000);
    } finally {
      await elsewhere.close();
    }
  }, 120_000);

  it('tells a watcher that started knowing the run could not answer when its first look answers', async ({
    expect,
  }) => {
    const { client, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel([{ text: 'done' }]) },
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'hi' });
      let answered = 0;
      const followed: string[] = [];
      const onAvailable = () => (answered += 1);
      for await (const event of client.watch(runId, { unavailableAtStart: true, onAvailable })) {
        followed.push(event.type);
      }
      expect(followed.at(-1)).toBe('run_completed');
      expect(answered).toBe(1);
      // A watcher not told so, whose looks all answer, hears nothing of it.
      answered = 0;
      for await (const event of client.watch(runId, { onAvailable })) followed.push(event.type);
      expect(answered).toBe(0);
    } finally {
      await stop();
    }
  }, 60_000);

  it('answers reads and decisions with run_unavailable, naming the task queue, as soon as it lists no worker', async ({
    expect,
  }) => {
    await withRunOnFreshQueue(async ({ client, api, taskQueue, runId }) => {
      // Temporal would hold the query for its whole timeout (about 30 s) before failing it: the read asks the task
      // queue instead, which lists no worker that ever polled it.
      const asked = Date.now();
      const error = await errorOf(client.getRun(runId));
      expect(Date.now() - asked).toBeLessThan(15_000);
      expect(error).toMatchObject({ code: 'run_unavailable' });
      expect((error as Error).message).toContain(
        `no worker has polled its task queue recently. Is a Relay-E worker running on task queue '${taskQueue}'?`,
      );
      // The first follower's stream opens at once too, and says why before anything else.
      const followed = followOverHttp(api, runId);
      await expect.poll(() => said(followed)[0]?.event, { timeout: 15_000 }).toBe('run_unavailable');
      const told = JSON.parse(said(followed)[0]!.data) as { problem: { detail: string }; retryAfter: number };
      expect(told.problem.detail).toContain(`task queue '${taskQueue}'`);
      expect(told.retryAfter).toBeGreaterThan(0);
      // A decision is not held for the client's decisionWaitMs (a minute) either; Temporal keeps it all the same.
      const decided = Date.now();
      const refused = await errorOf(client.approve(runId, 'call_1_0', { tenantId: 'acme' }));
      expect(Date.now() - decided).toBeLessThan(15_000);
      expect(refused).toMatchObject({ code: 'run_unavailable' });
      expect((refused as Error).message).toBe(
        `Run '${runId}' took no decision: no worker has polled its task queue recently. Is a Relay-E worker running ` +
          `on task queue '${taskQueue}'? Temporal keeps the decision, and a worker that takes the run later may ` +
          'still apply it: read the run before deciding again.',
      );
      // A worker that starts polling takes the run: the stream says so, and the run goes on to its end.
      const worker = await kit.startWorker({
        taskQueue,
        tools: createTestTools(createLedger()),
        models: { scripted: scriptedModel([{ text: 'done' }]) },
      });
      try {
        await followed.ended;
      } finally {
        await worker.stop();
      }
      const events = said(followed).map((message) => message.event);
      expect(events.indexOf('run_available')).toBeGreaterThan(0);
      expect(events.indexOf('run_available')).toBeLessThan(events.indexOf('run_started'));
    });
  }, 90_000);
});
