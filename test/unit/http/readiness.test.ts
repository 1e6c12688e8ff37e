import { Connection } from '@temporalio/client';
import type { Interceptor } from '@grpc/grpc-js';
import { InterceptingCall } from '@grpc/grpc-js';
import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import { relayConnectionInterceptors } from '../../../src/client/connection-interceptors.js';
import { RelayClient } from '../../../src/client/relay-client.js';
import { createApi } from '../../../src/http/create-api.js';
import { TemporalReadiness } from '../../../src/http/temporal-readiness.js';
import { freePort } from '../../helpers/free-port.js';

// A Temporal that cannot be reached: a client whose connection points at a free port where nothing listens, with the
// interceptors `RelayClient.connect` opens one with, under a count of the calls the client makes.
const calls: string[] = [];
const countCalls: Interceptor = (options, nextCall) => {
  calls.push(String(options.method_definition.path));
  return new InterceptingCall(nextCall(options));
};
let client: RelayClient;

beforeAll(async () => {
  const address = `127.0.0.1:${await freePort()}`;
  const connection = Connection.lazy({ address, interceptors: [countCalls, ...relayConnectionInterceptors()] });
  client = await RelayClient.connect({ connection, namespace: 'relay-prd', taskQueue: 'relay-e' });
});

afterAll(async () => {
  await client.temporal.connection.close();
});

afterEach(() => {
  calls.length = 0;
  vi.useRealTimers();
});

const describeNamespace = '/temporal.api.workflowservice.v1.WorkflowService/DescribeNamespace';

describe('GET /readyz', () => {
  it('answers 503 temporal_unavailable saying why, without a key, while Temporal cannot be reached', async () => {
    const api = createApi({ client, apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]) });
    const asked = Date.now();

    const response = await api.request('/readyz');

    expect(Date.now() - asked).toBeLessThan(2_500);
    expect(response.status).toBe(503);
    expect(response.headers.get('content-type')).toBe('application/problem+json');
    expect(response.headers.get('retry-after')).toBe('5');
    expect(await response.json()).toMatchObject({
      code: 'temporal_unavailable',
      title: 'Temporal unavailable',
      detail: expect.stringMatching(
        /^Temporal (could not be reached|did not answer within 2000 ms) \(asked to describe namespace 'relay-prd'\)$/,
      ) as unknown,
    });
  });

  it('leaves /healthz a liveness check: 200 without asking Temporal', async () => {
    const api = createApi({ client, apiKeys: new Map([['key-tenant-a-0123456789', { tenantId: 'a' }]]) });

    const response = await api.request('/healthz');

    expect([response.status, await response.json()]).toEqual([200, { status: 'ok' }]);
    expect(calls).toEqual([]);
  });
});

describe('TemporalReadiness', () => {
  it('asks Temporal once for the checks made while it asks and within a second of its answer, then again', async () => {
    vi.useFakeTimers({ toFake: ['Date'] });
    const readiness = new TemporalReadiness(client, { timeoutMs: 200, reuseMs: 1_000 });

    const [first, concurrent] = await Promise.all([readiness.check(), readiness.check()]);
    vi.advanceTimersByTime(900);
    const withinTheSecond = await readiness.check();
    expect(calls.filter((path) => path === describeNamespace)).toHaveLength(1);
    vi.advanceTimersByTime(200);
    await readiness.check();

    expect(calls.filter((path) => path === describeNamespace)).toHaveLength(2);
    expect(concurrent).toBe(first);
    expect(withinTheSecond).toBe(first);
    expect(first?.code).toBe('temporal_unavailable');
  });
});
