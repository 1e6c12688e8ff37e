/**
 * The peer variant, `@temporalio/ai-sdk`, served in its own process from this folder (its own package, since it
 * pins @temporalio/* 1.23.0): `node --import tsx peer-variant.ts --address host:port`. The model is the AI SDK's
 * own `MockLanguageModelV4` playing the same turns as every variant.
 */
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { AiSdkPlugin } from '@temporalio/ai-sdk';
import { Client, Connection } from '@temporalio/client';
import { DefaultLogger, NativeConnection, Runtime, Worker } from '@temporalio/worker';
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from '@ai-sdk/provider';
import { MockLanguageModelV4, MockProviderV4 } from 'ai/test';
import { agentPrompt, agentTurn, stepsInPrompt } from '../lib/agent-script.js';
import { serveVariant } from '../lib/variant-protocol.js';
import type { RunAnswer } from '../lib/variant-protocol.js';
import { peerActivities } from './peer-activities.js';
import type { peerAgent } from './peer-workflow.js';

const { values } = parseArgs({ options: { address: { type: 'string' } } });

// stdout carries the protocol; anything a library prints goes to stderr.
console.log = console.error;

/** The turn for this call: the step is one more than the tool results the prompt already holds. */
async function scriptedTurn(options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> {
  const user = options.prompt.find((message) => message.role === 'user');
  const text = user?.content.map((part) => (part.type === 'text' ? part.text : '')).join('') ?? '';
  const step = options.prompt.filter((message) => message.role === 'tool').length + 1;
  const turn = agentTurn(step, stepsInPrompt(text));
  const usage = {
    inputTokens: { total: 0, noCache: 0, cacheRead: 0, cacheWrite: 0 },
    outputTokens: { total: 0, text: 0, reasoning: 0 },
  };
  if ('text' in turn) {
    return {
      content: [{ type: 'text', text: turn.text }],
      finishReason: { unified: 'stop', raw: 'stop' },
      usage,
      warnings: [],
    };
  }
  return {
    content: [
      { type: 'tool-call', toolCallId: `call_${step}_0`, toolName: 'add', input: JSON.stringify(turn.toolCall) },
    ],
    finishReason: { unified: 'tool-calls', raw: 'tool_calls' },
    usage,
    warnings: [],
  };
}

Runtime.install({ logger: new DefaultLogger('ERROR') });
const address = values.address ?? '';
const nativeConnection = await NativeConnection.connect({ address });
const connection = await Connection.connect({ address });
const client = new Client({ connection });
const taskQueue = 'bench-peer';
const worker = await Worker.create({
  connection: nativeConnection,
  taskQueue,
  workflowsPath: fileURLToPath(new URL('./peer-workflow.ts', import.meta.url)),
  activities: peerActivities,
  plugins: [
    new AiSdkPlugin({
      modelProvider: new MockProviderV4({
        languageModels: { bench: new MockLanguageModelV4({ doGenerate: scriptedTurn }) },
      }),
    }),
  ],
});
const running = worker.run();
let runCounter = 0;

await serveVariant(async (command) => {
  if (command.type !== 'run') throw new Error('@temporalio/ai-sdk has no approval primitive to measure');
  const runMs: number[] = [];
  const ids: string[] = [];
  const started = performance.now();
  let next = 0;
  const lane = async () => {
    while (next < command.runs) {
      next++;
      const workflowId = `peer-${process.pid}-${++runCounter}`;
      const t0 = performance.now();
      await client.workflow.execute<typeof peerAgent>('peerAgent', {
        workflowId,
        taskQueue,
        args: [agentPrompt(command.steps), command.steps + 1],
      });
      runMs.push(performance.now() - t0);
      ids.push(workflowId);
    }
  };
  await Promise.all(Array.from({ length: Math.min(command.concurrency, command.runs) }, lane));
  return { ids, wallMs: performance.now() - started, runMs } satisfies RunAnswer;
});
worker.shutdown();
await running;
await connection.close();
await nativeConnection.close();
