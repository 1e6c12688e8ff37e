import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import type { PayloadCodec } from '@temporalio/common';
import proto from '@temporalio/proto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { liftedDispatchCap } from '../../src/dev/temporal-dev-server.js';
import { AesGcmPayloadCodec, encryptedEncoding } from '../../src/security/aes-gcm-payload-codec.js';
import { RelayError } from '../../src/shared/errors.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import type { RelayTestEnvironment } from '../../src/testing/create-test-environment.js';
import { HistoryReplayError, replayHistories } from '../../src/testing/replay-histories.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

/** The first turn for each prompt; once a tool result is back the model answers. */
const firstTurns: Record<string, ScriptedTurn> = {
  'add 2 and 3': { toolCalls: [{ id: 'sum', name: 'add', input: { a: 2, b: 3 } }] },
  'pay B 100': { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 100 } }] },
  'wait for cancel': { toolCalls: [{ id: 'wait', name: 'wait_for_abort', input: {} }] },
};

function firstUserText(messages: readonly TranscriptMessage[]): string {
  const first = messages.find((message) => message.role === 'user');
  return first?.content ?? '';
}

const base = { tenantId: 'acme', model: 'scripted:test' } as const;

const markedEncoding = 'binary/relay-e-test-marked';
const { Payload: PayloadMessage } = proto.temporal.api.common.v1;

/**
 * Wraps each payload in one of its own encoding: a data converter without it cannot read what it wrote. Decoding
 * passes an unmarked payload through, so a client without it fails where it reads, not a worker in a retry loop.
 */
const markingCodec: PayloadCodec = {
  async encode(payloads) {
    return payloads.map((payload) => ({
      metadata: { encoding: Buffer.from(markedEncoding) },
      data: PayloadMessage.encode(payload).finish(),
    }));
  },
  async decode(payloads) {
    return payloads.map((payload) => {
      if (Buffer.from(payload.metadata?.['encoding'] ?? []).toString() !== markedEncoding) return payload;
      const { metadata, data } = PayloadMessage.decode(payload.data ?? new Uint8Array());
      return { metadata, data };
    });
  },
};

describe.each(['local', 'time-skipping'] as const)('a test environment in %s mode', (mode) => {
  const ledger = createLedger();
  const model = scriptedModel((request) =>
    request.messages.at(-1)?.role === 'tool'
      ? { text: 'Done.' }
      : (firstTurns[firstUserText(request.messages)] ?? { text: 'I cannot help with that.' }),
  );
  let env: RelayTestEnvironment;

  beforeAll(async () => {
    env = await createTestEnvironment({ mode, tools: createTestTools(ledger), models: { scripted: model } });
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('runs the tools with the scripted model and records what the model was sent', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'add 2 and 3' });
    expect(await env.result(runId)).toMatchObject({ output: 'Done.', steps: 2 });
    const [first, second] = model.requestsOf(runId);
    expect(first?.tools.map((tool) => tool.name)).toContain('add');
    expect(second?.messages.at(-1)).toMatchObject({ role: 'tool', result: { success: true, data: { result: 5 } } });
  });

  it('hands over the call a run awaits approval for, and runs it once approved', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay B 100' });
    const approval = await env.waitForApproval(runId);
    expect(approval).toMatchObject({ runId, toolCallId: 'call_1_0', input: { from: 'A', to: 'B', amount: 100 } });
    expect(ledger.transfers.filter((transfer) => transfer.idempotencyKey?.startsWith(`${runId}/`))).toEqual([]);

    expect(await approval.approve({ approver: 'alice' })).toMatchObject({ decision: 'approve' });
    await env.result(runId);
    expect(ledger.transfers.filter((transfer) => transfer.idempotencyKey?.startsWith(`${runId}/`))).toHaveLength(1);
  });

  it('runs the edited input of an approval instead of the proposed one', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay B 100' });
    const approval = await env.waitForApproval(runId, { toolCallId: 'call_1_0' });
    await approval.edit({ from: 'A', to: 'C', amount: 40 }, { approver: 'bob' });
    await env.result(runId);
    const transfers = ledger.transfers.filter((transfer) => transfer.idempotencyKey?.startsWith(`${runId}/`));
    expect(transfers).toEqual([expect.objectContaining({ to: 'C', amount: 40 })]);
  });

  it('takes the same decision by signal, for fire-and-forget callers', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay B 100' });
    const approval = await env.waitForApproval(runId);
    await env.client.signalDecision(runId, { toolCallId: approval.toolCallId, decision: 'approve', approver: 'ui' });
    await env.result(runId);
    expect(ledger.transfers.filter((transfer) => transfer.idempotencyKey?.startsWith(`${runId}/`))).toHaveLength(1);
  });

  it('collects the events of a rejected call, in order, once the run ends', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay B 100' });
    await (await env.waitForApproval(runId)).reject({ approver: 'carol', reason: 'too much' });
    const events = await env.collectEvents(runId);
    expect(events.map((event) => event.type)).toEqual([
      'run_started',
      'model_responded',
      'tool_call_validated',
      'tool_awaiting_approval',
      'tool_rejected',
      'model_responded',
      'run_completed',
    ]);
    expect(model.requestsOf(runId)[1]?.messages.at(-1)).toMatchObject({ result: { errorType: 'rejected' } });
  });

  it('follows a run across continue-as-new, with one event sequence', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'add 2 and 3', continueAsNewAfterSteps: 1 });
    expect(await env.result(runId)).toMatchObject({ output: 'Done.', steps: 2 });
    const sequence = (await env.client.events(runId)).map((event) => event.seq);
    expect(sequence).toEqual(sequence.map((_seq, index) => index + 1));
  });

  it('keeps a run to its tenant: another tenant cannot cancel it or read it', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'add 2 and 3' });
    await env.result(runId);
    const refusals = await Promise.all([
      env.client.cancel(runId, { tenantId: 'other' }).catch((error: unknown) => error),
      env.client.getRun(runId, { tenantId: 'other' }).catch((error: unknown) => error),
    ]);
    for (const refusal of refusals) expect(RelayError.isInstance(refusal) && refusal.code).toBe('run_not_found');
  });

  it('fails at once, naming the end state, when a run ends without awaiting approval', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'add 2 and 3' });
    await expect(env.waitForApproval(runId)).rejects.toThrow(/ended \(completed\) without awaiting approval/);
  });

  it('aborts the running tool through ctx.signal when the run is cancelled', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'wait for cancel' });
    await env.waitForRun(runId, () => ledger.started.includes('call_1_0'));
    await env.client.cancel(runId);
    await expect(env.result(runId)).rejects.toThrow();
    expect(ledger.aborted).toContain('call_1_0');
    expect((await env.client.getRun(runId)).status).toBe('cancelled');
  });
});

describe('time skipping', () => {
  const model = scriptedModel((request) =>
    request.messages.at(-1)?.role === 'tool' ? { text: 'Nobody approved.' } : (firstTurns['pay B 100'] as ScriptedTurn),
  );
  let env: RelayTestEnvironment;

  beforeAll(async () => {
    env = await createTestEnvironment({
      mode: 'time-skipping',
      tools: createTestTools(createLedger()),
      models: { scripted: model },
    });
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('moves the clock past a 24-hour approval deadline, and the run treats the call as timed out', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay', approvalTimeout: '24h' });
    const approval = await env.waitForApproval(runId);
    await env.advancePastApprovalTimeout(approval);
    expect(await env.result(runId)).toMatchObject({ output: 'Nobody approved.' });
    const events = await env.client.events(runId);
    const timedOut = events.find((event) => event.type === 'tool_approval_timed_out');
    expect(Date.parse(timedOut?.at ?? '') - Date.parse(approval.requestedAt)).toBeGreaterThanOrEqual(86_400_000);
  });

  it('moves the clock past the deadline once it has jumped ahead of the worker clock that stamped it', async () => {
    // The server's clock now runs 30 days ahead of the worker's, which requestedAt and expiresAt are read from.
    await env.advanceTime('30 days');
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay', approvalTimeout: '24h' });
    const approval = await env.waitForApproval(runId);
    await env.advancePastApprovalTimeout(approval);
    // Queries let no time skip, unlike result(): only the advance can have ended the wait.
    await env.waitForRun(runId, (run) => run.pendingApprovals.length === 0, { timeoutMs: 5_000 });
    expect((await env.client.events(runId)).map((event) => event.type)).toContain('tool_approval_timed_out');
    expect(await env.result(runId)).toMatchObject({ output: 'Nobody approved.' });
  });

  it('lets time skip while it waits for a result, so a waiting run times out on its own', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay', approvalTimeout: '7 days' });
    expect(await env.result(runId)).toMatchObject({ output: 'Nobody approved.' });
    expect(model.requestsOf(runId)[1]?.messages.at(-1)).toMatchObject({ result: { errorType: 'approval_timeout' } });
  });

  it('records a run that replays against the current workflow code, and names a history that no longer does', async () => {
    const directory = await mkdtemp(path.join(os.tmpdir(), 'relay-e-histories-'));
    try {
      const { runId } = await env.client.startRun({ ...base, prompt: 'pay', approvalTimeout: '1h' });
      await env.result(runId);
      await env.recordHistory(runId, path.join(directory, 'timed-out.json'));
      expect(await replayHistories(directory)).toEqual(['timed-out.json']);

      // A history whose model activity had another name is one the current code cannot have written.
      const recorded = await readFile(path.join(directory, 'timed-out.json'), 'utf8');
      await writeFile(path.join(directory, 'renamed.json'), recorded.replaceAll('"callModel"', '"callOtherModel"'));
      const failure = await replayHistories(directory).catch((error: unknown) => error);
      expect(failure).toBeInstanceOf(HistoryReplayError);
      expect((failure as HistoryReplayError).failures.map(({ file }) => file)).toEqual(['renamed.json']);
    } finally {
      await rm(directory, { recursive: true, force: true });
    }
  });

  it('cannot list pending approvals: the test server answers no visibility queries', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'pay' });
    await env.waitForApproval(runId);
    const failure = await env.client.listPendingApprovals({ tenantId: 'acme' }).catch((error: unknown) => error);
    // gRPC status 12, UNIMPLEMENTED: ListWorkflowExecutions is not part of the test server.
    expect(failure).toMatchObject({ message: 'Failed to list workflows', cause: { code: 12 } });
    await env.client.cancel(runId);
  });
});

describe('an encrypted test environment', () => {
  const encryption = { keys: { test: randomBytes(32) } };
  let env: RelayTestEnvironment;

  beforeAll(async () => {
    env = await createTestEnvironment({
      mode: 'time-skipping',
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel([firstTurns['add 2 and 3'] as ScriptedTurn, { text: 'Five.' }]) },
      encryption,
      // A codec given only in the worker options: createWorker uses it, and so must the client.
      workerOptions: { dataConverter: { payloadCodecs: [markingCodec] } },
    });
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('gives the worker and the client the same keys: history holds ciphertext, the test reads plaintext', async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'add 2 and 3' });
    expect(await env.result(runId)).toMatchObject({ output: 'Five.' });
    const history = await env.temporal.workflow.getHandle(runId).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0];
    expect(Buffer.from(input?.metadata?.['encoding'] ?? []).toString()).toBe(encryptedEncoding);
    expect(Buffer.from(input?.data ?? []).toString()).not.toContain('add 2 and 3');
  });

  it("gives the client the worker options' codec too: it writes through it and reads what the worker wrote", async () => {
    const { runId } = await env.client.startRun({ ...base, prompt: 'add 2 and 3' });
    expect(await env.result(runId)).toMatchObject({ output: 'Five.' });
    const history = await env.temporal.workflow.getHandle(runId).fetchHistory();
    const input = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads?.[0] ?? {};
    const [decrypted] = await new AesGcmPayloadCodec(encryption).decode([input]);
    expect(Buffer.from(decrypted?.metadata?.['encoding'] ?? []).toString()).toBe(markedEncoding);
  });
});

describe('a local test environment', () => {
  let env: RelayTestEnvironment;

  beforeAll(async () => {
    env = await createTestEnvironment({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel([firstTurns['pay B 100'] as ScriptedTurn, { text: 'ok' }]) },
    });
  });

  afterAll(async () => {
    await env?.teardown();
  });

  it('finds waiting runs through search attributes, which the dev server registers at start', async () => {
    const tenantId = 'visible-tenant';
    const { runId } = await env.client.startRun({ ...base, tenantId, prompt: 'pay' });
    await env.waitForApproval(runId);
    await expect
      .poll(() => env.client.listPendingApprovals({ tenantId }), { timeout: 10_000 })
      .toEqual({
        approvals: [expect.objectContaining({ runId, toolCallId: 'call_1_0' })],
        unanswered: [],
        hasMore: false,
      });
    await env.client.cancel(runId);
  });

  it('starts the dev server with the dispatch cap lifted', async () => {
    const children = execFileSync('ps', ['-o', 'args=', '--ppid', String(process.pid)], { encoding: 'utf8' });
    const devServer = children.split('\n').find((command) => command.includes('start-dev'));
    for (const [key, value] of Object.entries(liftedDispatchCap)) expect(devServer).toContain(`${key}=${value}`);
  });

  it('refuses to advance time, since a dev server runs in real time', async () => {
    const refusal = await env.advanceTime('1h').catch((error: unknown) => error);
    expect(RelayError.isInstance(refusal) && refusal.code).toBe('invalid_input');
  });
});

describe('a test environment given workflow interceptor modules', () => {
  it('bundles the workflows with them, as createWorker does, instead of reusing the shared bundle', async () => {
    const env = await createTestEnvironment({
      tools: createTestTools(createLedger()),
      models: { scripted: scriptedModel([{ text: 'done' }]) },
      workerOptions: {
        interceptors: {
          workflowModules: [path.join(import.meta.dirname, '../fixtures/testing/answering-interceptor.ts')],
        },
      },
    });
    try {
      const { runId } = await env.client.startRun({ ...base, prompt: 'hello' });
      await env.result(runId);
      expect(await env.client.temporal.workflow.getHandle(runId).query('intercepted')).toBe(
        'by the interceptor module',
      );
    } finally {
      await env.teardown();
    }
  }, 120_000);
});
