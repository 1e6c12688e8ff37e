import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openaiCompatibleProvider } from '../../src/model/providers/openai-compatible-provider.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { chatCompletion, chatToolCall } from '../helpers/provider-wire-bodies.js';
import { startProviderWireServer } from '../helpers/provider-wire-server.js';
import { useRelayTestKit } from '../helpers/relay-test-kit.js';
import { rawRunRecord } from './security-test-kit.js';

const bankToken = 'bank-token-SECRET-31d9f0';
const providerKey = 'sk-relay-test-PROVIDER-KEY-a71c';

const callBank = defineTool({
  name: 'call_bank',
  description: 'Call the bank API with the configured token.',
  inputSchema: z.object({ account: z.string() }),
  execute: async ({ account }, ctx) => {
    const bank = ctx.config['bank'] as { token: string; region: string };
    // A careless tool that echoes its credentials: the result must still not carry them into history.
    return { account, authorized: bank.token === bankToken, region: bank.region, debug: `used ${bank.token}` };
  },
});

const leakyFailure = defineTool({
  name: 'leaky_failure',
  description: 'Fail with the token in the error message.',
  inputSchema: z.object({}),
  execute: async (_input, ctx) => {
    throw new Error(`401 from bank with token ${String((ctx.config['bank'] as { token: string }).token)}`);
  },
});

const kit = useRelayTestKit();

const config = { bank: { token: { $secret: 'BANK_API_TOKEN' }, region: 'eu' } };

describe('secrets', () => {
  it('gives a tool the value of a { $secret } reference while history and events keep only the reference', async () => {
    const { client, stop } = await kit.startWorker({
      tools: [callBank],
      secrets: { BANK_API_TOKEN: bankToken },
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ id: 'c1', name: 'call_bank', input: { account: 'A-1' } }] },
          { text: 'ok' },
        ]),
      },
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'check', config });
      await client.result(runId);
      const events = await client.events(runId);
      expect(events.find((event) => event.type === 'tool_succeeded')).toMatchObject({
        output: { account: 'A-1', authorized: true, region: 'eu', debug: 'used [secret]' },
      });
      const raw = await rawRunRecord(kit.temporal, runId);
      expect(raw).toContain('BANK_API_TOKEN');
      expect(raw).not.toContain(bankToken);
      expect(JSON.stringify(events)).not.toContain(bankToken);
    } finally {
      await stop();
    }
  });

  it('redacts a secret from a failing tool’s error, and fails a call whose secret the worker does not know', async () => {
    const { client, stop } = await kit.startWorker({
      tools: [callBank, leakyFailure],
      secrets: (name, context) => (name === 'BANK_API_TOKEN' && context.tenantId === 'acme' ? bankToken : undefined),
      models: {
        scripted: scriptedModel([{ toolCalls: [{ id: 'c1', name: 'leaky_failure', input: {} }] }, { text: 'done' }]),
      },
    });
    try {
      const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'go', config });
      await client.result(runId);
      const failed = (await client.events(runId)).find((event) => event.type === 'tool_failed');
      expect(failed?.type === 'tool_failed' && failed.error).toContain('401 from bank with token [secret]');
      expect(await rawRunRecord(kit.temporal, runId)).not.toContain(bankToken);

      const other = await client.startRun({ tenantId: 'globex', model: 'scripted:test', prompt: 'go', config });
      await client.result(other.runId);
      const unknown = (await client.events(other.runId)).find((event) => event.type === 'tool_failed');
      expect(unknown?.type === 'tool_failed' && unknown.error).toContain(
        "The run's config refers to secret 'BANK_API_TOKEN', which this worker does not know",
      );
    } finally {
      await stop();
    }
  });

  it('keeps a model provider’s API key out of history and events: it lives only in the worker', async () => {
    const wire = await startProviderWireServer('/v1');
    wire.reply(
      {
        body: chatCompletion(
          { content: '', tool_calls: [chatToolCall('call_1', 'call_bank', '{"account":"A-2"}')] },
          'tool_calls',
        ),
      },
      { body: chatCompletion({ content: 'Account A-2 is fine.' }, 'stop') },
    );
    const { client, stop } = await kit.startWorker({
      tools: [callBank],
      secrets: { BANK_API_TOKEN: bankToken },
      models: { compat: openaiCompatibleProvider({ name: 'compat', baseURL: wire.baseURL, apiKey: providerKey }) },
    });
    try {
      const { runId } = await client.startRun({
        tenantId: 'acme',
        model: 'compat:llama3.1',
        prompt: 'check A-2',
        config,
      });
      expect(await client.result(runId)).toMatchObject({ output: 'Account A-2 is fine.' });
      expect(wire.requests.map((request) => request.headers.authorization)).toEqual([
        `Bearer ${providerKey}`,
        `Bearer ${providerKey}`,
      ]);
      const raw = await rawRunRecord(kit.temporal, runId);
      const events = JSON.stringify(await client.events(runId));
      for (const secret of [providerKey, bankToken]) {
        expect(raw).not.toContain(secret);
        expect(events).not.toContain(secret);
      }
    } finally {
      await stop();
      await wire.close();
    }
  });
});
