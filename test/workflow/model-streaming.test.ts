import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readHistoryFacts } from '../../bench/lib/history-facts.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import { openaiCompatibleProvider } from '../../src/model/providers/openai-compatible-provider.js';
import type { RunEvent } from '../../src/shared/run-types.js';
import { chatCompletion, chatCompletionStream } from '../helpers/provider-wire-bodies.js';
import { startProviderWireServer } from '../helpers/provider-wire-server.js';
import type { ProviderWireServer } from '../helpers/provider-wire-server.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';

// A model that streams its answer over the OpenAI-compatible wire format, a piece every 250 ms: followers see
// the pieces as they come (ephemeral model_delta events read from the model call's heartbeat), and the run's
// history records the whole text once, exactly as for a model that does not stream.

const pieces = ['The ', 'ledger ', 'balances ', 'after ', 'the ', 'transfer ', 'are ', 'fine.'];
const answer = pieces.join('');
const pieceDelayMs = 250;

const kit = useRelayTestKit();
let wire: ProviderWireServer;
let streaming: RunningWorker;
let plain: RunningWorker;

beforeAll(async () => {
  wire = await startProviderWireServer('/v1');
  const provider = (stream: boolean) => openaiCompatibleProvider({ name: 'compat', baseURL: wire.baseURL, stream });
  streaming = await kit.startWorker({ tools: [], models: { compat: provider(true) } });
  plain = await kit.startWorker({ tools: [], models: { compat: provider(false) } });
});

afterAll(async () => {
  await wire.close();
});

const input = { tenantId: 'acme', model: 'compat:llama3.1', prompt: 'How is the ledger?' } as const;

async function follow(worker: RunningWorker, runId: string, until?: (event: RunEvent) => boolean) {
  const events: RunEvent[] = [];
  for await (const event of worker.client.watch(runId)) {
    events.push(event);
    if (until?.(event)) break;
  }
  return events;
}

function deltasOf(events: readonly RunEvent[]) {
  return events.flatMap((event) => (event.type === 'model_delta' ? [event] : []));
}

describe('a streaming model', () => {
  it('reaches a follower in pieces before the step ends, which add up to the durable text', async () => {
    wire.reply({ events: chatCompletionStream(pieces), delayMs: pieceDelayMs });
    const { runId } = await streaming.client.startRun(input);
    const events = await follow(streaming, runId);

    const deltas = deltasOf(events);
    const responded = events.findIndex((event) => event.type === 'model_responded');
    expect(deltas.length).toBeGreaterThanOrEqual(3);
    expect(events.findIndex((event) => event.type === 'model_delta')).toBeLessThan(responded);
    expect(deltas.map((delta) => delta.text).join('')).toBe(answer);
    expect(deltas.map((delta) => delta.offset)).toEqual(
      deltas.map((_, index) => deltas.slice(0, index).reduce((length, delta) => length + delta.text.length, 0)),
    );
    expect(events[responded]).toMatchObject({ type: 'model_responded', text: answer });
    // Deltas are not part of the durable log.
    expect((await streaming.client.events(runId)).map((event) => event.type)).not.toContain('model_delta');
  });

  it('gives a follower that joins mid-stream the pieces from then on, and the whole text at the step end', async () => {
    wire.reply({ events: chatCompletionStream(pieces), delayMs: pieceDelayMs });
    const { runId } = await streaming.client.startRun(input);
    await follow(streaming, runId, (event) => event.type === 'model_delta' && event.offset + event.text.length >= 8);
    const late = await follow(streaming, runId);

    const deltas = deltasOf(late);
    expect(deltas[0]?.offset).toBeGreaterThan(0);
    expect(answer.endsWith(deltas.map((delta) => delta.text).join(''))).toBe(true);
    expect(late.find((event) => event.type === 'model_responded')).toMatchObject({ text: answer });
  });

  it('sends deltas over HTTP without an event id, so Last-Event-ID keeps naming durable events', async () => {
    wire.reply({ events: chatCompletionStream(pieces), delayMs: pieceDelayMs });
    const api = await startApiServer({
      client: streaming.client,
      apiKeys: new Map([['key-acme-0123456789', { tenantId: 'acme' }]]),
    });
    try {
      const { runId } = await streaming.client.startRun(input);
      const response = await fetch(`${api.url}/v1/runs/${runId}/events`, {
        headers: { authorization: 'Bearer key-acme-0123456789' },
      });
      const blocks = (await response.text()).split('\n\n').filter((block) => block.startsWith('event:'));
      const deltas = blocks.filter((block) => block.startsWith('event: model_delta'));
      expect(deltas.length).toBeGreaterThanOrEqual(2);
      expect(deltas.every((block) => !/^id:/m.test(block))).toBe(true);
      expect(
        blocks.filter((block) => !block.startsWith('event: model_delta')).every((block) => /^id:/m.test(block)),
      ).toBe(true);
    } finally {
      await api.close();
    }
  });

  it('loses only deltas when a stream breaks mid-answer: the retried call streams again and its text is durable', async () => {
    const retried = pieces.map((piece) => piece.toUpperCase());
    wire.reply(
      { events: chatCompletionStream(pieces), delayMs: pieceDelayMs, hangUpAfter: 5 },
      { events: chatCompletionStream(retried), delayMs: pieceDelayMs },
    );
    const { runId } = await streaming.client.startRun(input);
    const events = await follow(streaming, runId);

    const deltas = deltasOf(events);
    const secondAttempt = deltas.filter((delta) => delta.attempt === 2);
    expect(deltas.some((delta) => delta.attempt === 1)).toBe(true);
    expect(secondAttempt[0]?.offset).toBe(0);
    expect(secondAttempt.map((delta) => delta.text).join('')).toBe(retried.join(''));
    expect(events.find((event) => event.type === 'model_responded')).toMatchObject({ text: retried.join('') });
  });

  it('leaves a history no larger in events than the same answer not streamed', async () => {
    wire.reply({ events: chatCompletionStream(pieces), delayMs: pieceDelayMs });
    const streamed = await streaming.client.startRun(input);
    await streaming.client.result(streamed.runId);
    wire.reply({ body: chatCompletion({ content: answer }, 'stop') });
    const whole = await plain.client.startRun(input);
    await plain.client.result(whole.runId);

    const [streamedSize, wholeSize] = await Promise.all([
      readHistoryFacts(kit.temporal, streamed.runId),
      readHistoryFacts(kit.temporal, whole.runId),
    ]);
    expect(streamedSize.events).toBe(wholeSize.events);
    // Ids, identities and timings differ a little between any two runs; a text recorded twice would not fit here.
    expect(Math.abs(streamedSize.bytes - wholeSize.bytes)).toBeLessThan(answer.length);
  });
});
