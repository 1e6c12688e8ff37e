import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';
import type { Browser } from 'playwright-core';

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
