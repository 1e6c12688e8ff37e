import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser, BrowserContext, Page } from 'playwright-core';

/** Where Debian's Chromium is, unless CHROMIUM_PATH says otherwise (browser downloads do not work here). */
export const chromiumPath = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';

/** Launches headless Chromium through playwright-core, or fails saying how to install it. */
export async function launchChromium(): Promise<Browser> {
  if (!existsSync(chromiumPath)) {
    throw new Error(
      `No Chromium at ${chromiumPath}: run \`. scripts/env.sh && relay_e_ensure_chromium\` (or set CHROMIUM_PATH)`,
    );
  }
  return chromium.launch({ executablePath: chromiumPath, args: ['--no-sandbox'] });
}

/** Signs `key` in to the inbox at `url` in a new page of `context`, and waits for the list of pending approvals. */
export async function signInToInboxPage(context: BrowserContext, key: string, url: string): Promise<Page> {
  const page = await context.newPage();
  await page.goto(url);
  await page.getByLabel('API key').fill(key);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.getByRole('heading', { name: 'Pending approvals' }).waitFor();
  return page;
}
