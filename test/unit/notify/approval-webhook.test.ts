import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import {
  approvalReminderMs,
  approvalSignatureHeader,
  approvalWebhookFor,
  approvalWebhookFromEnv,
  approvalWebhookTenantsFromEnv,
  checkApprovalWebhook,
  linkedToInbox,
  webhookForTenants,
  signApprovalNotice,
  verifyApprovalNotice,
} from '../../../src/notify/approval-webhook.js';
import { RelayError } from '../../../src/shared/errors.js';
import { slackMessageOf } from '../../../src/notify/slack-message.js';
import type { ApprovalNotice } from '../../../src/shared/approval-notice.js';

const secret = 'a-secret-of-sixteen-or-more';
const body = JSON.stringify({ type: 'approval.requested', id: 'run-1/call_1_0' });
const at = new Date('2026-12-04T12:00:00.000Z');

function refusal(run: () => unknown): string | undefined {
  try {
    run();
  } catch (error) {
    return RelayError.isInstance(error) ? `${error.code}: ${error.message}` : String(error);
  }
  return undefined;
}

describe('approval notice signatures', () => {
  it('verifies a notice signed with the same secret and returns its body parsed', () => {
    const signature = signApprovalNotice(body, secret, at);
    expect(signature).toMatch(/^t=1796385600,v1=[0-9a-f]{64}$/);
    expect(verifyApprovalNotice({ body, signature, secret, now: at })).toEqual(JSON.parse(body));
  });

  it('refuses another secret, a changed body, a missing header and an old signature', () => {
    const signature = signApprovalNotice(body, secret, at);
    expect(refusal(() => verifyApprovalNotice({ body, signature, secret: `${secret}!`, now: at }))).toMatch(
      /^invalid_signature: The notice is not signed with this secret/,
    );
    expect(refusal(() => verifyApprovalNotice({ body: `${body} `, signature, secret, now: at }))).toMatch(
      /^invalid_signature: The notice is not signed/,
    );
    expect(refusal(() => verifyApprovalNotice({ body, signature: undefined, secret, now: at }))).toMatch(
      /^invalid_signature: The relay-e-signature header is missing/,
    );
    expect(refusal(() => verifyApprovalNotice({ body, signature: 'v1=abc', secret, now: at }))).toMatch(
      /^invalid_signature: The relay-e-signature header is missing or malformed/,
    );
    const sixMinutesLater = new Date(at.getTime() + 6 * 60_000);
    expect(refusal(() => verifyApprovalNotice({ body, signature, secret, now: sixMinutesLater }))).toMatch(
      /^invalid_signature: The notice was signed more than 300 s from now/,
    );
    expect(verifyApprovalNotice({ body, signature, secret, now: sixMinutesLater, toleranceSeconds: 600 })).toBeTruthy();
  });
});

describe('verifying with a missing or short secret', () => {
  it("is refused as the receiver's set-up (invalid_input), where it accepted notices anyone could sign", () => {
    for (const weak of ['', 'x']) {
      const forged = signApprovalNotice(body, weak, at);
      expect(refusal(() => verifyApprovalNotice({ body, signature: forged, secret: weak, now: at }))).toMatch(
        /^invalid_input: The approval webhook secret to verify with must be at least 16 characters/,
      );
    }
  });
});

describe('approval webhook settings', () => {
  it('refuses a URL that is not http(s), a short secret and a bad inbox URL', () => {
    expect(refusal(() => checkApprovalWebhook({ url: 'ftp://example.test/hook', secret }))).toBe(
      'invalid_input: Approval webhook URL must be http: or https: (not ftp:)',
    );
    expect(refusal(() => checkApprovalWebhook({ url: 'not a url', secret }))).toBe(
      'invalid_input: Approval webhook URL is not a URL',
    );
    // fetch would refuse it, quoting the password in an error recorded in the run's history.
    const withPassword = refusal(() => checkApprovalWebhook({ url: 'https://relay:hunter2@hooks.test/T0/x', secret }));
    expect(withPassword).toMatch(/must not carry a user name or password/);
    expect(withPassword).not.toContain('hunter2');
    expect(refusal(() => checkApprovalWebhook({ url: 'https://relay@hooks.test/T0/x', secret }))).toMatch(
      /must not carry a user name/,
    );
    expect(refusal(() => checkApprovalWebhook({ url: 'http://127.0.0.1/hook', secret: 'short' }))).toMatch(
      /secret must be at least 16 characters/,
    );
    expect(refusal(() => checkApprovalWebhook({ url: 'http://127.0.0.1/hook', secret, inboxUrl: 'inbox' }))).toMatch(
      /inbox URL 'inbox' is not a URL/,
    );
  });

  it('picks a tenant’s webhook from a function, and checks what it answers', () => {
    const webhooks = (tenantId: string) =>
      tenantId === 'acme' ? { url: 'https://hooks.example.test/acme', secret } : undefined;
    expect(approvalWebhookFor(webhooks, 'acme')?.url).toBe('https://hooks.example.test/acme');
    expect(approvalWebhookFor(webhooks, 'globex')).toBeUndefined();
    expect(refusal(() => approvalWebhookFor(() => ({ url: 'x', secret }), 'acme'))).toMatch(/is not a URL/);
    expect(refusal(() => checkApprovalWebhook({ url: 'https://hooks.slack.test/x', format: 'teams' as 'slack' }))).toBe(
      "invalid_input: Approval webhook format 'teams' is not 'relay-e' or 'slack'",
    );
    // A Slack incoming webhook's URL is its secret: it needs none of its own.
    expect(refusal(() => checkApprovalWebhook({ url: 'https://hooks.slack.test/x', format: 'slack' }))).toBeUndefined();
  });

  it('reads the environment, and refuses a URL without a secret or a secret without a URL', () => {
    expect(approvalWebhookFromEnv({})).toBeUndefined();
    expect(
      approvalWebhookFromEnv({
        RELAY_E_APPROVAL_WEBHOOK_URL: 'http://127.0.0.1:9000/hook',
        RELAY_E_APPROVAL_WEBHOOK_SECRET: secret,
        RELAY_E_INBOX_URL: 'http://127.0.0.1:8787',
      }),
    ).toEqual({ url: 'http://127.0.0.1:9000/hook', secret, inboxUrl: 'http://127.0.0.1:8787' });
    expect(refusal(() => approvalWebhookFromEnv({ RELAY_E_APPROVAL_WEBHOOK_URL: 'http://127.0.0.1/hook' }))).toMatch(
      /RELAY_E_APPROVAL_WEBHOOK_SECRET is not set/,
    );
    expect(refusal(() => approvalWebhookFromEnv({ RELAY_E_APPROVAL_WEBHOOK_SECRET: secret }))).toMatch(
      /RELAY_E_APPROVAL_WEBHOOK_URL is not set/,
    );
    expect(
      approvalWebhookFromEnv({
        RELAY_E_APPROVAL_WEBHOOK_URL: 'https://hooks.slack.test/services/T/B/x',
        RELAY_E_APPROVAL_WEBHOOK_FORMAT: 'slack',
      }),
    ).toEqual({ url: 'https://hooks.slack.test/services/T/B/x', format: 'slack' });
    expect(
      refusal(() =>
        approvalWebhookFromEnv({
          RELAY_E_APPROVAL_WEBHOOK_URL: 'https://x.test/',
          RELAY_E_APPROVAL_WEBHOOK_FORMAT: 'xml',
        }),
      ),
    ).toBe("invalid_input: Approval webhook format 'xml' is not 'relay-e' or 'slack'");
  });

  it('limits the environment’s webhook to the tenants it lists', () => {
    const env = { RELAY_E_APPROVAL_WEBHOOK_URL: 'http://127.0.0.1:9000/hook', RELAY_E_APPROVAL_WEBHOOK_SECRET: secret };
    expect(approvalWebhookTenantsFromEnv(env)).toBeUndefined();
    const tenants = approvalWebhookTenantsFromEnv({ ...env, RELAY_E_APPROVAL_WEBHOOK_TENANTS: ' acme, globex ,' });
    expect(tenants).toEqual(['acme', 'globex']);
    const webhook = approvalWebhookFromEnv(env);
    const served = webhookForTenants(webhook!, tenants!);
    expect(approvalWebhookFor(served, 'acme')).toEqual(webhook);
    expect(approvalWebhookFor(served, 'initech')).toBeUndefined();
    expect(refusal(() => approvalWebhookTenantsFromEnv({ ...env, RELAY_E_APPROVAL_WEBHOOK_TENANTS: ' , ' }))).toBe(
      "invalid_input: RELAY_E_APPROVAL_WEBHOOK_TENANTS ' , ' names no tenant",
    );
    expect(refusal(() => approvalWebhookFromEnv({ RELAY_E_APPROVAL_WEBHOOK_TENANTS: 'acme' }))).toMatch(
      /RELAY_E_APPROVAL_WEBHOOK_URL is not set/,
    );
  });

  it('takes a reminder lead time as a duration, beside a webhook only', () => {
    const webhook = { url: 'https://hooks.example.test/relay-e', secret };
    expect(approvalReminderMs(undefined, undefined)).toBeUndefined();
    expect(approvalReminderMs('1h', webhook)).toBe(3_600_000);
    expect(approvalReminderMs(90_000, () => webhook)).toBe(90_000);
    expect(refusal(() => approvalReminderMs('soon', webhook))).toBe(
      "invalid_input: Approval reminder 'soon' is not a duration (as '1h' or ms)",
    );
    expect(refusal(() => approvalReminderMs('-1h', webhook))).toMatch(/must be a positive duration/);
    expect(refusal(() => approvalReminderMs(0, webhook))).toMatch(/must be a positive duration/);
    expect(refusal(() => approvalReminderMs('1h', undefined))).toBe(
      'invalid_input: An approval reminder needs an approval webhook to send it',
    );
  });

  it('links notices to an inbox where their webhook names none', () => {
    const signed = { url: 'https://hooks.example.test/relay-e', secret };
    // The inbox's address is known once it listens: until then, no link.
    const inbox: { url?: string } = {};
    const inboxUrl = () => inbox.url;
    const linked = linkedToInbox(signed, inboxUrl);
    expect(approvalWebhookFor(linked, 'acme')).toEqual(signed);
    inbox.url = 'http://127.0.0.1:8787';
    expect(approvalWebhookFor(linked, 'acme')).toEqual({ ...signed, inboxUrl: inbox.url });
    const own = { ...signed, inboxUrl: 'https://inbox.example.test' };
    expect(approvalWebhookFor(linkedToInbox(own, inboxUrl), 'acme')).toEqual(own);
    expect(
      approvalWebhookFor(
        linkedToInbox(() => undefined, inboxUrl),
        'acme',
      ),
    ).toBeUndefined();
    expect(refusal(() => linkedToInbox({ url: 'ftp://x.test', secret }, inboxUrl))).toMatch(/must be http/);
  });
});

describe('approval notices as Slack messages', () => {
  const base = {
    tenantId: 'acme',
    runId: 'run_1',
    model: 'scripted:test',
    toolCallId: 'call_1_0',
    toolName: 'transfer_funds',
    step: 1,
    requestedAt: '2026-12-04T12:00:00.000Z',
    expiresAt: '2026-12-05T12:00:00.000Z',
    inboxUrl: 'http://127.0.0.1:8787/inbox/runs/run_1',
  };

  it('names the waiting tool, the run, the deadline and the input, with a link to the inbox', () => {
    const notice: ApprovalNotice = {
      ...base,
      type: 'approval.requested',
      id: 'run_1/call_1_0/requested',
      input: { to: '<B&C>' },
    };
    expect(slackMessageOf(notice)).toEqual({
      text:
        ':hourglass_flowing_sand: *transfer_funds* waits for approval in run `run_1` (tenant acme), until ' +
        '2026-12-05T12:00:00.000Z.\n```{"to":"&lt;B&amp;C&gt;"}```\n<http://127.0.0.1:8787/inbox/runs/run_1|Open it in the inbox>',
    });
  });

  it('reminds of a call that still waits', () => {
    const expiring = {
      ...base,
      type: 'approval.expiring',
      id: 'run_1/call_1_0/expiring',
      input: { amount: 5 },
    } as const;
    expect(slackMessageOf(expiring).text).toMatch(
      /^:warning: \*transfer_funds\* still waits for approval in run `run_1` \(tenant acme\), until .*\n```\{"amount":5\}```/,
    );
  });

  it('says who may decide a call and how many of them must approve it, and who approved it', () => {
    const fourEyes = { ...base, approvers: ['cfo', 'finance-lead'], approvalsRequired: 2 };
    const requested = { ...fourEyes, type: 'approval.requested', id: 'run_1/call_1_0/requested', input: {} } as const;
    expect(slackMessageOf(requested).text).toContain(
      'until 2026-12-05T12:00:00.000Z. It needs 2 different approvers. Decided by cfo or finance-lead only.\n',
    );
    const approved: ApprovalNotice = {
      ...fourEyes,
      type: 'approval.decided',
      id: 'run_1/call_1_0/decided',
      decidedAt: base.expiresAt,
      outcome: 'approved',
      approver: 'cfo',
      approvedBy: ['finance-lead', 'cfo'],
    };
    const added: ApprovalNotice = {
      ...fourEyes,
      type: 'approval.added',
      id: 'run_1/call_1_0/added-1',
      approver: 'finance-lead',
      reason: 'checked',
      approvals: 1,
      approvalsRequired: 2,
    };
    expect(slackMessageOf(added).text).toMatch(
      /^:ballot_box_with_check: \*transfer_funds\* was approved by finance-lead \(checked\) in run `run_1` \(tenant acme\): 1 of 2 approvals\. It waits for another approver until 2026-12-05T12:00:00\.000Z\./,
    );
    expect(slackMessageOf(approved).text).toMatch(
      /^:white_check_mark: \*transfer_funds\* was approved by finance-lead and cfo in run/,
    );
  });

  it('says how the wait ended', () => {
    const decided = {
      ...base,
      type: 'approval.decided',
      id: 'run_1/call_1_0/decided',
      decidedAt: base.expiresAt,
    } as const;
    expect(slackMessageOf({ ...decided, outcome: 'rejected', approver: 'bob', reason: 'too much' }).text).toMatch(
      /^:x: \*transfer_funds\* was rejected by bob: too much in run `run_1` \(tenant acme\)\./,
    );
    expect(slackMessageOf({ ...decided, outcome: 'approved', approver: 'alice', edited: true }).text).toMatch(
      /^:white_check_mark: \*transfer_funds\* was approved by alice with an edited input in run/,
    );
    expect(slackMessageOf({ ...decided, outcome: 'expired', inboxUrl: undefined }).text).toBe(
      ':alarm_clock: *transfer_funds* expired without a decision in run `run_1` (tenant acme).',
    );
    expect(slackMessageOf({ ...decided, outcome: 'withdrawn', runStatus: 'cancelled', inboxUrl: undefined }).text).toBe(
      ':no_entry_sign: *transfer_funds* was withdrawn (the run was cancelled) in run `run_1` (tenant acme).',
    );
  });
});

describe('a receiver under test', () => {
  it('takes a notice signed as a worker signs it and refuses one signed with another secret', async () => {
    const receiverSecret = 'receiver-secret-0123456789';
    const receiver = createServer((request, response) => {
      let received = '';
      request.on('data', (chunk: Buffer) => (received += chunk.toString()));
      request.on('end', () => {
        const signature = request.headers[approvalSignatureHeader] as string | undefined;
        const accepted = refusal(() => verifyApprovalNotice({ body: received, signature, secret: receiverSecret }));
        response.writeHead(accepted === undefined ? 204 : 401).end();
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/`;
    const notice = { type: 'approval.requested', id: 'run_1/call_1_0/requested', toolName: 'transfer_funds' };
    try {
      // #region post-a-signed-notice
      const body = JSON.stringify(notice);
      const post = (secret: string) =>
        fetch(url, {
          method: 'POST',
          headers: { 'content-type': 'application/json', [approvalSignatureHeader]: signApprovalNotice(body, secret) },
          body,
        });
      expect((await post(receiverSecret)).status).toBe(204);
      expect((await post('another-secret-0123456789')).status).toBe(401);
      // #endregion post-a-signed-notice
    } finally {
      await new Promise<void>((resolve) => receiver.close(() => resolve()));
    }
  });
});
