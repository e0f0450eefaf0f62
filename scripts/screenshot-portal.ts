// Takes the README's screenshot of the key portal's usage view (docs/portal-usage.png), from the
// real service and page in Debian's Chromium: a key from the portal bound to one origin, keyed
// quotes past the key's window (so some are refused 429 under keyed-window), then a sign-in.
//
//   npm run screenshot:portal        (make build first; never run by make test)
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { chromium } from 'playwright-core';
import { loadConfig } from '../core/config.js';
import { buildApp, repoRoot } from '../handlers/app.js';

const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';
const OUT = path.join(repoRoot(), 'docs', 'portal-usage.png');
const KEYED_PER_MINUTE = 40;
const QUOTES = 49;

const config = loadConfig({
  LOG_LEVEL: 'silent',
  HOST: '127.0.0.1',
  PORT: '0',
  DATA_DIR: mkdtempSync(path.join(tmpdir(), 'bestex-portal-screenshot-')),
  RATE_LIMIT_KEYED_PER_MINUTE: String(KEYED_PER_MINUTE),
  PORTAL_ENABLED: 'true',
});
const app = await buildApp({ config });
const service = (await app.server.listen({ host: '127.0.0.1', port: 0 })).replace('localhost', '127.0.0.1');
const browser = await chromium.launch({ executablePath: CHROMIUM, args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'] });
try {
  const issued = (await (await fetch(`${service}/portal/api/keys`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ name: 'Example Wallet', origins: ['https://wallet.example'] }) })).json()) as { key: string };
  for (let q = 0; q < QUOTES; q++) {
    await fetch(`${service}/api/quote?from=CC&to=USDCx&amount=${100 + q}`, { headers: { 'x-api-key': issued.key, origin: 'https://wallet.example' } });
  }
  // Counts reach the portal within a few seconds (the usage counter's flush).
  const deadline = Date.now() + 30_000;
  for (;;) {
    const view = (await (await fetch(`${service}/portal/api/key`, { headers: { 'x-api-key': issued.key } })).json()) as { usage: { days: Array<{ requests: Record<string, number> }> } };
    const counted = view.usage.days.reduce((sum, day) => sum + Object.values(day.requests).reduce((a, b) => a + b, 0), 0);
    if (counted === QUOTES) break;
    if (Date.now() > deadline) throw new Error(`the portal counts ${counted} of the ${QUOTES} quotes sent`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  const page = await browser.newPage({ viewport: { width: 1000, height: 900 }, deviceScaleFactor: 1 });
  await page.goto(`${service}/portal`);
  await page.getByLabel('Paste your key').fill(issued.key);
  await page.getByRole('button', { name: 'Sign in', exact: true }).click();
  await page.locator('#usage table').waitFor();
  await page.locator('#account').screenshot({ path: OUT });
  console.log(`wrote ${path.relative(repoRoot(), OUT)}: ${QUOTES} keyed quotes, ${QUOTES - KEYED_PER_MINUTE} of them over the window`);
} finally {
  await browser.close();
  await app.server.close();
}
