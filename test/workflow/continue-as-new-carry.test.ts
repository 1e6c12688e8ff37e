import { decodeFromPayloadsAtIndex } from '@temporalio/common/lib/internal-non-workflow/index.js';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { AgentRunInput, RunEvent } from '../../src/shared/run-types.js';
import type { TranscriptMessage } from '../../src/shared/transcript.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { eventTypes, useRelayTestKit } from '../helpers/relay-test-kit.js';
import { currentHistoryFile, recordHistoryIfRequested } from '../helpers/replay-histories.js';

const kit = useRelayTestKit();

const base = { tenantId: 'acme', userId: 'u1', model: 'scripted:test' } as const;

const small = defineTool({
  name: 'small',
  description: 'Answers briefly.',
  inputSchema: z.object({}),
  execute: () => ({ ok: 1 }),
});

/** A tool whose output is 5,000 bytes: two of them are over an 8 KiB transcript budget. */
const big = defineTool({
  name: 'big',
  description: 'Answers at length.',
  inputSchema: z.object({}),
  execute: () => ({ blob: 'x'.repeat(5_000) }),
});

/** A failure's message and its causes' (the run's own reason is on the workflow failure's cause). */
function failureText(error: unknown): string {
  return error instanceof Error ? [error.message, failureText(error.cause)].filter(Boolean).join(': ') : '';
}

/** Runs `input` on a worker whose model plays `turns`; returns the run id and what the model saw at each step. */
async function runToEnd(input: Omit<AgentRunInput, keyof typeof base>, turns: readonly ScriptedTurn[]) {
  const model = scriptedModel(turns);
  const running = await kit.startWorker({ tools: [small, big], models: { scripted: model } });
  try {
    const { runId } = await running.client.startRun({ ...base, ...input });
    const outcome = await running.client.result(runId).then(
      (result) => `completed: ${result.stopReason}`,
      (error: unknown) => `threw: ${failureText(error)}`,
    );
    return { runId, outcome, requests: model.requestsOf(runId), events: await running.client.events(runId) };
  } finally {
    await running.stop();
  }
}

/** Records the run's first execution (and its newest, when `last` is given) when histories are being recorded. */
async function recordExecutions(runId: string, first: string, last?: string): Promise<void> {
  const handle = kit.temporal.workflow.getHandle(runId);
  const firstRunId = (await handle.describe()).raw.workflowExecutionInfo?.firstRunId ?? undefined;
  await recordHistoryIfRequested(kit.temporal.workflow.getHandle(runId, firstRunId), currentHistoryFile(first));
  if (last !== undefined) await recordHistoryIfRequested(handle, currentHistoryFile(last));
}

/** The input the run's newest execution started with, as its history records it. */
async function newestExecutionInput(runId: string): Promise<AgentRunInput | undefined> {
  const history = await kit.temporal.workflow.getHandle(runId).fetchHistory();
  const payloads = history.events?.[0]?.workflowExecutionStartedEventAttributes?.input?.payloads ?? [];
  return decodeFromPayloadsAtIndex<AgentRunInput>(kit.temporal.options.loadedDataConverter, 0, payloads);
}

const userTexts = (messages: readonly TranscriptMessage[]) =>
  messages.flatMap((message) => (message.role === 'user' ? [message.content] : []));

/** What the run's `transcript_compacted` event says of its compaction. */
function compactionIn(events: readonly RunEvent[]) {
  const event = events.find((candidate) => candidate.type === 'transcript_compacted');
  if (event?.type !== 'transcript_compacted') return undefined;
  const { elidedResults, elidedTexts, bytesBefore, bytesAfter } = event;
  return { elidedResults, elidedTexts, bytesBefore, bytesAfter };
}

const oneToolStep: ScriptedTurn[] = [{ toolCalls: [{ name: 'small', input: {} }] }, { text: 'done' }];

describe('continue-as-new carries the run’s input messages once', () => {
  it('continues a run whose input messages are about 1 MB, as a run that does not continue completes', async () => {
    const messages = Array.from({ length: 5 }, (_, index) => ({
      role: 'user' as const,
      content: String(index).repeat(195_000),
    }));
    const input = { messages, maxTranscriptBytes: 1_572_864, continueAsNewAfterSteps: 1 };
    const { outcome, requests } = await runToEnd(input, oneToolStep);
    expect(outcome).toBe('completed: final_answer');
    expect(userTexts(requests[1]?.messages ?? [])).toEqual(messages.map((message) => message.content));
  });

  it('starts the next execution without the messages, prompt and system message its transcript holds', async () => {
    const { runId, outcome, requests } = await runToEnd(
      {
        system: 'Be brief.',
        messages: [
          { role: 'user', content: 'first question' },
          { role: 'assistant', content: 'first answer' },
        ],
        prompt: 'second question',
        continueAsNewAfterSteps: 1,
      },
      oneToolStep,
    );
    await recordExecutions(runId, 'input-slimmed-first-execution', 'input-slimmed-last-execution');
    expect(outcome).toBe('completed: final_answer');
    const continued = await newestExecutionInput(runId);
    expect(continued).toMatchObject({ ...base, continueAsNewAfterSteps: 1 });
    expect(continued).not.toHaveProperty('messages');
    expect(continued).not.toHaveProperty('system');
    expect(JSON.stringify(continued)).not.toContain('question');
    const seen = requests[1]?.messages ?? [];
    expect(seen.slice(0, 4)).toEqual([
      { role: 'system', content: 'Be brief.' },
      { role: 'user', content: 'first question' },
      { role: 'assistant', content: 'first answer' },
      { role: 'user', content: 'second question' },
    ]);
  });
});

describe('a compaction made while carrying the transcript into continue-as-new', () => {
  it('is logged as transcript_compacted, as it is in a run that does not continue', async () => {
    const turns: ScriptedTurn[] = [
      { toolCalls: [{ name: 'big', input: {} }] },
      { toolCalls: [{ name: 'big', input: {} }] },
      { text: 'done' },
    ];
    const input = { prompt: 'go', maxTranscriptBytes: 8_192 };
    const staying = await runToEnd(input, turns);
    const continuing = await runToEnd({ ...input, continueAsNewAfterSteps: 2 }, turns);
    await recordExecutions(continuing.runId, 'compacted-while-carried');
    expect(continuing.outcome).toBe('completed: final_answer');
    expect(eventTypes(continuing.events)).toEqual(eventTypes(staying.events));
    expect(compactionIn(continuing.events)).toEqual(compactionIn(staying.events));
    expect(compactionIn(continuing.events)).toMatchObject({ elidedResults: 1 });
    expect(continuing.events.map((event) => event.seq)).toEqual(continuing.events.map((_event, index) => index + 1));
  });
});
