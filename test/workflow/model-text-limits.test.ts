import { randomUUID } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { temporal } from '@temporalio/proto';
import { describe, expect, it, vi } from 'vitest';
import { inspectCommand } from '../../src/cli/inspect-command.js';
import { RelayClient } from '../../src/client/relay-client.js';
import { readHistory } from '../../src/client/read-history.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ModelCall } from '../../src/model/model-provider.js';
import { closedRunMemoKey, maxRecordedOutputBytes, readClosedRunMemo } from '../../src/shared/closed-run-record.js';
import { defaultMaxModelResponseBytes } from '../../src/shared/payload-limits.js';
import type { RunEvent, RunSnapshot } from '../../src/shared/run-types.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { relayWorkflowBundle } from '../../src/testing/relay-workflow-bundle.js';
import { recordHistory, replayHistories } from '../../src/testing/replay-histories.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { eventTypes, useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';

// Runs whose model answers with a text just under the largest model response a worker accepts, read back every
// public way: the client, the HTTP API and its event stream, and `relay-e inspect`, with a worker and without.

const kit = useRelayTestKit();

/** The scripted model's response is the text, usage and a finish reason: 512 bytes cover all but the text. */
const longText = (letter: string) => letter.repeat(defaultMaxModelResponseBytes - 512);

/** gRPC's default message limit, which one page of history (and one query answer) must stay under. */
const grpcMessageLimit = 4 * 1024 * 1024;

async function startWorker(script: (call: ModelCall) => ScriptedTurn): Promise<RunningWorker> {
  return kit.startWorker({ tools: createTestTools(createLedger()), models: { scripted: scriptedModel(script) } });
}

async function workflowTaskFailures(runId: string): Promise<number> {
  const history = await readHistory(kit.temporal, runId);
  return (history.events ?? []).filter((event) => event.workflowTaskFailedEventAttributes).length;
}

async function historyBytes(runId: string): Promise<number> {
  return temporal.api.history.v1.History.encode(await readHistory(kit.temporal, runId)).finish().length;
}

/** A client of its own on the task queue, so reads after the worker stopped use no state of the worker's client. */
function connectClient(taskQueue: string): Promise<RelayClient> {
  return RelayClient.connect({ connection: kit.env.connection, namespace: kit.namespace, taskQueue });
}

/** The run's snapshot and events as `relay-e inspect --json` prints them. */
async function inspect(runId: string, taskQueue: string): Promise<{ snapshot: RunSnapshot; events: RunEvent[] }> {
  const written: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk) => {
    written.push(String(chunk));
    return true;
  });
  try {
    const args = ['--address', kit.address, '--namespace', kit.namespace, '--task-queue', taskQueue];
    expect(await inspectCommand.run([runId, '--json', ...args])).toBe(0);
  } finally {
    write.mockRestore();
  }
  return JSON.parse(written.join('')) as { snapshot: RunSnapshot; events: RunEvent[] };
}

/** The run's snapshot and event stream over HTTP. */
async function readOverHttp(client: RelayClient, runId: string, tenantId: string) {
  const api = await startApiServer({ client, apiKeys: new Map([['key-model-text-limits', { tenantId }]]) });
  const headers = { authorization: 'Bearer key-model-text-limits' };
  try {
    const snapshot = (await (await fetch(`${api.url}/v1/runs/${runId}`, { headers })).json()) as RunSnapshot;
    const stream = await (await fetch(`${api.url}/v1/runs/${runId}/events`, { headers })).text();
    const events = [...stream.matchAll(/^data: (.*)$/gm)].map(([, data]) => JSON.parse(data ?? '') as RunEvent);
    return { snapshot, events };
  } finally {
    await api.close();
  }
}

/** Every public read of the run: the client's, the HTTP API's and inspect's, which must all agree. */
async function readEveryWay(client: RelayClient, runId: string, tenantId: string) {
  const read = { snapshot: await client.getRun(runId), events: await client.events(runId) };
  expect(await readOverHttp(client, runId, tenantId)).toEqual(read);
  expect(await inspect(runId, client.taskQueue)).toEqual(read);
  return read;
}

describe('a model text just under maxModelResponseBytes', () => {
  it('completes, reads back whole every way with a worker and without, and stays out of the listed memo', async () => {
    const tenantId = `big-${randomUUID().slice(0, 8)}`;
    const answer = longText('a');
    const worker = await startWorker(() => ({ text: answer }));
    const runIds: string[] = [];
    try {
      // Four of them: a page of runs whose memos each held the answer would not fit in one gRPC message.
      for (let index = 0; index < 4; index++) {
        const { runId } = await worker.client.startRun({ tenantId, model: 'scripted:test', prompt: 'big' });
        runIds.push(runId);
      }
      for (const runId of runIds) expect((await worker.client.result(runId)).output).toBe(answer);
      const runId = runIds[0] ?? '';
      expect(await workflowTaskFailures(runId)).toBe(0);

      const withWorker = await readEveryWay(worker.client, runId, tenantId);
      expect(withWorker.snapshot).toMatchObject({ status: 'completed', output: answer });
      expect(eventTypes(withWorker.events)).toEqual(['run_started', 'model_responded', 'run_completed']);
      expect(withWorker.events[1]).toMatchObject({ type: 'model_responded', text: answer });
      expect(withWorker.events[2]).toMatchObject({ type: 'run_completed', output: answer });
      expect(withWorker.snapshot.lastEventSeq).toBe(3);

      const listed = await worker.client.listRuns({ tenantId, limit: 10 });
      expect(listed.runs.map((run) => run.runId).sort()).toEqual([...runIds].sort());
      const memo = (await kit.temporal.workflow.getHandle(runId).describe()).memo ?? {};
      expect(JSON.stringify(memo).length).toBeLessThan(64 * 1024);
    } finally {
      await worker.stop();
    }
    // Closed and with no worker left: the record in the memo and the result in history give the same.
    const client = await connectClient(worker.taskQueue);
    try {
      const withoutWorker = await readEveryWay(client, runIds[0] ?? '', tenantId);
      expect(withoutWorker.snapshot.output).toBe(answer);
      expect(eventTypes(withoutWorker.events)).toEqual(['run_started', 'model_responded', 'run_completed']);
      expect(withoutWorker.events[1]).toMatchObject({ text: answer });
    } finally {
      await client.close();
    }
  }, 120_000);

  it('reaches the next model call when a tool step follows, and the run completes with a history over 4 MiB', async () => {
    const tenantId = 'acme';
    const first = longText('a');
    // A second long text with a call: each model call refers to the context stored with the answer before it, so
    // each text is in history once. 4 KiB shorter, so that it fits the transcript budget beside the elided first.
    const second = 'c'.repeat(first.length - 4096);
    const answer = longText('b');
    const seenByModel: TranscriptMessage[][] = [];
    const worker = await startWorker((call) => {
      seenByModel.push(call.messages);
      if (call.step === 1) return { text: first, toolCalls: [{ name: 'add', input: { a: 1, b: 2 } }] };
      if (call.step === 2) return { text: second, toolCalls: [{ name: 'add', input: { a: 3, b: 4 } }] };
      return { text: answer };
    });
    const { runId } = await worker.client.startRun({ tenantId, model: 'scripted:test', prompt: 'big, then a tool' });
    try {
      expect((await worker.client.result(runId)).output).toBe(answer);
      expect(seenByModel[1]?.find((message) => message.role === 'assistant')).toMatchObject({ content: first });
      // Compaction elided the first text once the second joined it.
      expect(seenByModel[2]?.filter((message) => message.role === 'assistant')).toMatchObject([
        { content: expect.stringMatching(/^a{256}… \[Text removed/) as unknown },
        { content: second },
      ]);
      expect(await workflowTaskFailures(runId)).toBe(0);
      // More than one gRPC message holds, which the server's default page would send at once; the reads page it.
      expect(await historyBytes(runId)).toBeGreaterThan(grpcMessageLimit);
      // It records, plain and gzipped, and replays as it ran.
      const directory = await mkdtemp(path.join(tmpdir(), 'relay-e-big-history-'));
      const [plain, gzipped] = [path.join(directory, 'big.json'), path.join(directory, 'big.json.gz')];
      await recordHistory(kit.temporal.workflow.getHandle(runId), plain);
      await recordHistory(kit.temporal.workflow.getHandle(runId), gzipped);
      expect(await replayHistories(directory, { workflowBundle: await relayWorkflowBundle() })).toEqual([
        'big.json',
        'big.json.gz',
      ]);
      expect((await stat(gzipped)).size).toBeLessThan((await stat(plain)).size / 10);
      await rm(directory, { recursive: true });
      expect((await worker.client.toolCatalog(runId)).map((tool) => tool.name)).toContain('add');

      // The closed run's record cannot hold the first text, so the worker answers with the whole log.
      const { snapshot, events } = await readEveryWay(worker.client, runId, tenantId);
      expect(snapshot).toMatchObject({ status: 'completed', output: answer, lastEventSeq: events.length });
      expect(eventTypes(events)).toEqual([
        'run_started',
        'model_responded',
        'tool_call_validated',
        'tool_succeeded',
        'model_responded',
        'tool_call_validated',
        'tool_succeeded',
        'transcript_compacted',
        'model_responded',
        'run_completed',
      ]);
      expect(events.map((event) => event.seq)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
      expect(events[1]).toMatchObject({ text: first });
      expect(events[4]).toMatchObject({ text: second });
      expect(events[8]).toMatchObject({ text: answer });
    } finally {
      await worker.stop();
    }
    // Without a worker the record says what it lacks: a marker counts the events it had to leave out.
    const client = await connectClient(worker.taskQueue);
    try {
      const events = await client.events(runId);
      expect(events[0]).toMatchObject({ type: 'events_dropped', dropped: 5, firstKeptSeq: 6 });
      expect(eventTypes(events.slice(1))).toEqual([
        'tool_call_validated',
        'tool_succeeded',
        'transcript_compacted',
        'model_responded',
        'run_completed',
      ]);
      expect((await client.getRun(runId)).output).toBe(answer);
    } finally {
      await client.close();
    }
  }, 120_000);

  it('ends the run failed with payload_too_large, told in an event, when the text and its tool output do not fit the transcript', async () => {
    // The newest turn is never elided: the text and an 8 KB output are over maxTranscriptBytes (1 MiB by default).
    const output = { name: 'repeat_text', input: { text: 'o'.repeat(100), times: 80 } };
    const worker = await startWorker((call) =>
      call.step === 1 ? { text: longText('a'), toolCalls: [output] } : { text: 'x' },
    );
    try {
      const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'big' });
      await expect(worker.client.result(runId)).rejects.toThrow();
      expect(await workflowTaskFailures(runId)).toBe(0);
      const { snapshot, events } = await readEveryWay(worker.client, runId, 'acme');
      expect(snapshot).toMatchObject({ status: 'failed', lastEventSeq: events.length });
      expect(events[1]).toMatchObject({ type: 'model_responded', text: longText('a') });
      expect(events.at(-1)).toMatchObject({ type: 'run_failed', code: 'payload_too_large' });
    } finally {
      await worker.stop();
    }
  }, 120_000);

  it('is just under: 512 bytes more and the response is over the limit, refused with payload_too_large', async () => {
    const worker = await startWorker(() => ({ text: `${longText('a')}${'a'.repeat(512)}` }));
    try {
      const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'too big' });
      await expect(worker.client.result(runId)).rejects.toThrow();
      expect((await worker.client.events(runId)).at(-1)).toMatchObject({
        type: 'run_failed',
        code: 'payload_too_large',
      });
      expect((await worker.client.getRun(runId)).error).toContain('(maxModelResponseBytes)');
      expect(await workflowTaskFailures(runId)).toBe(0);
      await recordHistoryIfRequested(
        kit.temporal.workflow.getHandle(runId),
        currentHistoryFile('model-response-over-limit'),
      );
    } finally {
      await worker.stop();
    }
  });

  it('leaves an answer longer than a closed run record holds to the run result, and reads it back from there', async () => {
    const answer = 'c'.repeat(maxRecordedOutputBytes + 1_000);
    const worker = await startWorker(() => ({ text: answer }));
    const { runId } = await worker.client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'long' });
    await worker.client.result(runId);
    await worker.stop();
    const memo = (await kit.temporal.workflow.getHandle(runId).describe()).memo?.[closedRunMemoKey];
    // With the output left out the record is short enough to stay plain JSON in the memo.
    expect(memo).not.toBeInstanceOf(Uint8Array);
    const record = readClosedRunMemo(memo, runId);
    expect(record?.snapshot.output).toBeUndefined();
    expect(record?.outputInResult).toEqual({
      bytes: answer.length,
      fields: [
        { seq: 2, field: 'text' },
        { seq: 3, field: 'output' },
      ],
    });
    const client = await connectClient(worker.taskQueue);
    try {
      expect(await client.getRun(runId)).toMatchObject({ output: answer });
      expect((await client.events(runId)).slice(1)).toMatchObject([{ text: answer }, { output: answer }]);
    } finally {
      await client.close();
    }
    await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId), currentHistoryFile('long-output-in-result'));
  });
});
