import { describe, expect, inject, it, vi } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { createApi } from '../../src/http/create-api.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { readServerSentEvents } from './http-test-kit.js';
import type { ServerSentMessage } from './http-test-kit.js';

// A run on the suite's server, and an API whose own connection to that server goes through a proxy the test makes
// refuse, as when the Temporal frontend the API uses goes down while a caller follows a run.

const kit = useRelayTestKit();

describe('an event stream whose Temporal stops answering while it follows a run', () => {
  it('ends with a stream_failed event holding the problem, so the caller can tell it from a dropped connection', async () => {
    const { client, stop } = await kit.startWorker({
      tools: createTestTools(createLedger()),
      models: {
        scripted: scriptedModel([
          { toolCalls: [{ name: 'transfer_funds', input: { from: 'A', to: 'B', amount: 5 } }] },
        ]),
      },
    });
    const proxy = await startTcpProxy(`http://${inject('temporalAddress')}`);
    const proxied = await RelayClient.connect({
      address: new URL(proxy.url).host,
      namespace: inject('temporalNamespace'),
      taskQueue: client.taskQueue,
      callRetry: { maxAttempts: 2 },
    });
    const logger = { error: vi.fn(), warn: vi.fn() };
    const api = createApi({
      client: proxied,
      apiKeys: new Map([['key-acme-0123456789', { tenantId: 'acme' }]]),
      logger,
    });
    const { runId } = await client.startRun({ tenantId: 'acme', model: 'scripted:test', prompt: 'pay' });
    try {
      await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
      const response = await api.request(`/v1/runs/${runId}/events`, {
        headers: { authorization: 'Bearer key-acme-0123456789' },
      });
      expect(response.status).toBe(200);

      const messages: ServerSentMessage[] = [];
      for await (const message of readServerSentEvents(response)) {
        messages.push(message);
        if ('data' in message && message.event === 'tool_awaiting_approval') proxy.refuse();
      }

      const last = messages.at(-1);
      expect(last && 'data' in last ? { event: last.event, data: JSON.parse(last.data) as unknown } : last).toEqual({
        event: 'stream_failed',
        data: {
          type: 'stream_failed',
          problem: expect.objectContaining({ status: 503, code: 'temporal_unavailable' }) as unknown,
          retryAfter: expect.any(Number) as unknown,
        },
      });
      // As the API's routes log a Temporal they cannot use: one warning line with the cause, not a fault.
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringMatching(
          /^Relay-E: the event stream of \/v1\/runs\/\S+\/events failed \(503 temporal_unavailable\): /,
        ),
      );
      expect(logger.error).not.toHaveBeenCalled();
    } finally {
      await client.cancel(runId);
      await proxied.close();
      await proxy.close();
      await stop();
    }
  });
});
