import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { RelayClient } from '../../src/client/relay-client.js';
import { verifyApprovalNotice } from '../../src/notify/approval-webhook.js';
import type { ApprovalNotice } from '../../src/shared/approval-notice.js';
import { spawnRelayE } from '../helpers/relay-e-process.js';

// `relay-e worker` configured by the environment alone, as in the compose file: its notices reach a local receiver.
const taskQueue = `webhook-cli-${randomUUID()}`;
const secret = 'cli-webhook-secret-0123456789';
const notices: ApprovalNotice[] = [];
const receiver = createServer((request, response) => {
  let body = '';
  request.on('data', (chunk: Buffer) => (body += chunk.toString()));
  request.on('end', () => {
    notices.push(verifyApprovalNotice({ body, signature: request.headers['relay-e-signature'] as string, secret }));
    response.writeHead(204).end();
  });
});
let url = '';
/** What the worker's ready line names the webhook by. */
const origin = () => new URL(url).origin;
let folder = '';
let client: RelayClient;

function workerEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  return { ...process.env, TEMPORAL_ADDRESS: inject('temporalAddress'), RELAY_E_TASK_QUEUE: taskQueue, ...extra };
}

beforeAll(async () => {
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/notices`;
  // The demo worker keeps its bank under the folder it runs in.
  folder = await mkdtemp(path.join(tmpdir(), 'relay-e-webhook-cli-'));
  client = await RelayClient.connect({ address: inject('temporalAddress'), taskQueue });
});

afterAll(async () => {
  await client?.close();
  await new Promise<void>((resolve) => receiver.close(() => resolve()));
  await rm(folder, { recursive: true, force: true });
});

describe('relay-e worker and dev with an approval webhook from the environment', () => {
  it('says where it notifies and posts a signed notice, linked to the inbox, for a waiting transfer', async () => {
    const env = workerEnv({
      RELAY_E_APPROVAL_WEBHOOK_URL: url,
      RELAY_E_APPROVAL_WEBHOOK_SECRET: secret,
      RELAY_E_INBOX_URL: 'http://127.0.0.1:8787',
    });
    const worker = spawnRelayE(['worker', '--json'], { cwd: folder, env });
    try {
      // By its origin only: a webhook's path or query may hold a credential.
      expect(JSON.parse(await worker.nextLine())).toMatchObject({ status: 'ready', approvalWebhook: origin() });
      const { runId } = await client.startRun({
        tenantId: 'demo',
        model: 'scripted:demo',
        prompt: 'transfer 5 from ACC-1 to ACC-2',
      });
      const waiting = await waitFor(async () => {
        const events = await client.events(runId);
        return events.some((event) => event.type === 'tool_approval_notified') ? client.getRun(runId) : undefined;
      });
      expect(notices.filter((notice) => notice.runId === runId)).toMatchObject([
        {
          type: 'approval.requested',
          toolName: 'transfer_funds',
          toolCallId: waiting.pendingApprovals[0]?.toolCallId,
          input: waiting.pendingApprovals[0]?.input,
          inboxUrl: `http://127.0.0.1:8787/inbox/runs/${encodeURIComponent(runId)}`,
        },
      ]);
      await client.cancel(runId);
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });

  it('links the notices of relay-e dev to the inbox it serves when no inbox URL is set', async () => {
    const devQueue = `webhook-dev-${randomUUID()}`;
    const env = {
      ...workerEnv({ RELAY_E_APPROVAL_WEBHOOK_URL: url, RELAY_E_APPROVAL_WEBHOOK_SECRET: secret }),
      RELAY_E_TASK_QUEUE: devQueue,
      RELAY_E_INBOX_URL: '',
    };
    const dev = spawnRelayE(['dev', '--json', '--port', '0', '--temporal-address', inject('temporalAddress')], {
      cwd: folder,
      env,
    });
    const devClient = await RelayClient.connect({ address: inject('temporalAddress'), taskQueue: devQueue });
    try {
      const ready = JSON.parse(await dev.nextLine()) as { apiUrl: string; approvalWebhook: string };
      expect(ready.approvalWebhook).toBe(origin());
      const { runId } = await devClient.startRun({
        tenantId: 'demo',
        model: 'scripted:demo',
        prompt: 'transfer 5 from ACC-1 to ACC-2',
      });
      const notice = await waitFor(async () => notices.find((each) => each.runId === runId));
      expect(notice.inboxUrl).toBe(`${ready.apiUrl}/inbox/runs/${encodeURIComponent(runId)}`);
      await devClient.cancel(runId);
    } finally {
      await devClient.close();
      expect(await dev.stop()).toBe(0);
    }
  });

  it('refuses to start with a webhook URL but no secret, naming what is missing', async () => {
    const worker = spawnRelayE(['worker', '--json'], {
      cwd: folder,
      env: workerEnv({ RELAY_E_APPROVAL_WEBHOOK_URL: url }),
    });
    expect(await worker.exited).not.toBe(0);
    expect(worker.stderr()).toContain('RELAY_E_APPROVAL_WEBHOOK_SECRET is not set');
  });

  it('refuses a reminder that is not a duration, and says whom it notifies and when it reminds', async () => {
    const env = { RELAY_E_APPROVAL_WEBHOOK_URL: url, RELAY_E_APPROVAL_WEBHOOK_SECRET: secret };
    const refused = spawnRelayE(['worker', '--json'], {
      cwd: folder,
      env: workerEnv({ ...env, RELAY_E_APPROVAL_REMINDER: 'soon' }),
    });
    expect(await refused.exited).not.toBe(0);
    expect(refused.stderr()).toContain("Approval reminder 'soon' is not a duration");
    const worker = spawnRelayE(['worker', '--json'], {
      cwd: folder,
      env: workerEnv({ ...env, RELAY_E_APPROVAL_REMINDER: '1h', RELAY_E_APPROVAL_WEBHOOK_TENANTS: 'acme,demo' }),
    });
    try {
      expect(JSON.parse(await worker.nextLine())).toMatchObject({
        approvalWebhook: `${origin()} (tenants acme, demo) (reminded 1h before a call expires)`,
      });
    } finally {
      expect(await worker.stop()).toBe(0);
    }
  });
});

async function waitFor<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`Nothing after ${timeoutMs} ms`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
