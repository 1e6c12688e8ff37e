import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { openaiCompatibleProvider } from '../../../src/model/providers/openai-compatible-provider.js';
import { startProviderWireServer } from '../../helpers/provider-wire-server.js';
import type { ProviderWireServer } from '../../helpers/provider-wire-server.js';
import {
  chatCompletion,
  chatCompletionStream,
  chatCompletionStreamStart,
  chatToolCall,
  chatError,
  chatStreamError,
} from '../../helpers/provider-wire-bodies.js';
import {
  firstStepCall,
  generate,
  weatherTool,
  parisResult,
  providerErrorOf,
  secondStepCall,
  streamed,
} from './weather-calls.js';

describe('openaiCompatibleProvider', () => {
  let server: ProviderWireServer;
  beforeEach(async () => {
    server = await startProviderWireServer('/v1');
  });
  afterEach(() => server.close());

  const provider = () => openaiCompatibleProvider({ name: 'ollama', baseURL: server.baseURL });

  it('answers a text turn from POST /chat/completions with the text, token usage and finish reason', async () => {
    server.reply({ body: chatCompletion({ content: 'It is sunny in Paris.' }, 'stop') });

    const response = await generate(provider(), firstStepCall('llama3.1:8b'));

    expect(response).toEqual({
      text: 'It is sunny in Paris.',
      usage: { inputTokens: 160, outputTokens: 18 },
      finishReason: 'stop',
    });
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/chat/completions' });
    expect(server.requests[0]?.headers.authorization).toBeUndefined();
    expect(server.requests[0]?.body).toMatchObject({
      model: 'llama3.1:8b',
      messages: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: 'What is the weather in Paris?' },
      ],
    });
  });

  it.each([
    ['length', 'length'],
    ['content_filter', 'content-filter'],
  ] as const)('reports an answer cut off with finish_reason %s as %s, for the run to refuse', async (wire, reason) => {
    server.reply({ body: chatCompletion({ content: '' }, wire) });

    expect(await generate(provider(), firstStepCall('llama3.1:8b'))).toMatchObject({ finishReason: reason });
  });

  it('sends the tools as function JSON Schemas and maps tool_calls to tool calls with their ids', async () => {
    server.reply({
      body: chatCompletion(
        { content: '', tool_calls: [chatToolCall('call_2cnbzw8v', 'get_weather', '{"city":"Paris"}')] },
        'tool_calls',
      ),
    });

    const response = await generate(provider(), firstStepCall('llama3.1:8b'));

    expect(response).toEqual({
      toolCalls: [{ id: 'call_2cnbzw8v', name: 'get_weather', input: { city: 'Paris' } }],
      usage: { inputTokens: 160, outputTokens: 18 },
      finishReason: 'tool-calls',
    });
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        {
          type: 'function',
          function: {
            name: 'get_weather',
            description: weatherTool.description,
            parameters: weatherTool.inputSchema,
          },
        },
      ],
      tool_choice: 'auto',
    });
  });

  it('sends the previous step as an assistant tool_calls message followed by a tool message', async () => {
    server.reply({ body: chatCompletion({ content: '21 °C in Paris.' }, 'stop') });

    await generate(provider(), secondStepCall('llama3.1:8b'));

    const body = server.requests[0]?.body as { messages: unknown[] };
    expect(body.messages.slice(2)).toEqual([
      {
        role: 'assistant',
        content: null,
        tool_calls: [
          { id: 'call_paris', type: 'function', function: { name: 'get_weather', arguments: '{"city":"Paris"}' } },
        ],
      },
      { role: 'tool', tool_call_id: 'call_paris', content: JSON.stringify(parisResult) },
    ]);
  });

  it('passes arguments that are not JSON through as the raw string for the workflow to reject', async () => {
    server.reply({
      body: chatCompletion(
        { content: '', tool_calls: [chatToolCall('call_bad', 'get_weather', 'city=Paris')] },
        'tool_calls',
      ),
    });

    const response = await generate(provider(), firstStepCall('llama3.1:8b'));

    expect(response.toolCalls).toEqual([{ id: 'call_bad', name: 'get_weather', input: 'city=Paris' }]);
  });

  it('sends the run’s sampling settings in the chat completion request', async () => {
    server.reply({ body: chatCompletion({ content: 'Sunny.' }, 'stop') });
    const settings = { temperature: 0, topP: 0.5, maxOutputTokens: 100, seed: 7, stopSequences: ['\n\n'] };

    await generate(provider(), { ...firstStepCall('llama3.2'), settings });

    expect(server.requests[0]?.body).toMatchObject({
      temperature: 0,
      top_p: 0.5,
      max_tokens: 100,
      seed: 7,
      stop: ['\n\n'],
    });
  });

  it('turns a 429 into a retryable error that waits as long as retry-after asks', async () => {
    server.reply({ status: 429, headers: { 'retry-after': '3' }, body: chatError('Too many requests', 'rate_limit') });

    const error = await providerErrorOf(provider(), firstStepCall('llama3.1:8b'));

    expect(error).toMatchObject({ retryable: true, retryAfterMs: 3_000, status: 429 });
  });

  it('turns a 500 into a retryable error', async () => {
    server.reply({ status: 500, body: chatError('llama runner process has terminated: signal: killed', 'api_error') });

    const error = await providerErrorOf(provider(), firstStepCall('llama3.1:8b'));

    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect(error.message).toBe(
      'ollama could not answer (500 Internal Server Error): llama runner process has terminated: signal: killed',
    );
  });

  it('turns a 401 into an error that fails the run and names the provider, the status and the reason', async () => {
    server.reply({ status: 401, body: chatError('Invalid API key', 'invalid_request_error') });

    const error = await providerErrorOf(
      openaiCompatibleProvider({ name: 'vllm', baseURL: server.baseURL, apiKey: 'vllm-key' }),
      firstStepCall('llama3.1:8b'),
    );

    expect(error).toMatchObject({ retryable: false, status: 401 });
    expect(error.message).toBe('vllm rejected the request (401 Unauthorized): Invalid API key');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer vllm-key');
  });

  it('hides the API key where a gateway quotes the Authorization header back, through its retries too', async () => {
    const gateway = openaiCompatibleProvider({
      name: 'compat',
      baseURL: server.baseURL,
      apiKey: 'sk-PROVIDERKEY-9b8c',
    });
    server.reply({ status: 503, body: chatError('Invalid credentials: Bearer sk-PROVIDERKEY-9b8c', 'unavailable') });

    const error = await providerErrorOf(gateway, firstStepCall('llama3.1:8b'));

    expect(error).toMatchObject({ retryable: true, status: 503 });
    expect(error.message).toBe(
      'compat could not answer (503 Service Unavailable): Invalid credentials: Bearer [secret]',
    );
    expect(inspect(error, { depth: 10 })).not.toContain('sk-PROVIDERKEY-9b8c');
  });

  it('leaves a key too short to tell from ordinary words unhidden rather than mangle the message', async () => {
    server.reply({ status: 401, body: chatError('Invalid API key', 'invalid_request_error') });

    const error = await providerErrorOf(
      openaiCompatibleProvider({ name: 'vllm', baseURL: server.baseURL, apiKey: 'API' }),
      firstStepCall('llama3.1:8b'),
    );

    expect(error.message).toBe('vllm rejected the request (401 Unauthorized): Invalid API key');
  });

  describe('streaming', () => {
    const streaming = () => openaiCompatibleProvider({ name: 'vllm', baseURL: server.baseURL, stream: true });

    it('asks for the usage chunk, so a streamed step records its tokens', async () => {
      server.reply({ events: chatCompletionStream(['It is sunny ', 'in Paris.']) });

      const { response, deltas } = await streamed(streaming(), firstStepCall('llama3.1:8b'));

      expect(deltas).toEqual(['It is sunny ', 'in Paris.']);
      expect(response).toEqual({
        text: 'It is sunny in Paris.',
        usage: { inputTokens: 160, outputTokens: 18 },
        finishReason: 'stop',
      });
      expect(server.requests[0]?.body).toMatchObject({ stream: true, stream_options: { include_usage: true } });
    });

    it('turns a mid-stream error chunk (context too long) into an error that fails the run, with its status', async () => {
      server.reply({
        events: [
          ...chatCompletionStreamStart(['The total']),
          chatStreamError('This model’s maximum context length is 8192 tokens.', 'BadRequestError', 400),
        ],
      });

      const error = await providerErrorOf(streaming(), firstStepCall('llama3.1:8b'), streamed);

      expect(error).toMatchObject({ retryable: false, status: 400 });
      expect(error.message).toBe(
        'vllm rejected the request (400 Bad Request): This model’s maximum context length is 8192 tokens.',
      );
    });

    it('turns a stream that ends before its finish reason into a retryable error', async () => {
      server.reply({ events: chatCompletionStreamStart(['The total is 1']) });

      const error = await providerErrorOf(streaming(), firstStepCall('llama3.1:8b'), streamed);

      expect(error.retryable).toBe(true);
    });
  });
});
