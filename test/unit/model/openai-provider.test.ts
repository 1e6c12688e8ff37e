import { inspect } from 'node:util';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { openaiProvider } from '../../../src/model/providers/openai-provider.js';
import { startProviderWireServer } from '../../helpers/provider-wire-server.js';
import type { ProviderWireServer } from '../../helpers/provider-wire-server.js';
import {
  openaiResponse,
  openaiMessageItem,
  openaiFunctionCallItem,
  openaiError,
  openaiResponseStream,
  openaiResponseStreamStart,
  openaiStreamError,
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

describe('openaiProvider', () => {
  let server: ProviderWireServer;
  beforeEach(async () => {
    server = await startProviderWireServer('/v1');
  });
  afterEach(() => {
    vi.unstubAllEnvs();
    return server.close();
  });

  const provider = () => openaiProvider({ apiKey: 'sk-test-openai', baseURL: server.baseURL });

  it('answers a text turn from POST /responses with the text, token usage and finish reason', async () => {
    server.reply({ body: openaiResponse([openaiMessageItem('It is sunny in Paris.')]) });

    const response = await generate(provider(), firstStepCall('gpt-4.1-mini'));

    expect(response).toEqual({
      text: 'It is sunny in Paris.',
      usage: { inputTokens: 52, outputTokens: 18 },
      finishReason: 'stop',
    });
    expect(server.requests[0]).toMatchObject({ method: 'POST', path: '/v1/responses' });
    expect(server.requests[0]?.body).toMatchObject({
      model: 'gpt-4.1-mini',
      input: [
        { role: 'system', content: 'You are a concise assistant.' },
        { role: 'user', content: [{ type: 'input_text', text: 'What is the weather in Paris?' }] },
      ],
    });
  });

  it.each([
    ['max_output_tokens', 'length'],
    ['content_filter', 'content-filter'],
  ] as const)(
    'reports an incomplete response (%s) as finish reason %s, for the run to refuse',
    async (wire, reason) => {
      server.reply({ body: openaiResponse([openaiMessageItem('It is sunny in')], wire) });

      expect(await generate(provider(), firstStepCall('gpt-4.1-mini'))).toMatchObject({ finishReason: reason });
    },
  );

  it('asks OpenAI not to store the response unless configured to, and sends the run’s sampling settings', async () => {
    server.reply(
      { body: openaiResponse([openaiMessageItem('Sunny.')]) },
      { body: openaiResponse([openaiMessageItem('Sunny.')]) },
    );
    const settings = { temperature: 0.2, topP: 0.9, maxOutputTokens: 256 };

    await generate(provider(), { ...firstStepCall('gpt-4.1-mini'), settings });
    const storing = openaiProvider({ apiKey: 'sk-test-openai', baseURL: server.baseURL, store: true });
    await generate(storing, firstStepCall('gpt-4.1-mini'));

    expect(server.requests[0]?.body).toMatchObject({
      store: false,
      temperature: 0.2,
      top_p: 0.9,
      max_output_tokens: 256,
    });
    expect(server.requests[1]?.body).toMatchObject({ store: true });
    expect(server.requests[1]?.body).not.toHaveProperty('temperature');
  });

  it('sends the tools as function JSON Schemas and maps function calls to tool calls with their ids', async () => {
    server.reply({
      body: openaiResponse([
        openaiFunctionCallItem('call_paris', 'get_weather', '{"city":"Paris"}'),
        openaiFunctionCallItem('call_rome', 'get_weather', '{"city":"Rome"}'),
      ]),
    });

    const response = await generate(provider(), firstStepCall('gpt-4.1-mini'));

    expect(response.toolCalls).toEqual([
      { id: 'call_paris', name: 'get_weather', input: { city: 'Paris' } },
      { id: 'call_rome', name: 'get_weather', input: { city: 'Rome' } },
    ]);
    expect(response.finishReason).toBe('tool-calls');
    expect(server.requests[0]?.body).toMatchObject({
      tools: [
        {
          type: 'function',
          name: 'get_weather',
          description: weatherTool.description,
          parameters: weatherTool.inputSchema,
        },
      ],
      tool_choice: 'auto',
    });
  });

  it('sends the previous step as a function_call item followed by its function_call_output', async () => {
    server.reply({ body: openaiResponse([openaiMessageItem('21 °C in Paris.')]) });

    await generate(provider(), secondStepCall('gpt-4.1-mini'));

    const body = server.requests[0]?.body as { input: { type?: string; output?: string }[] };
    expect(body.input.slice(2)).toEqual([
      { type: 'function_call', call_id: 'call_paris', name: 'get_weather', arguments: '{"city":"Paris"}' },
      { type: 'function_call_output', call_id: 'call_paris', output: JSON.stringify(parisResult) },
    ]);
  });

  it('passes arguments that are not JSON through as the raw string for the workflow to reject', async () => {
    server.reply({ body: openaiResponse([openaiFunctionCallItem('call_bad', 'get_weather', '{"city": "Paris"')]) });

    const response = await generate(provider(), firstStepCall('gpt-4.1-mini'));

    expect(response.toolCalls).toEqual([{ id: 'call_bad', name: 'get_weather', input: '{"city": "Paris"' }]);
  });

  it('turns a 429 into a retryable error that waits as long as retry-after-ms asks', async () => {
    server.reply({
      status: 429,
      headers: { 'retry-after-ms': '1500' },
      body: openaiError(
        'Rate limit reached for gpt-4.1-mini on tokens per min (TPM).',
        'tokens',
        'rate_limit_exceeded',
      ),
    });

    const error = await providerErrorOf(provider(), firstStepCall('gpt-4.1-mini'));

    expect(error).toMatchObject({ retryable: true, retryAfterMs: 1500, status: 429 });
    expect(error.message).toBe(
      'openai could not answer (429 Too Many Requests): Rate limit reached for gpt-4.1-mini on tokens per min (TPM).',
    );
  });

  it('turns a 500 into a retryable error', async () => {
    server.reply({
      status: 500,
      body: openaiError('The server had an error while processing your request.', 'server_error', null),
    });

    const error = await providerErrorOf(provider(), firstStepCall('gpt-4.1-mini'));

    expect(error).toMatchObject({ retryable: true, status: 500 });
    expect(error.retryAfterMs).toBeUndefined();
  });

  it('turns a 401 into an error that fails the run and names the provider, the status and the reason', async () => {
    server.reply({
      status: 401,
      body: openaiError('Incorrect API key provided: sk-test-openai.', 'invalid_request_error', 'invalid_api_key'),
    });

    const error = await providerErrorOf(provider(), firstStepCall('gpt-4.1-mini'));

    expect(error).toMatchObject({ retryable: false, status: 401 });
    // The server quoted the key it refused: the message goes into history, and the log prints the causes.
    expect(error.message).toBe('openai rejected the request (401 Unauthorized): Incorrect API key provided: [secret].');
    expect(inspect(error, { depth: 10 })).not.toContain('sk-test-openai');
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-test-openai');
  });

  it('hides OPENAI_API_KEY, and a credential header, where the server quotes them back', async () => {
    vi.stubEnv('OPENAI_API_KEY', 'sk-from-the-environment');
    const echoing = openaiProvider({ baseURL: server.baseURL, headers: { 'x-gateway-token': 'gw-token-12345678' } });
    server.reply({
      status: 403,
      body: openaiError('Denied: sk-from-the-environment via gw-token-12345678', 'invalid_request_error', null),
    });

    const error = await providerErrorOf(echoing, firstStepCall('gpt-4.1-mini'));

    expect(error.message).toBe('openai rejected the request (403 Forbidden): Denied: [secret] via [secret]');
    expect(inspect(error, { depth: 10 })).not.toMatch(/sk-from-the-environment|gw-token-12345678/);
  });

  describe('streaming', () => {
    const streaming = () => openaiProvider({ apiKey: 'sk-test-openai', baseURL: server.baseURL, stream: true });

    it('streams the text as deltas and answers with the whole text, token usage and finish reason', async () => {
      server.reply({ events: openaiResponseStream(['It is sunny ', 'in Paris.']) });

      const { response, deltas } = await streamed(streaming(), firstStepCall('gpt-4.1-mini'));

      expect(deltas).toEqual(['It is sunny ', 'in Paris.']);
      expect(response).toEqual({
        text: 'It is sunny in Paris.',
        usage: { inputTokens: 52, outputTokens: 18 },
        finishReason: 'stop',
      });
    });

    it('turns a stream that ends before the response completes into a retryable error, never a cut answer', async () => {
      server.reply({ events: openaiResponseStreamStart(['The total is 1']) });

      const error = await providerErrorOf(streaming(), firstStepCall('gpt-4.1-mini'), streamed);

      expect(error.retryable).toBe(true);
      expect(error.message).toBe('openai ended its stream before finishing the answer');
    });

    it('turns a mid-stream error event for an invalid prompt into an error that fails the run', async () => {
      server.reply({
        events: [
          ...openaiResponseStreamStart(['The total']),
          openaiStreamError('invalid_prompt', 'Invalid prompt.', 3),
        ],
      });

      const error = await providerErrorOf(streaming(), firstStepCall('gpt-4.1-mini'), streamed);

      expect(error).toMatchObject({ retryable: false, status: 400 });
      expect(error.message).toBe('openai rejected the request (400 Bad Request): Invalid prompt.');
    });
  });
});
