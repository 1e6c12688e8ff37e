import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { anthropicProvider } from '../../../src/model/providers/anthropic-provider.js';
import { startProviderWireServer } from '../../helpers/provider-wire-server.js';
import type { ProviderWireServer } from '../../helpers/provider-wire-server.js';
import {
  anthropicMessage,
  anthropicError,
  anthropicStream,
  anthropicStreamError,
  anthropicStreamStart,
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

describe('anthropicProvider', () => {
  let server: ProviderWireServer;
  beforeEach(async () => {
    server = await startProviderWireServer('/v1');
  });
  afterEach(() => server.close());

  const provider = () => anthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.baseURL });

  it('answers a text turn from POST /messages with the text, token usage and finish reason', async () => {
    server.reply({ body: anthropicMessage([{ type: 'text', text: 'It is sunny in Paris.' }], 'end_turn') });

    const response = await generate(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(response).toEqual({
      text: 'It is sunny in Paris.',
      usage: { inputTokens: 412, outputTokens: 57 },
      finishReason: 'stop',
    });
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/messages' });
    expect(server.requests[0]?.headers).toMatchObject({
      'x-api-key': 'sk-ant-test',
      'anthropic-version': '2023-06-01',
    });
    expect(server.requests[0]?.body).toMatchObject({
      model: 'claude-sonnet-4-5',
      system: [{ type: 'text', text: 'You are a concise assistant.' }],
      messages: [{ role: 'user', content: [{ type: 'text', text: 'What is the weather in Paris?' }] }],
    });
  });

  it.each([
    ['max_tokens', 'length'],
    ['refusal', 'content-filter'],
  ] as const)('reports stop_reason %s as finish reason %s, for the run to refuse', async (wire, reason) => {
    server.reply({ body: anthropicMessage([{ type: 'text', text: 'It is sunny in' }], wire) });

    expect(await generate(provider(), firstStepCall('claude-sonnet-4-5'))).toMatchObject({ finishReason: reason });
  });

  it('sends the tools with their input_schema and maps tool_use blocks to tool calls with their ids', async () => {
    server.reply({
      body: anthropicMessage(
        [
          { type: 'text', text: 'Let me check.' },
          { type: 'tool_use', id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } },
        ],
        'tool_use',
      ),
    });

    const response = await generate(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(response).toMatchObject({
      text: 'Let me check.',
      toolCalls: [{ id: 'toolu_01A09q90qw90lq917835lq9', name: 'get_weather', input: { city: 'Paris' } }],
      finishReason: 'tool-calls',
    });
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        {
          name: 'get_weather',
          description: weatherTool.description,
          input_schema: weatherTool.inputSchema,
        },
      ],
      tool_choice: { type: 'auto' },
    });
  });

  it('sends the previous step as a tool_use block answered by a tool_result in the next user turn', async () => {
    server.reply({ body: anthropicMessage([{ type: 'text', text: '21 °C in Paris.' }], 'end_turn') });

    await generate(provider(), secondStepCall('claude-sonnet-4-5'));

    const body = server.requests[0]?.body as { messages: unknown[] };
    expect(body.messages.slice(1)).toEqual([
      {
        role: 'assistant',
        content: [{ type: 'tool_use', id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } }],
      },
      {
        role: 'user',
        content: [{ type: 'tool_result', tool_use_id: 'call_paris', content: JSON.stringify(parisResult) }],
      },
    ]);
  });

  it('passes a tool_use whose input is not an object through as the raw text for the workflow to reject', async () => {
    server.reply({
      body: anthropicMessage(
        [{ type: 'tool_use', id: 'toolu_bad', name: 'get_weather', input: '{"city": "Paris"' }],
        'tool_use',
      ),
    });

    const response = await generate(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(response.toolCalls).toEqual([{ id: 'toolu_bad', name: 'get_weather', input: '{"city": "Paris"' }]);
  });

  it('passes a tool_use for a tool the run does not offer through unchanged', async () => {
    server.reply({
      body: anthropicMessage(
        [{ type: 'tool_use', id: 'toolu_x', name: 'book_flight', input: { to: 'Rome' } }],
        'tool_use',
      ),
    });

    const response = await generate(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(response.toolCalls).toEqual([{ id: 'toolu_x', name: 'book_flight', input: { to: 'Rome' } }]);
  });

  it('sends the run’s sampling settings as temperature, max_tokens and stop_sequences', async () => {
    server.reply({ body: anthropicMessage([{ type: 'text', text: 'Sunny.' }], 'end_turn') });
    const settings = { temperature: 0.3, maxOutputTokens: 512, stopSequences: ['END'] };

    await generate(provider(), { ...firstStepCall('claude-sonnet-4-5'), settings });

    expect(server.requests[0]?.body).toMatchObject({ temperature: 0.3, max_tokens: 512, stop_sequences: ['END'] });
  });

  it('turns a 429 into a retryable error that waits as long as retry-after asks', async () => {
    server.reply({
      status: 429,
      headers: { 'retry-after': '12' },
      body: anthropicError('rate_limit_error', 'Number of request tokens has exceeded your per-minute rate limit'),
    });

    const error = await providerErrorOf(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(error).toMatchObject({ retryable: true, retryAfterMs: 12_000, status: 429 });
  });

  it('turns a 500 and a 529 overload into retryable errors', async () => {
    server.reply(
      { status: 500, body: anthropicError('api_error', 'Internal server error') },
      { status: 529, body: anthropicError('overloaded_error', 'Overloaded') },
    );

    const internal = await providerErrorOf(provider(), firstStepCall('claude-sonnet-4-5'));
    const overloaded = await providerErrorOf(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(internal).toMatchObject({ retryable: true, status: 500 });
    expect(overloaded).toMatchObject({ retryable: true, status: 529 });
    expect(overloaded.message).toBe('anthropic could not answer (529): Overloaded');
  });

  it('turns a 401 into an error that fails the run and names the provider, the status and the reason', async () => {
    server.reply({ status: 401, body: anthropicError('authentication_error', 'invalid x-api-key') });

    const error = await providerErrorOf(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(error).toMatchObject({ retryable: false, status: 401 });
    expect(error.message).toBe('anthropic rejected the request (401 Unauthorized): invalid x-api-key');
  });

  it('hides the API key where the server quotes it back, in the message and every cause', async () => {
    server.reply({ status: 401, body: anthropicError('authentication_error', 'invalid x-api-key: sk-ant-test') });

    const error = await providerErrorOf(provider(), firstStepCall('claude-sonnet-4-5'));

    expect(error.message).toBe('anthropic rejected the request (401 Unauthorized): invalid x-api-key: [secret]');
    expect(inspect(error, { depth: 10 })).not.toContain('sk-ant-test');
  });

  describe('streaming', () => {
    const streaming = () => anthropicProvider({ apiKey: 'sk-ant-test', baseURL: server.baseURL, stream: true });

    it('streams the text as deltas and answers with the whole text, token usage and finish reason', async () => {
      server.reply({ events: anthropicStream(['It is sunny ', 'in Paris.']) });

      const { response, deltas } = await streamed(streaming(), firstStepCall('claude-sonnet-4-5'));

      expect(deltas).toEqual(['It is sunny ', 'in Paris.']);
      expect(response).toEqual({
        text: 'It is sunny in Paris.',
        usage: { inputTokens: 412, outputTokens: 57 },
        finishReason: 'stop',
      });
    });

    it('turns a stream that ends before the message stops into a retryable error, never a cut answer', async () => {
      server.reply({ events: anthropicStreamStart(['The total is 1']) });

      const error = await providerErrorOf(streaming(), firstStepCall('claude-sonnet-4-5'), streamed);

      expect(error.retryable).toBe(true);
      expect(error.message).toBe('anthropic ended its stream before finishing the answer');
    });

    it.each([
      ['invalid_request_error', 'prompt is too long: 210000 tokens > 200000 maximum'],
      ['billing_error', 'Your credit balance is too low to access the Anthropic API.'],
    ])('turns a mid-stream %s into an error that fails the run, with its status', async (type, message) => {
      server.reply({ events: [...anthropicStreamStart(['The total']), anthropicStreamError(type, message)] });

      const error = await providerErrorOf(streaming(), firstStepCall('claude-sonnet-4-5'), streamed);

      expect(error).toMatchObject({ retryable: false, status: 400 });
      expect(error.message).toBe(`anthropic rejected the request (400 Bad Request): ${message}`);
    });

    it('turns a mid-stream overload into a retryable error, with its status', async () => {
      server.reply({
        events: [...anthropicStreamStart(['The total']), anthropicStreamError('overloaded_error', 'Overloaded')],
      });

      const error = await providerErrorOf(streaming(), firstStepCall('claude-sonnet-4-5'), streamed);

      expect(error).toMatchObject({ retryable: true, status: 529 });
      expect(error.message).toBe('anthropic could not answer (529): Overloaded');
    });
  });
});
