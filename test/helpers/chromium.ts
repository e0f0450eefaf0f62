// Debian's Chromium for the browser tests, driven by playwright-core (nothing downloads a
// browser): where it is, whether a run may go without it, and one way to launch it.
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/**
 * Tap options for the browser tests of `what`: none when Chromium is there; without it, a skip
 * with the reason (the summary counts them skipped, never passed) and a loud notice, unless
 * REQUIRE_CHROMIUM=1 (CI installs it) makes that a failure.
 */
export function chromiumSkip(what: string): { skip?: string } {
  if (existsSync(CHROMIUM)) return {};
  if (process.env.REQUIRE_CHROMIUM === '1') throw new Error(`REQUIRE_CHROMIUM=1 but there is no Chromium at ${CHROMIUM}: install Debian's chromium`);
  console.error(`\n*** SKIPPING ${what}: no Chromium at ${CHROMIUM} (apt-get install chromium, or set CHROMIUM_PATH) ***\n`);
  return { skip: `no Chromium at ${CHROMIUM} (CI sets REQUIRE_CHROMIUM=1 so these always run there)` };
}

/** Headless, with its background networking off: on this closed network Chromium's own connections are refused, many at a time. */
export const launchChromium = (): Promise<Browser> =>
  chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  });
