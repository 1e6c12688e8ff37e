import { expect } from 'vitest';
import type { ModelCall, ModelProvider } from '../../../src/model/model-provider.js';
import { ModelProviderError } from '../../../src/model/model-provider.js';
import type { ToolResult } from '../../../src/shared/tool-result.js';
import type { ModelResponse, ModelToolSpec, TranscriptMessage } from '../../../src/shared/transcript.js';

export const weatherTool: ModelToolSpec = {
  name: 'get_weather',
  description: 'Return the current weather for a city.',
  inputSchema: {
    type: 'object',
    properties: { city: { type: 'string', description: 'City name' } },
    required: ['city'],
    additionalProperties: false,
  },
};

/** The result of step 1's tool call, which every provider must carry back to the model in step 2. */
export const parisResult: ToolResult = {
  success: true,
  toolName: 'get_weather',
  toolCallId: 'call_paris',
  data: { city: 'Paris', celsius: 21 },
};

/** Step 1 of a run: the user's question, with the weather tool on offer. */
export function firstStepCall(modelName: string): ModelCall {
  return {
    model: `provider:${modelName}`,
    modelName,
    messages: [
      { role: 'system', content: 'You are a concise assistant.' },
      { role: 'user', content: 'What is the weather in Paris?' },
    ],
    tools: [weatherTool],
    step: 1,
    runId: 'run_weather',
    tenantId: 'tenant_a',
  };
}

/** Step 2: step 1's tool call and its result appended to the transcript, the way the workflow records them. */
export function secondStepCall(modelName: string): ModelCall {
  const first = firstStepCall(modelName);
  const stepOne: TranscriptMessage[] = [
    {
      role: 'assistant',
      content: '',
      toolCalls: [{ id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } }],
    },
    {
      role: 'tool',
      toolCallId: 'call_paris',
      toolName: 'get_weather',
      result: parisResult,
    },
  ];
  return { ...first, messages: [...first.messages, ...stepOne], step: 2 };
}

export function generate(provider: ModelProvider, call: ModelCall): Promise<ModelResponse> {
  return provider.generate(call, { signal: new AbortController().signal });
}

/** Runs a call with a text-delta listener, as the model activity does for a streaming provider. */
export async function streamed(
  provider: ModelProvider,
  call: ModelCall,
): Promise<{ response: ModelResponse; deltas: string[] }> {
  const deltas: string[] = [];
  const onTextDelta = (delta: string) => deltas.push(delta);
  const response = await provider.generate(call, { signal: new AbortController().signal, onTextDelta });
  return { response, deltas };
}

/** Runs a call that must fail and returns the ModelProviderError it failed with. */
export async function providerErrorOf(
  provider: ModelProvider,
  call: ModelCall,
  run: (provider: ModelProvider, call: ModelCall) => Promise<unknown> = generate,
): Promise<ModelProviderError> {
  const error: unknown = await run(provider, call).then(
    () => undefined,
    (reason: unknown) => reason,
  );
  expect(error).toBeInstanceOf(ModelProviderError);
  return error as ModelProviderError;
}
