import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdir, mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, inject, it } from 'vitest';
import type { RunSnapshot } from '../../src/shared/run-types.js';
import { launchChromium, signInToInboxPage } from '../helpers/chromium.js';
import { startTcpProxy } from '../helpers/tcp-proxy.js';

// The web inbox in real Chromium (Debian's `chromium`, driven by playwright-core) against the stack `npm start`
// runs: `relay-e dev` with its demo worker and API, here on the test harness's Temporal and free ports.

const root = fileURLToPath(new URL('../..', import.meta.url));
const screenshots = path.join(root, 'docs/images');
/** How long a page may take to show what the run did, on a loaded machine. */
const patience = { timeout: 15_000 };
const keys = { acme: 'key-acme-e2e-0123456789', globex: 'key-globex-e2e-0123456789' } as const;

let dev: DevStack;
let browser: Browser;
let workdir: string;
/** The runs this test started, and what its signed-in pages posted and logged, for the report of a failed test. */
let watched: { runIds: string[]; pageLog: string[] } = { runIds: [], pageLog: [] };

beforeAll(async () => {
  workdir = await mkdtemp(path.join(tmpdir(), 'relay-e-inbox-'));
  dev = await startDev(workdir);
  browser = await launchChromium();
});

beforeEach(({ onTestFailed }) => {
  watched = { runIds: [], pageLog: [] };
  onTestFailed(async () => console.error(await failureReport()));
});

afterEach(() => {
  const crash = dev?.crash();
  if (crash !== undefined) throw new Error(`relay-e dev ended during this test:\n${crash}`);
});

afterAll(async () => {
  await browser?.close();
  await dev?.stop();
  if (workdir) await rm(workdir, { recursive: true, force: true });
});

interface DevStack {
  url: string;
  stop: () => Promise<void>;
  /** What the stack printed to stderr if it ended before `stop`, so a crash fails the test that saw it. */
  crash: () => string | undefined;
  /** What the stack has printed to stderr so far. */
  stderr: () => string;
}

/** Starts `relay-e dev --json` with two tenants' keys and resolves with the API's URL once it is ready. */
async function startDev(cwd: string): Promise<DevStack> {
  const child = spawn(
    process.execPath,
    ['--import', path.join(root, 'node_modules/tsx/dist/loader.mjs'), path.join(root, 'src/cli/main.ts')].concat([
      'dev',
      '--json',
      '--port',
      '0',
    ]),
    {
      cwd,
      env: {
        ...process.env,
        TEMPORAL_ADDRESS: inject('temporalAddress'),
        RELAY_E_TASK_QUEUE: `inbox-${randomUUID()}`,
        RELAY_E_API_KEYS: `${keys.acme}:acme:alice,${keys.globex}:globex:bob`,
        // The worker's own log too, for the report of a failed test.
        RELAY_E_LOG_LEVEL: 'debug',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => (stderr += chunk));
  let stopping = false;
  let crashed = false;
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      crashed = !stopping;
      resolve();
    }),
  );
  for await (const line of createInterface({ input: child.stdout })) {
    const ready = JSON.parse(line) as { status?: string; apiUrl?: string };
    if (ready.status === 'ready' && ready.apiUrl) {
      return {
        url: ready.apiUrl,
        stop: async () => {
          stopping = true;
          child.kill('SIGINT');
          await exited;
        },
        crash: () => (crashed ? stderr : undefined),
        stderr: () => stderr,
      };
    }
  }
  throw new Error(`relay-e dev ended before it was ready:\n${stderr}`);
}

async function api(key: string, method: string, route: string, body?: unknown): Promise<Response> {
  return fetch(`${dev.url}${route}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
}

async function startRun(key: string, prompt: string): Promise<string> {
  const response = await api(key, 'POST', '/v1/runs', { model: 'scripted:demo', prompt });
  expect(response.status).toBe(201);
  const { runId } = (await response.json()) as { runId: string };
  watched.runIds.push(runId);
  return runId;
}

/**
 * What a failed test leaves to go on: each of its runs as the API reads it, what its pages posted and logged (they
 * are closed by now), and the end of what the stack printed (its worker and API log there).
 */
async function failureReport(): Promise<string> {
  const runs = await Promise.all(
    watched.runIds.map(async (runId) => {
      const response = await api(keys.acme, 'GET', `/v1/runs/${runId}`).catch((error: unknown) => String(error));
      return typeof response === 'string' ? `${runId}: ${response}` : `${runId}: ${await response.text()}`;
    }),
  );
  const log = dev.stderr().split('\n').slice(-200).join('\n');
  return [`Runs:`, ...runs, `Pages:`, ...watched.pageLog, `relay-e dev's stderr (its end):`, log].join('\n');
}

/**
 * Waits until a run page's live stream has answered: its timeline shows the call waiting, which only the stream draws
 * (the Approve button comes from the page's own read of the run). A connection dropped while its stream still waits
 * for its answer is no dropped stream to the page: Chromium sends the request again by itself, on a new connection
 * the page's route never sees.
 */
async function streamIsOpen(page: Page): Promise<void> {
  await page.locator('[data-event-type="tool_awaiting_approval"]').waitFor(patience);
}

async function snapshotOf(key: string, runId: string): Promise<RunSnapshot> {
  return (await (await api(key, 'GET', `/v1/runs/${runId}`)).json()) as RunSnapshot;
}

async function waitForStatus(key: string, runId: string, status: RunSnapshot['status']): Promise<RunSnapshot> {
  await expect.poll(async () => (await snapshotOf(key, runId)).status, { timeout: 20_000 }).toBe(status);
  return snapshotOf(key, runId);
}

/** The runs `GET /v1/approvals` lists for the key's tenant. */
async function approvalRunIds(key: string): Promise<string[]> {
  const listed = (await (await api(key, 'GET', '/v1/approvals')).json()) as { approvals: Array<{ runId: string }> };
  return listed.approvals.map((approval) => approval.runId);
}

/** Starts a demo transfer for tenant acme and waits until it asks for approval. */
async function awaitingTransfer(prompt: string): Promise<string> {
  const runId = await startRun(keys.acme, prompt);
  await waitForStatus(keys.acme, runId, 'awaiting_approval');
  return runId;
}

/** The demo bank's balance of an account, asked of the demo model like a user would. */
async function balanceOf(account: string): Promise<number> {
  const runId = await startRun(keys.acme, `balance of ${account}`);
  const { output = '' } = await waitForStatus(keys.acme, runId, 'completed');
  return Number(/has \$([\d,]+\.\d{2})/.exec(output)?.[1]?.replace(/,/g, ''));
}

async function signIn(context: BrowserContext, key: string, url = dev.url): Promise<Page> {
  const page = await signInToInboxPage(context, key, url);
  const log = watched.pageLog;
  page.on('console', (message) => {
    if (message.type() === 'error' || message.type() === 'warning') log.push(`console ${message.text()}`);
  });
  page.on('response', async (response) => {
    if (response.request().method() !== 'POST') return;
    const body = await response.text().catch((error: unknown) => `(body unread: ${String(error)})`);
    log.push(`POST ${response.url()} -> ${response.status()} ${body}`);
  });
  return page;
}

/** Refreshes the docs' screenshots when RELAY_E_UPDATE_SCREENSHOTS=1, so a plain test run leaves the tree clean. */
async function screenshot(page: Page, name: string): Promise<void> {
  if (process.env['RELAY_E_UPDATE_SCREENSHOTS'] !== '1') return;
  await mkdir(screenshots, { recursive: true });
  await page.screenshot({ path: path.join(screenshots, name), fullPage: true });
}

describe('the approvals inbox in Chromium', () => {
  it("shows the worker's own log at the level RELAY_E_LOG_LEVEL names, as well as its warnings", async () => {
    const runId = await startRun(keys.acme, 'balance of ACC-1');
    await waitForStatus(keys.acme, runId, 'completed');
    expect(dev.stderr()).toMatch(/\[INFO\] Worker state changed/);
    expect(dev.stderr()).toMatch(/\[DEBUG\] Activity completed .*activityType=callModel/);
  });

  it('refuses a wrong API key and signs in with a right one through an HttpOnly, SameSite=Strict cookie', async () => {
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(dev.url);
      await page.getByLabel('API key').fill('not-a-key');
      const refused = page.waitForResponse((response) => response.url().endsWith('/inbox/session'));
      await page.getByRole('button', { name: 'Sign in' }).click();
      expect((await refused).status()).toBe(401);
      await expect.poll(() => page.getByRole('alert').textContent(), patience).toBe('That API key is not valid.');
      expect(await context.cookies()).toEqual([]);

      const signedIn = await signIn(context, keys.acme);
      const [cookie] = await context.cookies();
      expect(cookie).toMatchObject({ name: 'relay_e_inbox', httpOnly: true, sameSite: 'Strict' });
      expect(await signedIn.content()).not.toContain(keys.acme);
      expect(await signedIn.evaluate('document.cookie')).toBe('');
    } finally {
      await context.close();
    }
  });

  it('approves an edited transfer after showing a schema error at its path, and the run completes', async () => {
    const before = await balanceOf('ACC-2');
    const runId = await awaitingTransfer('transfer 50 from ACC-1 to ACC-2');
    const context = await browser.newContext({ viewport: { width: 1100, height: 800 } });
    try {
      const page = await signIn(context, keys.acme);
      const link = page.getByRole('link', { name: `transfer_funds in run ${runId}` });
      await link.waitFor();
      await screenshot(page, 'inbox-pending.png');
      await link.click();

      const editor = page.getByLabel('Input (JSON; edit it to approve different arguments)');
      await expect
        .poll(async (): Promise<unknown> => JSON.parse(await editor.inputValue()), patience)
        .toEqual({
          from_account: 'ACC-1',
          to_account: 'ACC-2',
          amount_usd: 50,
        });
      await editor.fill(JSON.stringify({ from_account: 'ACC-1', to_account: 'ACC-2', amount_usd: -40 }, null, 2));
      const issue = page.locator('.issues li').first();
      await expect.poll(() => issue.textContent(), patience).toMatch(/^amount_usd: /);
      expect(await page.getByRole('button', { name: 'Approve' }).isDisabled()).toBe(true);
      await screenshot(page, 'inbox-edit-error.png');

      await editor.fill(JSON.stringify({ from_account: 'ACC-1', to_account: 'ACC-2', amount_usd: 40 }, null, 2));
      await expect.poll(() => page.locator('.issues li').count(), patience).toBe(0);
      await page.getByRole('button', { name: 'Approve' }).click();
      await page.locator('[data-event-type="run_completed"]').waitFor();
      expect(await page.locator('[data-event-type="tool_approved"]').textContent()).toContain(
        'approved by alice with an edited input',
      );
      await screenshot(page, 'inbox-run-completed.png');
    } finally {
      await context.close();
    }
    expect((await snapshotOf(keys.acme, runId)).output).toContain('Transferred $40.00 from ACC-1 to ACC-2');
    expect(await balanceOf('ACC-2')).toBeCloseTo(before + 40, 2);
  });

  it("rejects a transfer with a reason and shows the model's reply", async () => {
    const runId = await awaitingTransfer('transfer 75 from ACC-1 to ACC-3');
    const context = await browser.newContext();
    try {
      const page = await signIn(context, keys.acme);
      await page.goto(`${dev.url}/inbox/runs/${runId}`);
      await page.getByRole('button', { name: 'Reject' }).click();
      expect(await page.getByRole('status').filter({ hasText: 'Give a reason' }).count()).toBe(1);
      // The field counts what the run keeps rather than cutting a longer reason short (the server refuses one too).
      expect(await page.locator('form.approval .count').textContent()).toBe('0 of 1,000 characters.');
      await page.getByLabel('Reason (required to reject)').fill('Not before the audit');
      await page.getByRole('button', { name: 'Reject' }).click();
      const rejected = page.locator('[data-event-type="tool_rejected"]');
      await rejected.waitFor();
      expect(await rejected.textContent()).toContain('Reason: Not before the audit');
      const reply = page.locator('[data-event-type="run_completed"] .model-text');
      await reply.waitFor();
      expect(await reply.textContent()).toContain('The transfer_funds call was rejected, so nothing was done');
    } finally {
      await context.close();
    }
  });

  it('never approves on Enter in the reason field: it says to press Approve or Reject', async () => {
    const runId = await awaitingTransfer('transfer 60 from ACC-1 to ACC-3');
    const context = await browser.newContext();
    try {
      const page = await signIn(context, keys.acme);
      await page.goto(`${dev.url}/inbox/runs/${runId}`);
      const reason = page.getByLabel('Reason (required to reject)');
      await reason.fill('Too large: do NOT pay this');
      await reason.press('Enter');
      // Whatever Enter did shows in the decision's status or the form's result.
      const said = page.locator('#decision-status, form.approval .result');
      await expect.poll(async () => (await said.allTextContents()).join('').trim(), patience).not.toBe('');
      expect((await said.allTextContents()).join('').trim()).toBe('Enter does not decide: press Approve or Reject.');
      expect((await snapshotOf(keys.acme, runId)).status).toBe('awaiting_approval');
      await page.getByRole('button', { name: 'Reject' }).click();
      await page.locator('[data-event-type="tool_rejected"]').waitFor(patience);
    } finally {
      await context.close();
    }
    expect((await snapshotOf(keys.acme, runId)).pendingApprovals).toEqual([]);
  });

  it('goes back to the sign-in form when a live stream reconnects after the session ended elsewhere', async () => {
    const runId = await awaitingTransfer('transfer 7 from ACC-1 to ACC-3');
    const proxy = await startTcpProxy(dev.url);
    const context = await browser.newContext();
    try {
      const list = await signIn(context, keys.acme, proxy.url);
      await list.getByRole('link', { name: `transfer_funds in run ${runId}` }).waitFor(patience);
      const run = await context.newPage();
      await run.goto(`${proxy.url}/inbox/runs/${runId}`);
      await run.getByRole('button', { name: 'Approve' }).waitFor(patience);
      await streamIsOpen(run);
      // Signed out in another tab, then the connections drop: each stream's reconnect is refused with 401.
      await context.clearCookies();
      proxy.drop();
      await list.getByLabel('API key').waitFor(patience);
      await run.getByLabel('API key').waitFor(patience);
    } finally {
      await context.close();
      await proxy.close();
    }
    await api(keys.acme, 'POST', `/v1/runs/${runId}/cancel`);
  });

  it('ends the live streams of every tab once one tab signs out, without waiting for a reconnect', async () => {
    const runId = await awaitingTransfer('transfer 9 from ACC-1 to ACC-3');
    const context = await browser.newContext();
    try {
      const list = await signIn(context, keys.acme);
      await list.getByRole('link', { name: `transfer_funds in run ${runId}` }).waitFor(patience);
      const run = await context.newPage();
      await run.goto(`${dev.url}/inbox/runs/${runId}`);
      await run.getByRole('button', { name: 'Approve' }).waitFor(patience);
      await streamIsOpen(run);
      await list.getByRole('button', { name: 'Sign out' }).click();
      await list.getByLabel('API key').waitFor(patience);
      // The run page's stream stays connected, so no reconnect is refused: only the signing-out tab's word ends it.
      await run.getByLabel('API key').waitFor(patience);
      expect(new URL(run.url()).searchParams.get('next')).toBe(`/inbox/runs/${runId}`);
    } finally {
      await context.close();
    }
    await api(keys.acme, 'POST', `/v1/runs/${runId}/cancel`);
  });

  it('says a run page is not live while its stream is refused, and follows the run again once it is not', async () => {
    const runId = await awaitingTransfer('transfer 8 from ACC-1 to ACC-3');
    const proxy = await startTcpProxy(dev.url);
    const context = await browser.newContext();
    try {
      const page = await signIn(context, keys.acme, proxy.url);
      await page.goto(`${proxy.url}/inbox/runs/${runId}`);
      await page.getByRole('button', { name: 'Approve' }).waitFor(patience);
      await streamIsOpen(page);
      // As when the API cannot reach Temporal: its reconnects answer 503, the session is still good.
      const events = `**/inbox/runs/${runId}/events`;
      await page.route(events, (route) => route.fulfill({ status: 503, body: 'temporal unavailable' }));
      proxy.drop();
      const live = page.locator('#run-live');
      await expect.poll(() => live.textContent(), patience).toMatch(/^Not live/);
      await page.unroute(events);
      await expect.poll(() => live.textContent(), patience).toBe('');
      // Followed again: a decision made elsewhere shows.
      await api(keys.acme, 'POST', `/v1/runs/${runId}/reject`, { toolCallId: 'call_1_0', reason: 'From elsewhere' });
      await page.locator('[data-event-type="tool_rejected"]').waitFor(patience);
      expect(await page.locator('[data-event-type="run_started"]').count()).toBe(1);
    } finally {
      await context.close();
      await proxy.close();
    }
  });

  it("shows a second tenant none of the first tenant's runs", async () => {
    const runId = await awaitingTransfer('transfer 5 from ACC-1 to ACC-2');
    // Listed for its own tenant first, so an empty list below is the tenant filter's doing, not visibility's lag.
    await expect.poll(() => approvalRunIds(keys.acme), patience).toContain(runId);
    const context = await browser.newContext();
    try {
      const page = await signIn(context, keys.globex);
      await expect
        .poll(() => page.locator('#approvals-status').textContent(), patience)
        .toBe('Nothing waits for a decision.');
      expect(await page.content()).not.toContain(runId);
      await page.goto(`${dev.url}/inbox/runs/${runId}`);
      await expect.poll(() => page.locator('#run-summary').textContent(), patience).toBe(`Run '${runId}' not found`);
      // The page's own script could send this; the run still answers as if it did not exist.
      const decided = await page.evaluate(`(async () => {
        const csrf = document.querySelector('meta[name="relay-csrf"]').getAttribute('content');
        const response = await fetch('/inbox/runs/${runId}/approve', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-relay-csrf': csrf },
          body: JSON.stringify({ toolCallId: 'call_1_0' }),
        });
        return response.status;
      })()`);
      expect(decided).toBe(404);
    } finally {
      await context.close();
    }
    expect((await snapshotOf(keys.acme, runId)).status).toBe('awaiting_approval');
    await api(keys.acme, 'POST', `/v1/runs/${runId}/cancel`);
  });

  it('approves with the keyboard alone, from sign-in to the decision', async () => {
    const runId = await awaitingTransfer('transfer 3 from ACC-3 to ACC-1');
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(dev.url);
      // The key field takes focus on its own (autofocus); a keyboard user starts typing once it has.
      await expect.poll(() => page.evaluate('document.activeElement?.id'), patience).toBe('api-key');
      await page.keyboard.type(keys.acme);
      await page.keyboard.press('Enter');
      await page.getByRole('link', { name: `transfer_funds in run ${runId}` }).waitFor();
      await tabTo(page, (active) => active.tag === 'A' && active.text.includes(runId));
      await page.keyboard.press('Enter');
      await page.getByRole('button', { name: 'Approve' }).waitFor();
      await tabTo(page, (active) => active.tag === 'TEXTAREA');
      expect(await page.evaluate('document.activeElement.id')).toBe(
        await page.getByLabel('Input (JSON; edit it to approve different arguments)').getAttribute('id'),
      );
      await tabTo(page, (active) => active.tag === 'BUTTON' && active.text === 'Approve');
      await page.keyboard.press('Enter');
      await expect.poll(() => page.evaluate('document.activeElement.textContent'), patience).toBe('Approved.');
    } finally {
      await context.close();
    }
    expect((await waitForStatus(keys.acme, runId, 'completed')).output).toContain('Transferred $3.00');
  });
});

/** Presses Tab until the focused element matches, as a keyboard user would; fails after 40 presses. */
async function tabTo(page: Page, matches: (active: { tag: string; text: string }) => boolean): Promise<void> {
  for (let presses = 0; presses < 40; presses += 1) {
    await page.keyboard.press('Tab');
    const active = await page.evaluate<{ tag: string; text: string }>(
      "({ tag: document.activeElement?.tagName ?? '', text: document.activeElement?.textContent?.trim() ?? '' })",
    );
    if (matches(active)) return;
  }
  throw new Error('Tabbing never reached the element');
}
