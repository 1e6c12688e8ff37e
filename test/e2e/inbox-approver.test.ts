import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { ApiKeyTenant } from '../../src/http/api-keys.js';
import { startApiServer } from '../../src/http/start-api-server.js';
import type { ApiServer } from '../../src/http/start-api-server.js';
import type { ModelCall } from '../../src/model/model-provider.js';
import { scriptedModel } from '../../src/testing/scripted-model.js';
import type { ScriptedTurn } from '../../src/testing/scripted-model.js';
import { defineTool } from '../../src/tool/define-tool.js';
import { launchChromium, signInToInboxPage } from '../helpers/chromium.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';
import { useRelayTestKit, waitForRun } from '../helpers/relay-test-kit.js';
import type { RunningWorker } from '../helpers/relay-test-kit.js';
import { uniqueTaskQueue } from '../helpers/temporal-test-env.js';
import { createLedger, createTestTools } from '../helpers/test-tools.js';
import { promptOf } from '../http/http-test-kit.js';

// The web inbox in real Chromium as an approver meets it: the network drops, someone else decides first, the session
// ends, a reason runs long, a link names no run, a cancel is pressed by mistake.

const tenantId = 'inbox-approver';
const keys = { alice: 'key-approver-alice', opsBot: 'key-approver-ops-bot', cfo: 'key-approver-cfo' };
const apiKeys = new Map<string, ApiKeyTenant>([
  [keys.alice, { tenantId, name: 'alice' }],
  [keys.opsBot, { tenantId, name: 'ops-bot' }],
  [keys.cfo, { tenantId, name: 'cfo' }],
]);
const patience = { timeout: 15_000 };
const transfer = { from: 'A', to: 'B', amount: 100 };
const ledger = createLedger();
const kit = useRelayTestKit();
let worker: RunningWorker;
let api: ApiServer;
let browser: Browser;

/** `pay` proposes a transfer, `pay twice` two in one step, `close` a call only the cfo may decide. */
function approverModel(call: ModelCall): ScriptedTurn {
  const prompt = promptOf(call);
  if (call.step > 1) return { text: 'done' };
  if (prompt === 'pay twice') {
    return {
      toolCalls: [
        { id: 'one', name: 'transfer_funds', input: transfer },
        { id: 'two', name: 'transfer_funds', input: { ...transfer, amount: 5 } },
      ],
    };
  }
  if (prompt.startsWith('pay')) return { toolCalls: [{ id: 'pay', name: 'transfer_funds', input: transfer }] };
  if (prompt === 'close') return { toolCalls: [{ id: 'close', name: 'close_account', input: { account: 'A' } }] };
  return { text: 'done' };
}

beforeAll(async () => {
  const closeAccount = defineTool({
    name: 'close_account',
    description: 'Close an account for good.',
    inputSchema: z.object({ account: z.string() }),
    requiresApproval: true,
    approvers: ['cfo'],
    execute: async ({ account }) => ({ closed: account }),
  });
  worker = await kit.startWorker({
    tools: [...createTestTools(ledger), closeAccount],
    models: { scripted: scriptedModel(approverModel) },
  });
  api = await startApiServer({ client: worker.client, apiKeys });
  browser = await launchChromium();
});

afterAll(async () => {
  await browser?.close();
  await api?.close();
  await worker?.stop();
});

/**
 * Starts a run and waits until its `calls` calls ask for approval (each is checked apart, so a run already waits on its
 * first while the next is still being checked).
 */
async function waitingRun(prompt: string, calls = 1): Promise<string> {
  const { runId } = await worker.client.startRun({ tenantId, model: 'scripted:test', prompt, approvalTimeout: '1h' });
  await waitForRun(
    worker.client,
    runId,
    (run) => run.status === 'awaiting_approval' && run.pendingApprovals.length === calls,
  );
  return runId;
}

function signIn(context: BrowserContext, key: string, url = api.url): Promise<Page> {
  return signInToInboxPage(context, key, url);
}

async function openRun(context: BrowserContext, runId: string, key = keys.alice, url = api.url): Promise<Page> {
  const page = await signIn(context, key, url);
  await page.goto(`${url}/inbox/runs/${runId}`);
  await page.getByRole('button', { name: 'Approve' }).first().waitFor(patience);
  return page;
}

/** Runs `test` with a fresh browser context, closed after it whatever happens. */
async function inContext(test: (context: BrowserContext) => Promise<void>): Promise<void> {
  const context = await browser.newContext();
  try {
    await test(context);
  } finally {
    await context.close();
  }
}

describe('the inbox when the network or the session fails an approver', () => {
  it('says a decision was not sent while the inbox is unreachable, shows the page not live, and decides once back', async () => {
    const runId = await waitingRun('pay while offline');
    const proxy = await startTcpProxy(api.url);
    try {
      await inContext(async (context) => {
        const page = await openRun(context, runId, keys.alice, proxy.url);
        proxy.refuse();
        const live = page.locator('#run-live');
        await expect.poll(() => live.textContent(), patience).toMatch(/^Not live/);
        const approve = page.getByRole('button', { name: 'Approve' });
        await approve.click();
        const result = page.locator('form.approval .result');
        await expect
          .poll(() => result.textContent(), patience)
          .toBe('Not sent: the inbox could not be reached. Check the connection and try again.');
        expect(await page.locator('.issues li').count()).toBe(0);
        expect(await approve.isEnabled()).toBe(true);
        expect(await page.getByRole('button', { name: 'Reject' }).isEnabled()).toBe(true);

        proxy.accept();
        await expect.poll(() => live.textContent(), patience).toBe('');
        await approve.click();
        await expect.poll(() => page.locator('#decision-status').textContent(), patience).toBe('Approved.');
      });
    } finally {
      await proxy.close();
    }
    await waitForRun(worker.client, runId, (run) => run.status === 'completed');
  });

  it('offers to sign in again when the session ended, keeps what was typed, and sends it once signed in', async () => {
    const runId = await waitingRun('pay after sign-out');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      await page.getByLabel('Reason (required to reject)').fill('Wrong payee');
      await context.clearCookies();
      await page.getByRole('button', { name: 'Reject' }).click();
      const signInLink = page.locator('form.approval .result').getByRole('link', { name: 'Sign in again' });
      await signInLink.waitFor(patience);
      expect(await page.locator('header .who').textContent()).toBe('Signed out');
      expect(await page.locator('.issues li').count()).toBe(0);

      // The link signs in in a new tab and comes back to the run there; this tab keeps the reason typed.
      const href = (await signInLink.getAttribute('href')) ?? '';
      expect(href).toBe(`/?next=${encodeURIComponent(`/inbox/runs/${runId}`)}`);
      const other = await context.newPage();
      await other.goto(`${api.url}${href}`);
      await other.getByLabel('API key').fill(keys.alice);
      await other.getByRole('button', { name: 'Sign in' }).click();
      await other.waitForURL(`${api.url}/inbox/runs/${runId}`);
      expect(await page.getByLabel('Reason (required to reject)').inputValue()).toBe('Wrong payee');
      await page.getByRole('button', { name: 'Reject' }).click();
      await expect.poll(() => page.locator('#decision-status').textContent(), patience).toBe('Rejected.');
    });
    const events = await worker.client.events(runId, { tenantId });
    expect(events.find((event) => event.type === 'tool_rejected')).toMatchObject({ reason: 'Wrong payee' });
  });

  it('stays on a run page whose stream finds the session ended while a reason is typed, and follows on once signed in', async () => {
    const runId = await waitingRun('pay while the stream drops');
    const proxy = await startTcpProxy(api.url);
    try {
      await inContext(async (context) => {
        const page = await openRun(context, runId, keys.alice, proxy.url);
        await page.locator('[data-event-type="tool_awaiting_approval"]').waitFor(patience);
        const reason = page.getByLabel('Reason (required to reject)');
        await reason.fill('Wrong payee');
        // Signed out in another tab, then the connection drops: the stream's reconnect is refused with 401.
        await context.clearCookies();
        proxy.drop();
        const signInLink = page.locator('#run-summary').getByRole('link', { name: 'Sign in again' });
        await signInLink.waitFor(patience);
        expect(page.url()).toBe(`${proxy.url}/inbox/runs/${runId}`);
        expect(await page.locator('header .who').textContent()).toBe('Signed out');
        expect(await reason.inputValue()).toBe('Wrong payee');

        // Signed in again in a new tab, the page follows the run again by itself, and sends what was typed.
        const other = await context.newPage();
        await other.goto(`${proxy.url}${(await signInLink.getAttribute('href')) ?? ''}`);
        await other.getByLabel('API key').fill(keys.alice);
        await other.getByRole('button', { name: 'Sign in' }).click();
        await other.waitForURL(`${proxy.url}/inbox/runs/${runId}`);
        await expect.poll(() => page.locator('#run-live').textContent(), patience).toBe('');
        await expect.poll(() => page.locator('header .who').textContent(), patience).toMatch(/^Signed in as alice,/);
        await page.getByRole('button', { name: 'Reject' }).click();
        await expect.poll(() => page.locator('#decision-status').textContent(), patience).toBe('Rejected.');
      });
    } finally {
      await proxy.close();
    }
    const events = await worker.client.events(runId, { tenantId });
    expect(events.find((event) => event.type === 'tool_rejected')).toMatchObject({ reason: 'Wrong payee' });
  });

  it('stops following a run that does not exist instead of trying again forever', async () => {
    await inContext(async (context) => {
      const page = await signIn(context, keys.alice);
      let streams = 0;
      page.on('request', (request) => {
        if (request.url().endsWith('/inbox/runs/run_missing/events')) streams += 1;
      });
      await page.goto(`${api.url}/inbox/runs/run_missing`);
      await expect
        .poll(() => page.locator('#run-live').textContent(), patience)
        .toBe('Nothing to follow: no run of yours has this id.');
      expect(await page.locator('#run-summary').textContent()).toBe("Run 'run_missing' not found");
      expect(await page.getByRole('heading', { name: 'Timeline' }).isVisible()).toBe(false);
      expect(streams).toBeLessThanOrEqual(1);
    });
  });

  it('says why a run cannot answer while no worker serves it, and takes it back once one does', async () => {
    // A task queue of its own, so stopping its worker leaves the other tests' runs served.
    const taskQueue = uniqueTaskQueue('inbox-unserved');
    const serve = () =>
      kit.startWorker({
        taskQueue,
        tools: createTestTools(ledger),
        models: { scripted: scriptedModel(approverModel) },
      });
    let serving = await serve();
    const unservedApi = await startApiServer({ client: serving.client, apiKeys });
    try {
      const { runId } = await serving.client.startRun({
        tenantId,
        model: 'scripted:test',
        prompt: 'pay later',
        approvalTimeout: '1h',
      });
      await waitForRun(serving.client, runId, (run) => run.status === 'awaiting_approval');
      await inContext(async (context) => {
        const page = await openRun(context, runId, keys.alice, unservedApi.url);
        await serving.stop();
        const live = page.locator('#run-live');
        // As the API's event stream says it, once the run's query finds no worker.
        await expect
          .poll(() => live.textContent(), { timeout: 60_000 })
          .toMatch(new RegExp(`^The run cannot answer right now: .*task queue '${taskQueue}'`));
        serving = await serve();
        await expect.poll(() => live.textContent(), { timeout: 30_000 }).toBe('');
        await page.getByRole('button', { name: 'Approve' }).click();
        await expect.poll(() => page.locator('#decision-status').textContent(), patience).toBe('Approved.');
      });
      await waitForRun(serving.client, runId, (run) => run.status === 'completed');
    } finally {
      await unservedApi.close();
      await serving.stop();
    }
  }, 120_000);
});

describe('the inbox when a call is settled elsewhere', () => {
  it('shows who decided in place of the form, and says the edits typed here were not sent', async () => {
    const runId = await waitingRun('pay decided elsewhere');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      await page
        .getByLabel('Input (JSON; edit it to approve different arguments)')
        .fill(JSON.stringify({ ...transfer, amount: 90 }));
      await worker.client.reject(runId, 'call_1_0', { tenantId, approver: 'ops-bot', reason: 'Duplicate' });
      const outcome = page.locator('[data-tool-call-id="call_1_0"] .outcome');
      await expect
        .poll(() => outcome.textContent(), patience)
        .toMatch(/^Rejected by ops-bot at .+: “Duplicate”; your edits were not sent\.$/);
      expect(await page.getByText('No tool call waits.').isVisible()).toBe(true);
    });
  });

  it('says a decision the run refused as a status, not as an issue with the input', async () => {
    const runId = await waitingRun('pay refused');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      // Someone else approves while this page checks the input it is about to approve: nothing changed before the
      // press, so the form is surely there, and the run has decided the call by the time the check reads it.
      let decidedElsewhere: Promise<unknown> | undefined;
      await page.route(`**/inbox/runs/${runId}/check`, async (route) => {
        decidedElsewhere ??= worker.client.approve(runId, 'call_1_0', { tenantId, approver: 'ops-bot' });
        await decidedElsewhere;
        await route.continue();
      });
      await page.getByRole('button', { name: 'Approve' }).click();
      await expect
        .poll(() => page.locator('#decision-status').textContent(), patience)
        .toMatch(/^Your approval of transfer_funds \(call call_1_0\) was not taken: .*not awaiting approval/);
      expect(await page.locator('.issues li').count()).toBe(0);
      await expect
        .poll(() => page.locator('[data-tool-call-id="call_1_0"] .outcome').textContent(), patience)
        .toMatch(/^Approved by ops-bot at .+\.$/);
    });
  });

  it('asks before cancelling, and says in words which call the cancel ended', async () => {
    const runId = await waitingRun('pay then cancel');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      await page.getByRole('button', { name: 'Cancel this run' }).click();
      const really = page.getByRole('button', { name: 'Really cancel this run?' });
      await really.waitFor(patience);
      expect((await worker.client.getRun(runId, { tenantId })).status).toBe('awaiting_approval');
      await page.getByRole('button', { name: 'Keep it running' }).click();
      await page.getByRole('button', { name: 'Cancel this run' }).click();
      await really.click();
      const cancelled = page.locator('[data-event-type="tool_cancelled"]');
      await cancelled.waitFor(patience);
      expect(await cancelled.locator('.type').textContent()).toBe(
        'transfer_funds (call_1_0) cancelled while it waited for approval',
      );
      await expect
        .poll(() => page.locator('[data-tool-call-id="call_1_0"] .outcome').textContent(), patience)
        .toMatch(/^Run cancelled at .+\.$/);
    });
  });
});

describe('the decision form', () => {
  it('counts a long reason rather than cutting it, and refuses to send one over 1,000 characters', async () => {
    const runId = await waitingRun('pay with a long reason');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      const reason = page.getByLabel('Reason (required to reject)');
      await reason.fill('x'.repeat(1_001));
      expect((await reason.inputValue()).length).toBe(1_001);
      const count = page.locator('form.approval .count');
      expect(await count.textContent()).toMatch(/^1,001 of 1,000 characters: 1 too many\./);
      expect(await page.getByRole('button', { name: 'Reject' }).isDisabled()).toBe(true);
      await reason.fill('x'.repeat(1_000));
      expect(await page.getByRole('button', { name: 'Reject' }).isEnabled()).toBe(true);
    });
    await worker.client.cancel(runId, { tenantId });
  });

  it('sends one approval for a double click', async () => {
    const runId = await waitingRun('pay on a double click');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      let approvals = 0;
      page.on('request', (request) => {
        if (request.url().endsWith('/approve')) approvals += 1;
      });
      await page.getByRole('button', { name: 'Approve' }).dblclick();
      await page.locator('[data-event-type="run_completed"]').waitFor(patience);
      expect(approvals).toBe(1);
    });
  });

  it('names each call in its buttons, and shows what its tool does', async () => {
    const runId = await waitingRun('pay twice', 2);
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      for (const call of ['call_1_0', 'call_1_1']) {
        for (const decision of ['Approve', 'Reject']) {
          const name = `${decision} transfer_funds (call ${call})`;
          expect(await page.getByRole('button', { name, exact: true }).count()).toBe(1);
        }
      }
      expect(await page.locator('form.approval .description').allTextContents()).toEqual([
        'Move money between accounts.',
        'Move money between accounts.',
      ]);
    });
    await worker.client.cancel(runId, { tenantId });
  });

  it('offers no editing or reason on a call the signed-in approver may not decide', async () => {
    const runId = await waitingRun('close');
    await inContext(async (context) => {
      const page = await openRun(context, runId);
      const editor = page.getByLabel('Input (JSON; read-only)');
      expect(await editor.getAttribute('readonly')).toBe('');
      expect(await page.getByLabel('Reason (required to reject)').isDisabled()).toBe(true);
      expect(await page.locator('[data-barred]').textContent()).toBe(
        'You are signed in as alice: only cfo may decide it.',
      );
    });
    await worker.client.cancel(runId, { tenantId });
  });
});

describe('the list and the run summary', () => {
  it('keeps focus on a listed call while the list adds another, and shows expiry, approvers and the tool', async () => {
    const first = await waitingRun('close');
    await inContext(async (context) => {
      const page = await signIn(context, keys.alice);
      const link = page.getByRole('link', { name: `close_account in run ${first}` });
      await link.waitFor(patience);
      const row = page.locator('li', { has: link });
      expect(await row.locator('.description').textContent()).toBe('Close an account for good.');
      expect(await row.textContent()).toContain('Only cfo may decide it');
      const expiry = row.locator('time[data-relative]');
      expect(await expiry.textContent()).toMatch(/^in (60|59) min\.?$/);
      expect(await expiry.getAttribute('title')).toMatch(/\(.+\)$/);
      await link.focus();
      const second = await waitingRun('pay while the list is open');
      await page.getByRole('link', { name: `transfer_funds in run ${second}` }).waitFor(patience);
      expect(await page.evaluate('document.activeElement?.textContent')).toBe(`close_account in run ${first}`);
      await worker.client.cancel(second, { tenantId });
    });
    await worker.client.cancel(first, { tenantId });
  });

  it('does not show a completed run whose only call was rejected as a success', async () => {
    const runId = await waitingRun('pay to be rejected');
    await worker.client.reject(runId, 'call_1_0', { tenantId, approver: 'ops-bot', reason: 'No' });
    await waitForRun(worker.client, runId, (run) => run.status === 'completed');
    await inContext(async (context) => {
      const page = await signIn(context, keys.alice);
      await page.goto(`${api.url}/inbox/runs/${runId}`);
      const summary = page.locator('#run-summary');
      await expect.poll(() => summary.textContent(), patience).toContain('1 call rejected, not executed');
      expect(await summary.locator('.status-completed').count()).toBe(0);
    });
  });
});
