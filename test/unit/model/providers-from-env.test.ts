import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { providersFromEnv } from '../../../src/model/providers/providers-from-env.js';
import {
  anthropicMessage,
  chatCompletion,
  openaiMessageItem,
  openaiResponse,
} from '../../helpers/provider-wire-bodies.js';
import { startProviderWireServer } from '../../helpers/provider-wire-server.js';
import type { ProviderWireServer } from '../../helpers/provider-wire-server.js';
import { firstStepCall, generate } from './weather-calls.js';

describe('providersFromEnv', () => {
  let server: ProviderWireServer;
  beforeEach(async () => {
    server = await startProviderWireServer('/v1');
  });
  afterEach(() => server.close());

  it('registers no provider when nothing is configured', () => {
    expect(providersFromEnv({})).toEqual({});
  });

  it('registers openai, anthropic and the compatible server under its configured name', () => {
    const providers = providersFromEnv({
      OPENAI_API_KEY: 'sk-env',
      ANTHROPIC_BASE_URL: 'http://127.0.0.1:1/v1',
      RELAY_E_COMPATIBLE_NAME: 'ollama',
      RELAY_E_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
    });

    expect(Object.keys(providers).sort()).toEqual(['anthropic', 'ollama', 'openai']);
  });

  it('names the compatible server local when no name is given, and ignores empty variables', () => {
    const providers = providersFromEnv({
      OPENAI_API_KEY: '',
      RELAY_E_COMPATIBLE_BASE_URL: 'http://127.0.0.1:11434/v1',
    });

    expect(Object.keys(providers)).toEqual(['local']);
  });

  it('sends each API key in its header and never returns it in the model response', async () => {
    const providers = providersFromEnv({
      OPENAI_API_KEY: 'sk-openai-secret',
      OPENAI_BASE_URL: server.baseURL,
      ANTHROPIC_API_KEY: 'sk-ant-secret',
      ANTHROPIC_BASE_URL: server.baseURL,
      RELAY_E_COMPATIBLE_BASE_URL: server.baseURL,
      RELAY_E_COMPATIBLE_API_KEY: 'local-secret',
    });
    server.reply(
      { body: openaiResponse([openaiMessageItem('Hi.')]) },
      { body: anthropicMessage([{ type: 'text', text: 'Hi.' }], 'end_turn') },
      { body: chatCompletion({ content: 'Hi.' }, 'stop') },
    );

    const responses = [];
    for (const name of ['openai', 'anthropic', 'local']) {
      const provider = providers[name];
      if (!provider) throw new Error(`provider ${name} was not registered`);
      responses.push(await generate(provider, firstStepCall('claude-sonnet-4-5')));
    }

    expect(responses.map((response) => response.text)).toEqual(['Hi.', 'Hi.', 'Hi.']);
    expect(server.requests.map((request) => request.path)).toEqual([
      '/v1/responses',
      '/v1/messages',
      '/v1/chat/completions',
    ]);
    expect(server.requests[0]?.headers.authorization).toBe('Bearer sk-openai-secret');
    expect(server.requests[1]?.headers['x-api-key']).toBe('sk-ant-secret');
    expect(server.requests[2]?.headers.authorization).toBe('Bearer local-secret');
    expect(JSON.stringify(responses)).not.toMatch(/secret/);
  });
});
