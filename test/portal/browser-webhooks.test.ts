// The key portal's Webhooks section in a real browser (Debian's Chromium driven by playwright-core,
// against the real service and a receiver in the test), by keyboard alone: "register an endpoint,
// see the secret once with a copy button, see deliveries with attempts, replay, rotate, delete";
// the copied secret verifies every delivery (the standardwebhooks library); no serious or
// critical axe-core violation on any view; the secret gone from the page once signed out; the page
// under its CSP throughout. Skipped without Chromium, as test/portal/browser.test.ts is.
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { listen, testApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { axeViolations, seriousOrCritical } from '../helpers/axe.js';
import { issueKey } from '../helpers/keys.js';
import { FAST_RETRIES, planEvent, planIdOf, startReceiver } from '../helpers/webhooks.js';

const SECRET = /^whsec_[A-Za-z0-9+/]{43}=$/;

const skip = chromiumSkip('the portal webhooks browser test');
let launched: Promise<Browser> | undefined;
t.teardown(async () => {
  await (await launched)?.close();
});

type Tap = Pick<typeof t, 'strictSame'>;

/** "no serious or critical axe-core violation" on the view as it is now. */
async function axeClean(t: Tap, page: Page, view: string): Promise<void> {
  t.strictSame(seriousOrCritical(await axeViolations(page)), [], `axe: no serious or critical violation (${view})`);
}

/** Presses Tab until the focused element matches `selector` (and says `text`, when given), as a keyboard user would. */
async function tabTo(page: Page, selector: string, text?: string): Promise<void> {
  for (let presses = 0; presses < 80; presses++) {
    await page.keyboard.press('Tab');
    const reached = await page.evaluate(([s, x]) => (document.activeElement?.matches(s!) ?? false) && (x === undefined || document.activeElement?.textContent === x), [selector, text] as const);
    if (reached) return;
  }
  throw new Error(`Tab never reached ${selector}${text === undefined ? '' : ` saying ${text}`}`);
}

const focusedText = (page: Page) => page.evaluate(() => document.activeElement?.textContent ?? '');

t.test('by keyboard alone: register an endpoint, copy its secret shown once, see a delivery retried then delivered with its attempts, replay it with the same webhook-id, rotate (both secrets verify), delete; signed out, no secret is left', skip, async (t) => {
  let failFirst = true;
  const receiver = await startReceiver(t, () => {
    if (!failFirst) return 200;
    failFirst = false;
    return 500;
  });
  const app = await testApp({ probed: false, env: { WEBHOOK_ALLOW_PRIVATE: 'true', ...FAST_RETRIES } });
  t.teardown(app.close);
  const service = await listen(app.server);
  const { key, record } = await issueKey(app.core.keyStore, { name: 'Webhook Wallet' });
  const context = await (await (launched ??= launchChromium())).newContext();
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const refused: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  await page.goto(`${service}/portal`);

  await tabTo(page, '#sign-in-key');
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await page.locator('#webhook-list li.empty').waitFor();
  await axeClean(t, page, 'no endpoint yet');

  await tabTo(page, '#webhook-url');
  await page.keyboard.type(receiver.url);
  await tabTo(page, '#webhook-form button[type=submit]');
  await page.keyboard.press('Enter');
  const shown = page.locator('[data-testid=webhook-secret]');
  await shown.waitFor();
  const secret = await shown.innerText();
  t.match(secret, SECRET, 'the secret is shown');
  t.ok((await page.locator('#webhook-secret').innerText()).includes('shown once and cannot be shown again'), 'with the warning that it is shown once');
  t.equal(await focusedText(page), 'Copy secret', 'the focus is on Copy secret');
  await page.keyboard.press('Space');
  await page.locator('#webhook-secret').getByText('Copied to the clipboard.').waitFor();
  t.equal(await page.evaluate(() => navigator.clipboard.readText()), secret, 'Copy puts the secret on the clipboard');
  t.ok((await page.locator('#webhook-list').innerText()).includes(receiver.url), 'the endpoint is listed');
  await axeClean(t, page, 'a new endpoint and its secret');

  const planId = planIdOf(21);
  await app.core.webhooks.sink.accept({ event: planEvent(planId, 1), partnerId: record.id });
  await receiver.until((r) => r.length === 2);
  await tabTo(page, '#webhook-list button', 'Deliveries');
  await page.keyboard.press('Enter');
  const table = page.locator('#deliveries table');
  for (;;) {
    await table.waitFor();
    if ((await table.innerText()).includes('delivered')) break;
    await tabTo(page, '#deliveries-refresh');
    await page.keyboard.press('Enter');
    await page.locator('#notice', { hasText: 'Deliveries refreshed.' }).waitFor();
  }
  const attempts = await page.locator('#deliveries .attempts li').allInnerTexts();
  t.equal(attempts.length, 2, 'both attempts listed');
  t.match(attempts[0], /UTC: HTTP 500, [0-9]+ ms$/);
  t.match(attempts[1], /UTC: HTTP 200 \(delivered\), [0-9]+ ms$/);
  t.ok((await table.innerText()).includes(`msg_${planId}_1`), 'the webhook-id is shown');
  await axeClean(t, page, 'deliveries with attempts');

  await tabTo(page, '#deliveries button', 'Replay');
  await page.keyboard.press('Enter');
  await page.locator('#notice', { hasText: 'queued again, with the same webhook-id' }).waitFor();
  await receiver.until((r) => r.length === 3);
  const replayed = receiver.received[2]!;
  t.equal(replayed.headers['webhook-id'], `msg_${planId}_1`, 'the replay carries the same webhook-id');
  t.ok(new Webhook(secret).verify(replayed.body, replayed.headers), 'signed with the copied secret');

  await tabTo(page, '#webhook-list button', 'Rotate secret…');
  await page.keyboard.press('Enter');
  t.ok(await page.evaluate(() => document.activeElement?.id === 'confirm-cancel'), 'the confirmation opens on Cancel');
  await axeClean(t, page, 'the rotation\'s confirmation');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.locator('#webhook-secret h4', { hasText: 'New signing secret' }).waitFor();
  const rotated = await shown.innerText();
  t.ok(SECRET.test(rotated) && rotated !== secret, 'a new secret is shown, once');
  t.ok((await page.locator('#webhook-list').innerText()).includes('The secret it replaced still signs'), 'the grace period is said');
  await app.core.webhooks.sink.accept({ event: planEvent(planId, 2, 'completed'), partnerId: record.id });
  await receiver.until((r) => r.length === 4);
  for (const s of [secret, rotated]) t.ok(new Webhook(s).verify(receiver.received[3]!.body, receiver.received[3]!.headers), 'both secrets verify during the grace period');
  await axeClean(t, page, 'a rotated secret');

  await tabTo(page, '#webhook-list button', 'Delete…');
  await page.keyboard.press('Enter');
  await page.keyboard.press('Tab');
  await page.keyboard.press('Enter');
  await page.locator('#webhook-list li.empty').waitFor();
  t.ok(await page.evaluate(() => document.activeElement?.id === 'webhooks-title'), 'the focus goes back to the Webhooks heading');
  t.equal(await page.locator('[data-testid=webhook-secret]').count(), 0, 'the deleted endpoint\'s secret is gone');
  t.ok(await page.locator('#deliveries').isHidden(), 'and its deliveries');

  await page.getByRole('button', { name: 'Sign out' }).click();
  const html = await page.evaluate(() => document.documentElement.outerHTML);
  t.notOk(html.includes(secret.slice(6)) || html.includes(rotated.slice(6)), 'signed out, no secret is on the page');
  t.strictSame(refused, [], 'the page ran under its CSP without a refusal');
});
