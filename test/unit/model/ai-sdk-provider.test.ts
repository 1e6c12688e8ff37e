import { createOpenAICompatible } from '@ai-sdk/openai-compatible';
import { NoSuchModelError } from 'ai';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ModelProviderError } from '../../../src/model/model-provider.js';
import { aiSdkProvider } from '../../../src/model/providers/ai-sdk-provider.js';
import { anthropicProvider } from '../../../src/model/providers/anthropic-provider.js';
import type { ToolFailure } from '../../../src/shared/tool-result.js';
import { anthropicMessage, chatCompletion, chatError } from '../../helpers/provider-wire-bodies.js';
import { startProviderWireServer } from '../../helpers/provider-wire-server.js';
import type { ProviderWireServer } from '../../helpers/provider-wire-server.js';
import { firstStepCall, providerErrorOf, secondStepCall, streamed } from './weather-calls.js';

const textCompletion = chatCompletion({ content: 'Done.' }, 'stop');

describe('aiSdkProvider', () => {
  let server: ProviderWireServer;
  beforeEach(async () => {
    server = await startProviderWireServer('/v1');
  });
  afterEach(async () => {
    vi.unstubAllEnvs();
    vi.restoreAllMocks();
    await server.close();
  });

  const compatible = (options: { stream?: boolean } = {}) => {
    const local = createOpenAICompatible({ name: 'local', baseURL: server.baseURL });
    return aiSdkProvider((modelName) => local(modelName), options);
  };

  it('resolves the model by its name without the provider prefix and makes exactly one request a turn', async () => {
    server.reply({ body: textCompletion });

    await compatible().generate(firstStepCall('qwen3:4b'), { signal: new AbortController().signal });

    expect(server.requests).toHaveLength(1);
    expect(server.requests[0]?.body).toMatchObject({ model: 'qwen3:4b' });
  });

  it('sends no tools when the run offers none', async () => {
    server.reply({ body: textCompletion });

    await compatible().generate({ ...firstStepCall('qwen3:4b'), tools: [] }, { signal: new AbortController().signal });

    expect(server.requests[0]?.body).not.toHaveProperty('tools');
  });

  it('marks a failed tool result as an error so Anthropic sends it with is_error', async () => {
    const failure: ToolFailure = {
      success: false,
      toolName: 'get_weather',
      toolCallId: 'call_paris',
      error: "Validation failed: Required at 'city'",
      errorType: 'validation',
      input: {},
    };
    const call = secondStepCall('claude-sonnet-4-5');
    const last = call.messages.at(-1);
    if (last?.role !== 'tool') throw new Error('the second step ends with a tool message');
    last.result = failure;
    server.reply({ body: anthropicMessage([{ type: 'text', text: 'Which city?' }], 'end_turn') });

    await anthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.baseURL }).generate(call, {
      signal: new AbortController().signal,
    });

    const body = server.requests[0]?.body as { messages: { content: unknown[] }[] };
    expect(body.messages.at(-1)?.content).toEqual([
      { type: 'tool_result', tool_use_id: 'call_paris', content: JSON.stringify(failure), is_error: true },
    ]);
  });

  it('sends a recorded tool call whose input was not JSON as an empty object, never as a string', async () => {
    server.reply({ body: textCompletion });
    const call = secondStepCall('qwen3:4b');
    const assistant = call.messages.find((message) => message.role === 'assistant');
    if (!assistant?.toolCalls?.[0]) throw new Error('the second step records a tool call');
    assistant.toolCalls[0].input = '{"city": "Paris"';

    await compatible().generate(call, { signal: new AbortController().signal });

    expect(server.requests[0]?.body).toMatchObject({
      messages: [{}, {}, { tool_calls: [{ function: { arguments: '{}' } }] }, {}],
    });
  });

  it('turns a dropped connection into a retryable error saying the provider could not be reached', async () => {
    server.reply({ hangUp: true });

    const error = await providerErrorOf(compatible(), firstStepCall('qwen3:4b'));

    expect(error.retryable).toBe(true);
    expect(error.status).toBeUndefined();
    expect(error.message).toMatch(/^local could not be reached: /);
  });

  it('turns a 200 whose body the SDK cannot read into an error that fails the run', async () => {
    server.reply({ body: { unexpected: true } });

    const error = await providerErrorOf(compatible(), firstStepCall('qwen3:4b'));

    expect(error).toMatchObject({ retryable: false, status: 200 });
    expect(error.message).toMatch(/^local sent a response that could not be read \(200 OK\): /);
  });

  it('fails the run with a clear message when no API key is configured', async () => {
    vi.stubEnv('ANTHROPIC_API_KEY', undefined);

    const error = await providerErrorOf(
      anthropicProvider({ baseURL: server.baseURL }),
      firstStepCall('claude-sonnet-4-5'),
    );

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^anthropic is not configured for this call: Anthropic API key is missing/);
    expect(server.requests).toHaveLength(0);
  });

  it('fails the run naming the model id when the model cannot be resolved', async () => {
    const provider = aiSdkProvider((modelName) => {
      throw new NoSuchModelError({ modelId: modelName, modelType: 'languageModel' });
    });

    const error = await providerErrorOf(provider, firstStepCall('gpt-9'));

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^provider:gpt-9 is not configured for this call: /);
  });

  it('lets an aborted call reject with the abort itself, not a ModelProviderError', async () => {
    const controller = new AbortController();
    const pending = compatible().generate(firstStepCall('qwen3:4b'), { signal: controller.signal });
    const cancellation = new Error('run cancelled');
    controller.abort(cancellation);

    const error: unknown = await pending.then(
      () => undefined,
      (reason: unknown) => reason,
    );

    expect(error).not.toBeInstanceOf(ModelProviderError);
    expect(error).toBe(cancellation);
  });

  it('fails the run without a request when the transcript has a tool call with no result', async () => {
    const call = secondStepCall('qwen3:4b');
    call.messages.pop();

    const error = await providerErrorOf(compatible(), call);

    expect(error.retryable).toBe(false);
    expect(error.message).toMatch(/^local cannot take this transcript: /);
    expect(server.requests).toHaveLength(0);
  });

  it('leaves a streamed failure to the activity: the SDK prints nothing to stderr', async () => {
    const printed = vi.spyOn(console, 'error').mockImplementation(() => undefined);
    server.reply({ status: 500, body: chatError('llama runner process has terminated', 'api_error') });

    const error = await providerErrorOf(compatible({ stream: true }), firstStepCall('qwen3:4b'), streamed);

    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect(printed).not.toHaveBeenCalled();
  });
});
