/**
 * History per streamed step: the same one-step answer from an OpenAI-compatible wire server (on loopback), once
 * streamed (`stream: true`, text pieces as server-sent events) and once whole, at several answer lengths; history
 * events and bytes read back from the server, plus how many `model_delta` events a follower saw. Streaming must
 * not make history grow with the number of tokens.
 *
 *   npm run bench:streaming -- [--pieces 10,100,1000] [--piece-delay-ms 10]
 */
import { parseArgs } from 'node:util';
import { openaiCompatibleProvider } from '../src/model/providers/openai-compatible-provider.js';
import { chatCompletion, chatCompletionStream } from '../test/helpers/provider-wire-bodies.js';
import { startProviderWireServer } from '../test/helpers/provider-wire-server.js';
import { startBenchStack } from './lib/bench-stack.js';
import { readHistoryFacts } from './lib/history-facts.js';
import { numberList, writeResult } from './lib/measure-harness.js';

const { values } = parseArgs({
  options: {
    out: { type: 'string', default: 'streaming-history' },
    pieces: { type: 'string', default: '10,100,1000' },
    'piece-delay-ms': { type: 'string', default: '10' },
  },
});
const sizes = numberList(values.pieces);
const pieceDelayMs = Number(values['piece-delay-ms']);

const wire = await startProviderWireServer('/v1');
const provider = (stream: boolean) => openaiCompatibleProvider({ name: 'compat', baseURL: wire.baseURL, stream });
// Both model names have four letters, so the two runs' histories differ only in how the answer arrived.
const stack = await startBenchStack({ tools: [], models: { live: provider(true), once: provider(false) } });

try {
  const rows = [];
  for (const pieces of sizes) {
    const text = Array.from({ length: pieces }, (_, index) => `word${index} `);
    const input = { tenantId: 'bench', prompt: 'Say many words.' };

    wire.reply({ events: chatCompletionStream(text), delayMs: pieceDelayMs });
    const streamedRun = await stack.client.startRun({ ...input, model: 'live:llama3.1' });
    let deltas = 0;
    for await (const event of stack.client.watch(streamedRun.runId)) if (event.type === 'model_delta') deltas += 1;

    wire.reply({ body: chatCompletion({ content: text.join('') }, 'stop') });
    const wholeRun = await stack.client.startRun({ ...input, model: 'once:llama3.1' });
    await stack.client.result(wholeRun.runId);

    const [streamedFacts, wholeFacts] = await Promise.all([
      readHistoryFacts(stack.client.temporal, streamedRun.runId),
      readHistoryFacts(stack.client.temporal, wholeRun.runId),
    ]);
    const row = {
      pieces,
      textBytes: text.join('').length,
      streamMs: pieces * pieceDelayMs,
      followerDeltas: deltas,
      streamed: { events: streamedFacts.events, bytes: streamedFacts.bytes },
      whole: { events: wholeFacts.events, bytes: wholeFacts.bytes },
    };
    rows.push(row);
    console.log(
      `${String(pieces).padStart(5)} pieces: streamed ${row.streamed.events} events ${row.streamed.bytes} B ` +
        `(${deltas} deltas seen), whole ${row.whole.events} events ${row.whole.bytes} B`,
    );
  }
  writeResult(values.out, {
    description: 'history events and bytes of a one-step run, its answer streamed vs returned whole',
    pieceDelayMs,
    rows,
  });
} finally {
  await stack.stop();
  await wire.close();
}
