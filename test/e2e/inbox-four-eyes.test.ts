import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ApiKeyTenant } from '../../src/http/api-keys.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import type { ToolDefinition } from '../../src/tool/define-tool.js';
import { launchChromium } from '../helpers/chromium.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { httpTestModel } from '../http/http-test-kit.js';

// The web inbox in real Chromium deciding a call whose tool needs two approvers (four eyes): each approver signs
// in with their own key, the first sees their approval counted, the second sees whose it was and runs the call.

const tenantId = 'four-eyes-inbox';
const keys = { lead: 'key-four-eyes-lead', cfo: 'key-four-eyes-cfo', ops: 'key-four-eyes-ops' };
const apiKeys = new Map<string, ApiKeyTenant>([
  [keys.lead, { tenantId, name: 'finance-lead' }],
  [keys.cfo, { tenantId, name: 'cfo' }],
  [keys.ops, { tenantId, name: 'ops' }],
]);
const patience = { timeout: 15_000 };
const ledger = createLedger();
const kit = useRelayTestKit();
let worker: RunningWorker;
let api: ApiServer;
let browser: Browser;

beforeAll(async () => {
  const tools = createTestTools(ledger).map((tool): ToolDefinition =>
    tool.name === 'transfer_funds'
      ? defineTool({ ...(tool as ToolDefinition), approvers: ['finance-lead', 'cfo'], approvalsRequired: 2 })
      : tool,
  );
  worker = await kit.startWorker({ tools, models: { scripted: scriptedModel(httpTestModel) } });
  api = await startApiServer({ client: worker.client, apiKeys });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await worker?.stop();
});

async function openRun(context: BrowserContext, key: string, runId: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(api.url);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pending approvals' }).waitFor();
  await page.getByRole('link', { name: `transfer_funds in run ${runId}` }).click();
  await page.getByRole('button', { name: 'Approve' }).waitFor();
  return page;
}

/** Whether the Approve and Reject buttons of the page's one form can be pressed. */
async function buttonsEnabled(page: Page): Promise<{ approve: boolean; reject: boolean }> {
  return {
    approve: await page.getByRole('button', { name: 'Approve' }).isEnabled(),
    reject: await page.getByRole('button', { name: 'Reject' }).isEnabled(),
  };
}

describe('the inbox on a call that needs two approvers', () => {
  it('counts the first approval, shows the second approver whose it was, and runs the call at the second', async () => {
    const { client } = worker;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    const contexts = [await browser.newContext(), await browser.newContext(), await browser.newContext()];
    try {
      const ops = await openRun(contexts[2]!, keys.ops, runId);
      expect(await ops.locator('header .who').textContent()).toMatch(/Signed in as ops, tenant\s+four-eyes-inbox/);
      expect(await ops.locator('[data-barred]').textContent()).toBe(
        'You are signed in as ops: only finance-lead or cfo may decide it.',
      );
      expect(await buttonsEnabled(ops)).toEqual({ approve: false, reject: false });

      const lead = await openRun(contexts[0]!, keys.lead, runId);
      expect(await buttonsEnabled(lead)).toEqual({ approve: true, reject: true });
      expect(await lead.locator('form.approval').textContent()).toContain(
        'It needs 2 different approvers: 0 of 2 approvals.',
      );
      const editor = lead.getByLabel('Input (JSON; it runs as proposed once 2 approvers approve it)');
      expect(await editor.getAttribute('readonly')).toBe('');
      await lead.getByRole('button', { name: 'Approve' }).click();
      await expect
        .poll(() => lead.locator('#decision-status').textContent(), patience)
        .toBe('Your approval is in: 1 of 2. The call waits for another approver.');
      await lead.locator('[data-event-type="tool_approval_added"]').waitFor();
      expect(await lead.locator('[data-event-type="tool_approval_added"]').textContent()).toContain(
        'approval 1 of 2, by finance-lead',
      );
      // The form is drawn again with the approval: its approver may still reject, not approve again.
      await expect
        .poll(() => lead.locator('[data-barred]').textContent(), patience)
        .toBe('You have approved it: it waits for another approver. You can still reject it.');
      expect(await buttonsEnabled(lead)).toEqual({ approve: false, reject: true });
      expect(ledger.transfers).toEqual([]);

      const cfo = await openRun(contexts[1]!, keys.cfo, runId);
      await expect
        .poll(() => cfo.locator('form.approval').textContent(), patience)
        .toContain('1 of 2 approvals (finance-lead).');
      await cfo.getByRole('button', { name: 'Approve' }).click();
      await cfo.locator('[data-event-type="run_completed"]').waitFor(patience);
      expect(await cfo.locator('[data-event-type="tool_approved"]').textContent()).toContain(
        'approved by finance-lead and cfo',
      );
    } finally {
      await Promise.all(contexts.map((context) => context.close()));
    }
    expect(ledger.transfers).toHaveLength(1);
    await client.result(runId);
    expect((await client.getRun(runId)).pendingApprovals).toEqual([]);
  });

  it('keeps the reason an approver is typing, and where, when another approval draws the form again', async () => {
    const { client } = worker;
    const transfersBefore = ledger.transfers.length;
    const { runId } = await client.startRun({ tenantId, model: 'scripted:test', prompt: 'pay B' });
    await waitForRun(client, runId, (run) => run.status === 'awaiting_approval');
    const context = await browser.newContext();
    try {
      const cfo = await openRun(context, keys.cfo, runId);
      const reason = cfo.getByLabel('Reason (required to reject)');
      await reason.fill('Not this vendor');
      await client.approve(runId, 'call_1_0', { approver: 'finance-lead', tenantId });
      await expect
        .poll(() => cfo.locator('form.approval').textContent(), patience)
        .toContain('1 of 2 approvals (finance-lead).');
      expect(await reason.inputValue()).toBe('Not this vendor');
      expect(await cfo.evaluate('document.activeElement?.getAttribute("aria-describedby")')).toBe(
        await reason.getAttribute('aria-describedby'),
      );
      await cfo.getByRole('button', { name: 'Reject' }).click();
      await expect
        .poll(
          async () => (await client.events(runId, { tenantId })).find((event) => event.type === 'tool_rejected'),
          patience,
        )
        .toMatchObject({ approver: 'cfo', reason: 'Not this vendor' });
    } finally {
      await context.close();
    }
    expect(ledger.transfers).toHaveLength(transfersBefore);
  });
});
