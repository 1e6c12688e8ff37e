import { randomUUID } from 'node:crypto';
import { Client } from '@temporalio/client';
import { defaultPayloadConverter } from '@temporalio/common';
import type { Payload, ProtoFailure } from '@temporalio/common';
import { DefaultLogger, Runtime } from '@temporalio/worker';
import type { Worker } from '@temporalio/worker';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { RelayClient } from '../../src/client/relay-client.js';
import {
  AesGcmPayloadCodec,
  encryptionKeyIdMetadataKey,
  encryptionWorkflowIdMetadataKey,
} from '../../src/security/aes-gcm-payload-codec.js';
import type { EncryptionOptions } from '../../src/security/encryption-keys.js';
import { ModelProviderError } from '../../src/model/model-provider.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { createTestEnvironment } from '../../src/testing/create-test-environment.js';
import { bundleRelayWorkflows, createWorker } from '../../src/worker/index.js';
import { bundlesNoFailureConverter } from '../../src/worker/relay-workflows.js';
import { latch } from '../helpers/latch.js';
import { waitForRun } from '../helpers/relay-test-kit.js';
import { connectTemporalTestEnv, uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import type { TemporalTestEnv } from '../helpers/temporal-test-env.js';
import { newKey, rawRunRecord } from './security-test-kit.js';
import { createRunTenantLookup } from '../../src/client/run-tenants.js';
import { startCodecServer } from '../../src/cli/codec-server-command.js';

const prompt = 'PROMPT-PLAINTEXT-7f3a: what does the note say?';
const toolInput = 'TOOL-INPUT-9c1e';
const toolOutput = 'TOOL-RESULT-5d2b';
const answer = 'ANSWER-PLAINTEXT-e8d0';

const readNote = defineTool({
  name: 'read_note',
  description: 'Read a private note.',
  inputSchema: z.object({ note: z.string() }),
  execute: async ({ note }) => ({ note, text: toolOutput }),
});

const sendNote = defineTool({
  name: 'send_note',
  description: 'Send a private note to someone.',
  inputSchema: z.object({ note: z.string() }),
  requiresApproval: true,
  execute: async ({ note }) => ({ sent: note, receipt: toolOutput }),
});

const script = (toolName: string): ScriptedTurn[] => [
  { toolCalls: [{ id: 'c1', name: toolName, input: { note: toolInput } }] },
  { text: answer },
];

const oldKeys: EncryptionOptions = { keys: { 'k-2024': newKey() } };
const rotatedKeys: EncryptionOptions = { keys: { ...oldKeys.keys, 'k-2025': newKey() }, currentKeyId: 'k-2025' };
const base = { tenantId: 'acme', model: 'scripted:test', prompt } as const;

let env: TemporalTestEnv;
let bundle: ReturnType<typeof bundleRelayWorkflows>;
/** The bundle for encrypting workers: with the failure converter that encryption adds. */
let encryptingBundle: ReturnType<typeof bundleRelayWorkflows>;
/** Each started worker and its `run()` promise. */
const running = new Map<Worker, Promise<void>>();

beforeAll(async () => {
  env = await connectTemporalTestEnv();
  bundle = bundleRelayWorkflows({ logger: new DefaultLogger('WARN') });
  encryptingBundle = bundleRelayWorkflows({ logger: new DefaultLogger('WARN'), encryption: true });
});

afterAll(async () => {
  await Promise.all([...running.keys()].map((worker) => stopWorker(worker)));
  await env.close();
});

async function startWorker(taskQueue: string, toolName: string, encryption?: EncryptionOptions): Promise<Worker> {
  const worker = await createWorker({
    tools: [readNote, sendNote],
    models: { scripted: scriptedModel(script(toolName)) },
    taskQueue,
    namespace: env.namespace,
    connection: env.nativeConnection,
    workflowBundle: await (encryption ? encryptingBundle : bundle),
    ...(encryption ? { encryption } : {}),
  });
  running.set(worker, worker.run());
  return worker;
}

async function stopWorker(worker: Worker): Promise<void> {
  const run = running.get(worker);
  running.delete(worker);
  if (worker.getState() === 'RUNNING') worker.shutdown();
  await run;
}

function connectClient(taskQueue: string, encryption?: EncryptionOptions): Promise<RelayClient> {
  return RelayClient.connect({
    connection: env.connection,
    namespace: env.namespace,
    taskQueue,
    ...(encryption ? { encryption } : {}),
  });
}

/** The values of one metadata key over the encrypted payloads of a run's history (`-` where a payload lacks it). */
async function metadataInHistory(runId: string, metadataKey: string): Promise<Set<string>> {
  const history = await env.client.workflow.getHandle(runId).fetchHistory();
  const values = new Set<string>();
  const walk = (item: unknown): void => {
    if (typeof item !== 'object' || item === null || item instanceof Uint8Array) return;
    const metadata = (item as { metadata?: Record<string, Uint8Array> }).metadata;
    if (metadata?.[encryptionKeyIdMetadataKey]) {
      const value = metadata[metadataKey];
      values.add(value ? Buffer.from(value).toString('utf8') : '-');
    }
    Object.values(item).forEach(walk);
  };
  walk(history);
  return values;
}

/** The key ids named by the encrypted payloads of a run's history. */
function keyIdsInHistory(runId: string): Promise<Set<string>> {
  return metadataInHistory(runId, encryptionKeyIdMetadataKey);
}

describe('payload encryption', () => {
  it('stores plaintext in history without encryption, so the scan below can see it', async () => {
    const taskQueue = uniqueTaskQueue('plain');
    const worker = await startWorker(taskQueue, 'read_note');
    const client = await connectClient(taskQueue);
    try {
      const { runId } = await client.startRun(base);
      await client.result(runId);
      const raw = await rawRunRecord(env.client, runId);
      for (const text of [prompt, toolInput, toolOutput, answer]) expect(raw).toContain(text);
    } finally {
      await stopWorker(worker);
    }
  });

  it('completes a run whose raw history, memo and summaries hold none of the prompt, tool input or result', async () => {
    const taskQueue = uniqueTaskQueue('encrypted');
    const worker = await startWorker(taskQueue, 'read_note', rotatedKeys);
    const client = await connectClient(taskQueue, rotatedKeys);
    try {
      const { runId } = await client.startRun(base);
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: answer });
      const events = await client.events(runId);
      expect(events.find((event) => event.type === 'tool_succeeded')).toMatchObject({
        output: { note: toolInput, text: toolOutput },
      });

      const raw = await rawRunRecord(env.client, runId);
      for (const text of [prompt, toolInput, toolOutput, answer, 'PROMPT-PLAINTEXT']) expect(raw).not.toContain(text);
      // What stays readable: the workflow type, the task queue and the search attributes (tenant, status).
      expect(raw).toContain('agentRun');
      expect(raw).toContain('acme');
      expect(await keyIdsInHistory(runId)).toEqual(new Set(['k-2025']));
      // Every payload names the run it belongs to: input, activity inputs and results, signals, memo, the result.
      expect(await metadataInHistory(runId, encryptionWorkflowIdMetadataKey)).toEqual(new Set([runId]));

      const description = await client.temporal.workflow.getHandle(runId).describe();
      expect(description.memo).toMatchObject({ model: 'scripted:test', prompt });
      expect(await description.staticSummary()).toContain('PROMPT-PLAINTEXT-7f3a');
    } finally {
      await stopWorker(worker);
    }
  });

  it('refuses an encrypted run to a client without keys, naming the key and the setting to give', async () => {
    const taskQueue = uniqueTaskQueue('keyless');
    const worker = await startWorker(taskQueue, 'read_note', rotatedKeys);
    const client = await connectClient(taskQueue, rotatedKeys);
    const keyless = await connectClient(taskQueue);
    try {
      const { runId } = await client.startRun(base);
      await client.result(runId);

      await expect(keyless.getRun(runId, { tenantId: 'acme' })).rejects.toMatchObject({
        code: 'decryption_failed',
        message:
          "A payload is encrypted with key 'k-2025', and this process holds no encryption keys: give it the " +
          "workers' keys (RELAY_E_ENCRYPTION_KEYS, or the encryption option)",
      });
    } finally {
      await stopWorker(worker);
    }
  });

  it('keeps reading a run written with an old key after the workers rotate to a new one', async () => {
    const taskQueue = uniqueTaskQueue('rotation');
    const before = await startWorker(taskQueue, 'send_note', oldKeys);
    const oldClient = await connectClient(taskQueue, oldKeys);
    const { runId } = await oldClient.startRun(base);
    await waitForRun(oldClient, runId, (snapshot) => snapshot.pendingApprovals.length === 1);
    await stopWorker(before);

    // A fresh worker has no cached run: it replays the history written with k-2024, then writes with k-2025.
    const after = await startWorker(taskQueue, 'send_note', rotatedKeys);
    const client = await connectClient(taskQueue, rotatedKeys);
    try {
      await client.approve(runId, 'call_1_0', { approver: 'ops' });
      expect(await client.result(runId)).toMatchObject({ status: 'completed', output: answer });
      expect(await keyIdsInHistory(runId)).toEqual(new Set(['k-2024', 'k-2025']));
      // The decision (an update from the client) and the approved call's payloads name the run too.
      expect(await metadataInHistory(runId, encryptionWorkflowIdMetadataKey)).toEqual(new Set([runId]));
      await expect(oldClient.result(runId)).rejects.toThrow(
        "A payload is encrypted with key 'k-2025', which this process does not hold (known: k-2024)",
      );
    } finally {
      await stopWorker(after);
    }
  });

  it('fails the workflow task with a clear error, encrypted with the worker’s key, on a worker that lacks the key', async () => {
    const taskQueue = uniqueTaskQueue('unknown-key');
    const workerKeys = { keys: { 'k-other': newKey() } };
    const worker = await startWorker(taskQueue, 'read_note', workerKeys);
    const client = await connectClient(taskQueue, rotatedKeys);
    try {
      const { runId } = await client.startRun(base);
      const failure = await waitForWorkflowTaskFailure(runId);
      // Encrypted as every failure of an encrypting worker is, with this worker's key: its keys (and its log) read it.
      expect(failure.message).toBe('Encoded failure');
      expect(await decodedFailureMessage(failure, workerKeys)).toContain(
        "A payload is encrypted with key 'k-2025', which this process does not hold",
      );
      await client.temporal.workflow.getHandle(runId).terminate('test done');
    } finally {
      await stopWorker(worker);
    }
  });
});

/** Customer data as a tool's and a provider's errors carry it. */
const toolFailure = 'TOOL-FAILURE-4b7e: HTTP 402 for jane.doe@example.com';
const modelFailure = 'MODEL-FAILURE-a91c: quota exceeded for jane.doe@example.com';
/** Where the failures' stack traces point: the tool activity, and the workflow that fails the run. */
const stackFiles = ['execute-tool.ts', 'agent-run.ts'];

/** What a run whose tool fails twice and whose model then fails left to read. */
interface FailedRun {
  runId: string;
  /** The raw record while the tool's second attempt runs: the first attempt's failure is the activity's last one. */
  rawWhileRetrying: string;
  /** The raw record once the run failed (ACTIVITY_TASK_FAILED, WORKFLOW_EXECUTION_FAILED). */
  rawAfterwards: string;
  /** The run's events as a client with the worker's keys reads them. */
  events: RunEvent[];
  /** What that client's `result()` rejected with. */
  resultError: unknown;
}

/**
 * Runs a tool that throws on both its attempts, then a model that fails the run, on a worker with `encryption` given
 * this file's bundle for it, or bundling its workflows on start as `relay-e worker` does.
 */
async function runFailingToolThenModel(
  encryption?: EncryptionOptions,
  { bundleOnStart = false } = {},
): Promise<FailedRun> {
  const taskQueue = uniqueTaskQueue(encryption ? 'failures-encrypted' : 'failures-plain');
  const secondAttempt = latch();
  let attempts = 0;
  const chargeCard = defineTool({
    name: 'charge_card',
    description: 'Charge the customer’s card.',
    inputSchema: z.object({}),
    retry: { maximumAttempts: 2, initialInterval: '100ms' },
    execute: async () => {
      attempts += 1;
      if (attempts === 2) {
        secondAttempt.reached();
        await secondAttempt.released;
      }
      throw new Error(toolFailure);
    },
  });
  const model = scriptedModel((request) => {
    if (request.step === 1) return { toolCalls: [{ id: 'c1', name: 'charge_card', input: {} }] };
    throw new ModelProviderError(modelFailure, { retryable: false });
  });
  const worker = await createWorker({
    tools: [chargeCard],
    models: { scripted: model },
    taskQueue,
    namespace: env.namespace,
    connection: env.nativeConnection,
    ...(bundleOnStart ? {} : { workflowBundle: await (encryption ? encryptingBundle : bundle) }),
    ...(encryption ? { encryption } : {}),
  });
  running.set(worker, worker.run());
  const client = await connectClient(taskQueue, encryption);
  try {
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'Charge the card.' });
    await secondAttempt.started;
    const rawWhileRetrying = await rawRunRecord(env.client, runId);
    secondAttempt.release();
    const resultError = await client.result(runId).then(
      () => undefined,
      (error: unknown) => error,
    );
    const events = await client.events(runId);
    return { runId, rawWhileRetrying, rawAfterwards: await rawRunRecord(env.client, runId), events, resultError };
  } finally {
    secondAttempt.release();
    await stopWorker(worker);
  }
}

describe('failure encryption', () => {
  it('stores failure messages and stack traces in the clear without encryption, so the scan below can see them', async () => {
    const { rawWhileRetrying, rawAfterwards } = await runFailingToolThenModel();
    expect(rawWhileRetrying).toContain(toolFailure);
    for (const text of [toolFailure, modelFailure, ...stackFiles]) expect(rawAfterwards).toContain(text);
  });

  it('stores a failing tool’s and a failed run’s messages and stack traces encrypted, and reads them with the keys', async () => {
    const { runId, rawWhileRetrying, rawAfterwards, events, resultError } = await runFailingToolThenModel(rotatedKeys);
    for (const raw of [rawWhileRetrying, rawAfterwards]) {
      for (const text of [toolFailure, modelFailure, 'jane.doe', ...stackFiles]) expect(raw).not.toContain(text);
    }
    expect(rawAfterwards).toContain('Encoded failure');
    // The failures' payloads name the run as the others do, so a codec token of its tenant reads them.
    expect(await metadataInHistory(runId, encryptionWorkflowIdMetadataKey)).toEqual(new Set([runId]));
    // The workflow decoded the activities' failures, and the client the run's.
    const errorOf = (type: 'tool_failed' | 'run_failed') => {
      const event = events.find((item) => item.type === type);
      return event && 'error' in event ? event.error : undefined;
    };
    expect(errorOf('tool_failed')).toContain(toolFailure);
    expect(errorOf('run_failed')).toContain(modelFailure);
    expect(((resultError as Error).cause as Error).message).toContain(modelFailure);
  });

  it('encrypts a failed run’s error on a worker that bundles its workflows on start', async () => {
    const { rawAfterwards, events } = await runFailingToolThenModel(rotatedKeys, { bundleOnStart: true });
    for (const text of [modelFailure, 'agent-run.ts']) expect(rawAfterwards).not.toContain(text);
    expect(events.at(-1)).toMatchObject({ type: 'run_failed' });
    expect(JSON.stringify(events.at(-1))).toContain(modelFailure);
  });

  it('warns when an encrypting worker is given a bundle without the failure converter, and only then', async () => {
    expect(bundlesNoFailureConverter(await bundle)).toBe(true);
    expect(bundlesNoFailureConverter(await encryptingBundle)).toBe(false);
    const warn = vi.spyOn(Runtime.instance().logger, 'warn');
    /** Whether creating an encrypting worker given `workflowBundle` warned of cleartext failures. */
    const warnsWith = async (workflowBundle: Awaited<typeof bundle>) => {
      warn.mockClear();
      const worker = await createWorker({
        tools: [readNote],
        models: { scripted: scriptedModel(script('read_note')) },
        taskQueue: uniqueTaskQueue('bundle-check'),
        namespace: env.namespace,
        connection: env.nativeConnection,
        workflowBundle,
        encryption: rotatedKeys,
      });
      running.set(worker, worker.run());
      // A worker stops only once it runs; the plugin starts it after its own start-up.
      await vi.waitFor(() => expect(worker.getState()).toBe('RUNNING'));
      await stopWorker(worker);
      return warn.mock.calls.some(([message]) => message.includes('bundleRelayWorkflows({ encryption: true })'));
    };
    try {
      expect(await warnsWith(await bundle)).toBe(true);
      expect(await warnsWith(await encryptingBundle)).toBe(false);
    } finally {
      warn.mockRestore();
    }
  });

  it('gives an encrypting test environment a bundle with the failure converter', async () => {
    const testEnv = await createTestEnvironment({
      mode: 'time-skipping',
      models: {
        scripted: scriptedModel(() => {
          throw new ModelProviderError(modelFailure, { retryable: false });
        }),
      },
      encryption: rotatedKeys,
    });
    try {
      const { runId } = await testEnv.client.startRun(base);
      const events = await testEnv.collectEvents(runId);
      expect(JSON.stringify(events.at(-1))).toContain(modelFailure);
      const raw = await rawRunRecord(testEnv.temporal, runId);
      expect(raw).toContain('Encoded failure');
      expect(raw).not.toContain(modelFailure);
    } finally {
      await testEnv.teardown();
    }
  });
});

describe('the codec server with a token limited to a tenant', () => {
  it('looks a run’s tenant up again after Temporal refused the first connection, and shares a lookup under way', async () => {
    const client = await connectClient(uniqueTaskQueue('lookup'), rotatedKeys);
    const { runId } = await client.startRun({ ...base, tenantId: 'acme' });
    let attempts = 0;
    const runTenants = createRunTenantLookup(async () => {
      attempts += 1;
      if (attempts === 1) throw new Error('Temporal is restarting');
      return { temporal: env.client, close: async () => {} };
    });
    const describeSpy = vi.spyOn(env.client.workflowService, 'describeWorkflowExecution');
    try {
      await expect(runTenants.tenantOf(runId)).rejects.toThrow('Temporal is restarting');
      // Before, the failed connection was kept: every later lookup failed until the codec server restarted.
      const answers = await Promise.all([runTenants.tenantOf(runId), runTenants.tenantOf(runId)]);
      expect(answers).toEqual(['acme', 'acme']);
      expect(attempts).toBe(2);
      expect(describeSpy.mock.calls.filter(([request]) => request.execution?.workflowId === runId)).toHaveLength(1);
    } finally {
      describeSpy.mockRestore();
      await env.client.workflow.getHandle(runId).terminate('no worker serves this test run');
      await runTenants.close();
    }
  });

  it('answers 503 naming the namespace, not the payloads still encrypted, when Temporal has no namespace by its name', async () => {
    const misnamed = new Client({ connection: env.client.connection, namespace: `no-such-${randomUUID()}` });
    const codec = await startTenantCodecServer(misnamed, 'acme-token-0123456789:acme');
    try {
      const encrypted = await new AesGcmPayloadCodec(rotatedKeys).encode([defaultPayloadConverter.toPayload(prompt)], {
        type: 'workflow',
        namespace: misnamed.options.namespace,
        workflowId: `run_${randomUUID()}`,
      });

      const response = await fetch(`${codec.url}/decode`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: 'Bearer acme-token-0123456789' },
        body: JSON.stringify({ payloads: encrypted.map(toCodecJson) }),
      });

      expect({ status: response.status, body: await response.json() }).toMatchObject({
        status: 503,
        body: { code: 'temporal_unavailable', detail: expect.stringContaining(misnamed.options.namespace) as unknown },
      });
    } finally {
      await codec.close();
    }
  });

  it('decrypts in a run’s history only what the token’s tenant owns, reading each run’s tenant from Temporal', async () => {
    const taskQueue = uniqueTaskQueue('codec-tenants');
    const worker = await startWorker(taskQueue, 'read_note', rotatedKeys);
    const client = await connectClient(taskQueue, rotatedKeys);
    const codec = await startTenantCodecServer(env.client, 'ops-token-0123456789,acme-token-0123456789:acme');
    try {
      const ofAcme = await client.startRun(base);
      const ofGlobex = await client.startRun({ ...base, tenantId: 'globex' });
      await Promise.all([client.result(ofAcme.runId), client.result(ofGlobex.runId)]);
      const startInput = async (runId: string) => {
        const history = await env.client.workflow.getHandle(runId).fetchHistory();
        return history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
      };
      const payloads = [...(await startInput(ofAcme.runId)), ...(await startInput(ofGlobex.runId))].map(toCodecJson);
      const decodeAs = async (token: string) => {
        const response = await fetch(`${codec.url}/decode`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ payloads }),
        });
        expect(response.status).toBe(200);
        const body = (await response.json()) as { payloads: Array<{ data: string }> };
        return body.payloads.map((payload) => Buffer.from(payload.data, 'base64').toString('utf8'));
      };
      const [acmeInput, globexInput] = await decodeAs('acme-token-0123456789');
      expect(acmeInput).toContain(prompt);
      expect(globexInput).toBe(Buffer.from(payloads[1]?.data ?? '', 'base64').toString('utf8'));
      expect(globexInput).not.toContain(prompt);
      expect((await decodeAs('ops-token-0123456789')).every((input) => input.includes(prompt))).toBe(true);
    } finally {
      await codec.close();
      await stopWorker(worker);
    }
  });
});

/** A codec server on a free port with these `RELAY_E_CODEC_TOKENS`, finding runs' tenants through `temporal`. */
async function startTenantCodecServer(
  temporal: Client,
  tokens: string,
): Promise<{ url: string; close(): Promise<void> }> {
  const runTenants = createRunTenantLookup(() => Promise.resolve({ temporal, close: async () => {} }));
  const codec = await startCodecServer({
    encryption: rotatedKeys,
    port: 0,
    host: '127.0.0.1',
    env: { RELAY_E_CODEC_TOKENS: tokens },
    runTenants,
  });
  return {
    url: codec.url,
    close: async () => {
      await codec.close();
      await runTenants.close();
    },
  };
}

/** A payload as the codec server's JSON carries it: each metadata value and the data in base64. */
function toCodecJson(payload: Payload): { metadata: Record<string, string>; data: string } {
  const base64 = (bytes: Uint8Array | null | undefined) => Buffer.from(bytes ?? []).toString('base64');
  const metadata = Object.entries(payload.metadata ?? {}).map(([key, value]) => [key, base64(value)]);
  return { metadata: Object.fromEntries(metadata) as Record<string, string>, data: base64(payload.data) };
}

async function waitForWorkflowTaskFailure(runId: string): Promise<ProtoFailure> {
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const history = await env.client.workflow.getHandle(runId).fetchHistory();
    const failed = history.events?.find((event) => event.workflowTaskFailedEventAttributes);
    const failure = failed?.workflowTaskFailedEventAttributes?.failure;
    if (failure) return failure;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`No workflow task failure in the history of ${runId}`);
}

/** A failure's message as a reader with `encryption`'s keys sees it: its encrypted attributes decoded. */
async function decodedFailureMessage(failure: ProtoFailure, encryption: EncryptionOptions): Promise<unknown> {
  const encoded = failure.encodedAttributes;
  if (!encoded) return failure.message;
  const [decoded] = await new AesGcmPayloadCodec(encryption).decode([encoded]);
  return defaultPayloadConverter.fromPayload<{ message?: unknown }>(decoded as Payload).message;
}
