import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { MockActivityEnvironment } from '@temporalio/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createNotifyApprovers } from '../../../activities/notify-approvers.js';
import { verifyApprovalNotice } from '../../../src/notify/approval-webhook.js';
import type { ApprovalNotice } from '../../../src/shared/approval-notice.js';

const secret = 'notice-secret-0123456789';
const notice: ApprovalNotice = {
  type: 'approval.requested',
  id: 'run-1/call_1_0',
  tenantId: 'acme',
  runId: 'run-1',
  model: 'scripted:test',
  toolCallId: 'call_1_0',
  toolName: 'transfer_funds',
  step: 1,
  input: { amount: 100 },
  requestedAt: '2026-12-04T12:00:00.000Z',
  expiresAt: '2026-12-05T12:00:00.000Z',
};

/** A webhook receiver on a local port that answers each request with the next status in `statuses`. */
let statuses: number[] = [];
const received: Array<{ body: string; signature: string | undefined; delivery: string | undefined }> = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    const signature = request.headers['relay-e-signature'];
    const delivery = request.headers['relay-e-delivery'];
    received.push({ body, signature: signature as string | undefined, delivery: delivery as string | undefined });
    response.writeHead(statuses.shift() ?? 204).end();
  });
});
let url = '';

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

const ignore = () => undefined;
/** The SDK logs every failed attempt; the assertions read the failures themselves. */
const quiet = { log: ignore, trace: ignore, debug: ignore, info: ignore, warn: ignore, error: ignore };

/** Runs the activity as Temporal's attempt `attempt` of 3. */
function attemptToNotify(webhooks: Parameters<typeof createNotifyApprovers>[0], attempt = 1) {
  const environment = new MockActivityEnvironment({ attempt, retryPolicy: { maximumAttempts: 3 } }, { logger: quiet });
  return environment.run(createNotifyApprovers(webhooks), notice);
}

describe('the notifyApprovers activity', () => {
  it('posts the notice signed, with its id, and links it to the inbox', async () => {
    received.length = 0;
    statuses = [202];
    const ending = await attemptToNotify({ url, secret, inboxUrl: 'http://127.0.0.1:8787/' });
    expect(ending).toMatchObject({ outcome: 'delivered', status: 202, attempt: 1 });
    expect(received).toHaveLength(1);
    const [request] = received;
    expect(request?.delivery).toBe('run-1/call_1_0');
    const posted = verifyApprovalNotice({ body: request?.body ?? '', signature: request?.signature, secret });
    expect(posted).toEqual({ ...notice, inboxUrl: 'http://127.0.0.1:8787/inbox/runs/run-1' });
  });

  it('posts a Slack message, unsigned, to a Slack-format webhook (a local receiver stands in for Slack)', async () => {
    received.length = 0;
    statuses = [200];
    const ending = await attemptToNotify({ url, format: 'slack', inboxUrl: 'http://127.0.0.1:8787' });
    expect(ending).toMatchObject({ outcome: 'delivered', status: 200 });
    const [request] = received;
    expect(request?.signature).toBeUndefined();
    const message = JSON.parse(request?.body ?? '') as { text?: string };
    expect(Object.keys(message)).toEqual(['text']);
    expect(message.text).toMatch(/^:hourglass_flowing_sand: \*transfer_funds\* waits for approval in run `run-1`/);
  });

  it('throws a receiver’s 503 for Temporal to retry, and reports it on the last attempt', async () => {
    statuses = [503, 503];
    await expect(attemptToNotify({ url, secret }, 1)).rejects.toMatchObject({
      type: 'approval_webhook_unavailable',
      nonRetryable: false,
    });
    await expect(attemptToNotify({ url, secret }, 3)).resolves.toMatchObject({
      outcome: 'failed',
      status: 503,
      attempt: 3,
      error: `Approval webhook ${new URL(url).origin} answered 503`,
    });
  });

  it('gives up at once on a 4xx or a redirect: the receiver refused the request itself', async () => {
    statuses = [401, 302];
    await expect(attemptToNotify({ url, secret }, 1)).resolves.toMatchObject({ outcome: 'failed', status: 401 });
    received.length = 0;
    await expect(attemptToNotify({ url, secret }, 1)).resolves.toMatchObject({ outcome: 'failed', status: 302 });
    // The redirect was not followed: the receiver saw one request.
    expect(received).toHaveLength(1);
  });

  it('retries a receiver nobody listens on', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const failure = (await attemptToNotify({ url: `http://127.0.0.1:${port}/hook`, secret }).catch(
      (error: unknown) => error,
    )) as { type?: string; message?: string };
    expect(failure.type).toBe('approval_webhook_unavailable');
    expect(failure.message).toMatch(/unreachable: .*ECONNREFUSED/);
  });

  it('retries a tenant’s webhook whose lookup threw, and reports it on the last attempt', async () => {
    // The team's function reads its tenants' webhooks from a database that did not answer this time.
    const lookup = () => {
      throw new Error('tenant settings unavailable');
    };
    await expect(attemptToNotify(lookup, 1)).rejects.toMatchObject({
      type: 'approval_webhook_lookup_failed',
      nonRetryable: false,
    });
    await expect(attemptToNotify(lookup, 3)).resolves.toMatchObject({
      outcome: 'failed',
      error: 'tenant settings unavailable',
      attempt: 3,
    });
  });

  it('sends nothing for a tenant without a webhook, and fails a notice on a worker with none', async () => {
    received.length = 0;
    await expect(attemptToNotify(() => undefined)).resolves.toMatchObject({ outcome: 'not_configured' });
    await expect(attemptToNotify(() => ({ url, secret: 'short' }))).resolves.toMatchObject({
      outcome: 'failed',
      error: 'Approval webhook secret must be at least 16 characters',
    });
    await expect(attemptToNotify(undefined)).resolves.toMatchObject({
      outcome: 'failed',
      error: 'The worker that took this notice on task queue test has no approval webhook',
    });
    expect(received).toHaveLength(0);
  });
});
