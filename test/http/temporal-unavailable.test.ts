import { randomUUID } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, inject, it, vi } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { startTemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import type { TemporalDevServer } from '../../src/dev/temporal-dev-server.js';
import { createApi } from '../../src/http/create-api.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// What callers and a load balancer see when the API's Temporal cannot be used: its frontend stopped (a server of this
// file's own, started and stopped here), or a namespace it does not have (on the suite's server).
const apiKeys = new Map([['key-tenant-a-0123456789', { tenantId: 'tenant-a' }]]);

function apiOver(client: RelayClient) {
  const logger = { error: vi.fn(), warn: vi.fn() };
  return { api: createApi({ client, apiKeys, logger }), logger };
}

function get(api: ReturnType<typeof createApi>, path: string): Promise<Response> {
  return Promise.resolve(api.request(path, { headers: { authorization: 'Bearer key-tenant-a-0123456789' } }));
}

async function problemOf(response: Response) {
  return {
    status: response.status,
    retryAfter: response.headers.get('retry-after'),
    contentType: response.headers.get('content-type'),
    body: (await response.json()) as { code: string; detail: string },
  };
}

describe('an API whose Temporal frontend has stopped', () => {
  let server: TemporalDevServer | undefined;
  let client: RelayClient | undefined;

  beforeAll(async () => {
    server = await startTemporalDevServer();
    client = await RelayClient.connect({ address: server.address, taskQueue: `gone-${randomUUID()}` });
    await server.stop();
  });

  afterAll(async () => {
    await client?.close();
    await server?.stop();
  });

  it('answers 503 temporal_unavailable with Retry-After on its routes, each request logged once as a warning', async () => {
    const { api, logger } = apiOver(client!);
    const paths = ['/v1/runs/run-1', '/v1/runs', '/v1/runs/run-1/events', '/v1/approvals', '/v1/tools'];

    const problems = await Promise.all(paths.map(async (path) => problemOf(await get(api, path))));

    for (const [index, problem] of problems.entries()) {
      expect(problem, paths[index]).toEqual({
        status: 503,
        retryAfter: '5',
        contentType: 'application/problem+json',
        body: expect.objectContaining({
          code: 'temporal_unavailable',
          detail: 'Temporal cannot be reached or did not answer in time; try again shortly',
        }) as unknown,
      });
    }
    expect(logger.error).not.toHaveBeenCalled();
    expect(logger.warn).toHaveBeenCalledTimes(paths.length);
    for (const path of paths) {
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringMatching(new RegExp(`^Relay-E: GET ${path} failed \\(503 temporal_unavailable\\): .*UNAVAILABLE`)),
      );
    }
  }, 90_000);

  it('answers /readyz 503 within its two-second bound, while /healthz still answers that the process lives', async () => {
    const { api } = apiOver(client!);
    const asked = Date.now();

    const readiness = await problemOf(await api.request('/readyz'));

    expect(Date.now() - asked).toBeLessThan(2_500);
    expect(readiness).toMatchObject({ status: 503, retryAfter: '5', body: { code: 'temporal_unavailable' } });
    expect(readiness.body.detail).toMatch(
      /^Temporal (could not be reached|did not answer within 2000 ms) \(asked to describe namespace 'default'\)$/,
    );
    expect((await api.request('/healthz')).status).toBe(200);
  });
});

describe('an API set to a namespace Temporal does not have', () => {
  const namespace = `relay-typo-${randomUUID().slice(0, 8)}`;
  let client: RelayClient | undefined;

  beforeAll(async () => {
    client = await RelayClient.connect({ address: inject('temporalAddress'), namespace, taskQueue: 'relay-e' });
  });

  afterAll(async () => {
    await client?.close();
  });

  it('answers 503 temporal_unavailable naming the namespace, on its routes and on /readyz', async () => {
    const { api, logger } = apiOver(client!);
    const detail = `Temporal has no namespace '${namespace}', the one this API is set to use: its operator must create it or correct the setting`;

    for (const path of ['/v1/runs/run-1', '/v1/runs', '/readyz']) {
      const problem = await problemOf(await get(api, path));
      expect(problem, path).toMatchObject({
        status: 503,
        retryAfter: '5',
        body: { code: 'temporal_unavailable', detail },
      });
    }
    expect(logger.error).not.toHaveBeenCalled();
  });
});

describe('an API whose Temporal serves its namespace', () => {
  it('answers /readyz 200 ready', async () => {
    const address = inject('temporalAddress');
    const client = await RelayClient.connect({ address, namespace: inject('temporalNamespace'), taskQueue: 'relay-e' });
    try {
      const response = await apiOver(client).api.request('/readyz');

      expect(response.status).toBe(200);
      expect(await response.json()).toEqual({ status: 'ready' });
    } finally {
      await client.close();
    }
  });
});

describe('a client closed while Temporal cannot be reached', () => {
  it('ends a call still backing off with CANCELLED, where the retry timer would throw out of the process', async () => {
    const proxy = await startTcpProxy(`http://${inject('temporalAddress')}`);
    const namespace = inject('temporalNamespace');
    const client = await RelayClient.connect({ address: new URL(proxy.url).host, namespace, taskQueue: 'relay-e' });
    try {
      proxy.refuse();
      const call = client.temporal.workflowService.describeNamespace({ namespace }).then(
        () => 'answered',
        (error: unknown) => error,
      );
      await sleep(1_000); // the SDK's retries back off between attempts, each refused at once
      await client.close();

      expect(await Promise.race([call, sleep(3_000, 'still pending 3 s after the close')])).toMatchObject({
        code: 1,
        details: 'the connection to Temporal was closed',
      });
    } finally {
      await client.close();
      await proxy.close();
    }
  });
});
