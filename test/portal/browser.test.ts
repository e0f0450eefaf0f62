// The key portal in a real browser (Debian's Chromium driven by playwright-core, headless, nothing
// downloaded), against the real service and its real portal operations: "a person creates a key,
// copies it, uses it for a keyed quote, signs in and sees that quote counted, rotates, and the old
// key stops working; by keyboard alone; no serious or critical axe-core violation". The page runs
// under its own CSP throughout (axe is evaluated through the DevTools protocol, which a page's CSP
// does not govern). Without Chromium the tests are skipped with a loud notice, unless
// REQUIRE_CHROMIUM=1 (CI installs it) makes that a failure.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { repoRoot } from '../../handlers/app.js';
import { listen, testApp, type TestApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { axeViolations, seriousOrCritical } from '../helpers/axe.js';

const SCREENSHOTS = path.join(repoRoot(), 'dist', 'screenshots');
const KEY = /^bx_[0-9A-Za-z]{38}$/;
/** How long a count or a rotation may take to show: "within a few seconds". */
const SETTLE_MS = 15_000;

run(chromiumSkip('the portal browser tests'));

type Tap = Pick<typeof t, 'teardown' | 'equal' | 'strictSame' | 'notOk' | 'ok'>;

function run(skip: { skip?: string }): void {
  // Launched by the first test that runs, so a skipped file launches nothing.
  let launched: Promise<Browser> | undefined;
  const browser = (): Promise<Browser> => (launched ??= launchChromium());
  t.teardown(async () => {
    await (await launched)?.close();
  });

  /** The service, and the portal open in a browser that may read and write its clipboard; every URL the page requests is kept. */
  async function setup(t: Tap, env: Record<string, string> = {}): Promise<{ app: TestApp; service: string; page: Page; requested: string[]; logged: string[] }> {
    const app = await testApp({ env });
    t.teardown(app.close);
    const service = await listen(app.server);
    mkdirSync(SCREENSHOTS, { recursive: true });
    const context = await (await browser()).newContext();
    await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: service });
    t.teardown(() => context.close());
    const page = await context.newPage();
    const requested: string[] = [];
    page.on('request', (request) => requested.push(request.url()));
    // A CSP refusal is logged as an error: none may happen.
    const logged: string[] = [];
    page.on('console', (message) => {
      if (message.type() === 'error') logged.push(message.text());
    });
    await page.goto(`${service}/portal`);
    return { app, service, page, requested, logged };
  }

  /** "no serious or critical axe-core violation" on the view as it is now. */
  async function axeClean(t: Tap, page: Page, view: string): Promise<void> {
    t.strictSame(seriousOrCritical(await axeViolations(page)), [], `axe: no serious or critical violation (${view})`);
  }

  /** "kept only in the page's memory, never in a cookie or storage, never in a URL". */
  async function keysNowhere(t: Tap, page: Page, requested: readonly string[], keys: readonly string[], when: string): Promise<void> {
    const kept = await page.evaluate(() => ({ local: JSON.stringify({ ...localStorage }), session: JSON.stringify({ ...sessionStorage }), cookie: document.cookie, url: location.href }));
    const cookies = JSON.stringify(await page.context().cookies());
    for (const key of keys) {
      t.notOk(kept.local.includes(key) || kept.session.includes(key), `${when}: the key is in no storage`);
      t.notOk(kept.cookie.includes(key) || cookies.includes(key), `${when}: the key is in no cookie`);
      t.notOk(kept.url.includes(key) || requested.some((url) => url.includes(key)), `${when}: the key is in no URL the page is at or asked for`);
    }
  }

  const cspRefusal = (message: string) => /Content Security Policy|Refused to/i.test(message);

  const quoteWith = (service: string, key: string, origin?: string) =>
    fetch(`${service}/api/quote?from=CC&to=USDCx&amount=100`, { headers: { 'x-api-key': key, ...(origin ? { origin } : {}) } }).then((r) => r.status);

  /** Polls until `check` holds or SETTLE_MS passes; false then. */
  async function settles(check: () => Promise<boolean>): Promise<boolean> {
    const deadline = Date.now() + SETTLE_MS;
    while (Date.now() < deadline) {
      if (await check()) return true;
      await new Promise((resolve) => setTimeout(resolve, 200));
    }
    return check();
  }

  /** The usage table as text: its header and today's (last) row. */
  async function usageToday(page: Page): Promise<{ head: string[]; today: string[]; rows: number }> {
    return page.evaluate(() => {
      const cells = (row: Element | null | undefined) => [...(row?.children ?? [])].map((cell) => cell.textContent ?? '');
      const rows = document.querySelectorAll('#usage tbody tr');
      return { head: cells(document.querySelector('#usage thead tr')), today: cells(rows[rows.length - 1]), rows: rows.length };
    });
  }
  const count = (usage: { head: string[]; today: string[] }, column: string) => usage.today[usage.head.indexOf(column)];

  /** Presses Tab until the focused element matches `selector`, as a keyboard user would. */
  async function tabTo(page: Page, selector: string): Promise<void> {
    for (let presses = 0; presses < 40; presses++) {
      await page.keyboard.press('Tab');
      if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
    }
    throw new Error(`Tab never reached ${selector}`);
  }

  t.test('a person creates a key, copies it, uses it for a keyed quote, signs in and sees that quote counted, rotates, and the old key stops working; the key never reaches storage, a cookie or a URL', skip, async (t) => {
    const { service, page, requested, logged } = await setup(t);
    await axeClean(t, page, 'the landing view');

    await page.getByLabel('Name').fill('Browser Wallet');
    await page.getByRole('button', { name: 'Get a key' }).click();
    const shown = page.locator('#created [data-testid=issued-key]');
    await shown.waitFor();
    const key = await shown.innerText();
    t.ok(KEY.test(key), 'a partner key is shown');
    t.ok((await page.locator('#created').innerText()).includes('shown once and cannot be shown again'), 'with the warning that it is shown once');
    t.ok((await page.locator('#created pre').innerText()).includes(`x-api-key: ${key}`), 'and the curl that uses it');
    await axeClean(t, page, 'the new key');

    await page.getByRole('button', { name: 'Copy key' }).click();
    await page.getByText('Copied to the clipboard.').waitFor();
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'Copy puts the key on the clipboard');

    t.equal(await quoteWith(service, key), 200, 'the key quotes');

    await page.getByLabel('Paste your key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    await page.locator('#account').waitFor();
    const details = await page.locator('#details').innerText();
    for (const shownField of ['Browser Wallet', 'partner-default', 'service fee', 'requests left this minute', 'Any origin', 'ref']) t.ok(details.includes(shownField), `the key's view shows ${shownField}`);
    t.ok(/key_[0-9a-f]{12}/.test(details), 'its id');
    const counted = await settles(async () => {
      await page.getByRole('button', { name: 'Refresh' }).click();
      await page.locator('#notice', { hasText: 'Refreshed.' }).waitFor();
      return count(await usageToday(page), 'getQuote') === '1';
    });
    const usage = await usageToday(page);
    t.ok(counted, `today's row counts the one keyed quote (${JSON.stringify(usage)})`);
    t.equal(usage.rows, 7, '7 UTC days, quiet ones as zeros');
    t.equal(count(usage, 'createExecutePlan'), '0');
    await axeClean(t, page, 'the signed-in view');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'portal-usage.png'), fullPage: true });
    const id = /key_[0-9a-f]{12}/.exec(details)![0];

    await page.getByRole('button', { name: 'Rotate key…' }).click();
    await axeClean(t, page, 'the confirmation');
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
    const rotated = page.locator('#rotated [data-testid=issued-key]');
    await rotated.waitFor();
    const newKey = await rotated.innerText();
    t.ok(KEY.test(newKey) && newKey !== key, 'a new key is shown once');
    await axeClean(t, page, 'the rotated key');
    t.ok((await page.locator('#details').innerText()).includes(id), 'same id');
    t.ok(await settles(async () => (await quoteWith(service, key)) === 401), 'the old key is refused');
    t.equal(await quoteWith(service, newKey), 200, 'the new key quotes');
    // The page signed in with the new key: a refresh works.
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('#notice', { hasText: 'Refreshed.' }).waitFor();
    t.equal(await page.locator('#account-error').innerText(), '', 'the page uses the new key');
    await keysNowhere(t, page, requested, [key, newKey], 'signed in');

    await page.getByRole('button', { name: 'Sign out' }).click();
    t.ok(await page.locator('#account').isHidden(), 'signed out');
    const leftovers = await page.evaluate(() => document.documentElement.outerHTML + [...document.querySelectorAll('input, textarea')].map((e) => (e as HTMLInputElement).value).join());
    t.notOk(leftovers.includes(key) || leftovers.includes(newKey), 'signing out leaves no key on the page');
    await keysNowhere(t, page, requested, [key, newKey], 'signed out');
    t.strictSame(logged.filter(cspRefusal), [], 'the page ran under its CSP without a refusal');
  });

  t.test('the whole flow by keyboard alone (Tab, Enter, Space and typing): create, copy, sign in, see usage, edit origins, rotate, revoke', skip, async (t) => {
    const { app, service, page, requested, logged } = await setup(t);

    await tabTo(page, '#create-name');
    await page.keyboard.type('Keyboard Wallet');
    await tabTo(page, 'button[type=submit]');
    await page.keyboard.press('Enter');
    const shown = page.locator('#created [data-testid=issued-key]');
    await shown.waitFor();
    const key = await shown.innerText();
    t.ok(await page.evaluate(() => document.activeElement?.matches('button.copy') ?? false), 'the focus is on Copy');
    await page.keyboard.press('Space');
    await page.getByText('Copied to the clipboard.').waitFor();
    t.equal(await page.evaluate(() => navigator.clipboard.readText()), key, 'copied');

    t.equal(await quoteWith(service, key), 200);
    t.ok(
      await settles(async () => {
        const view = (await app.server.inject({ url: '/portal/api/key', headers: { 'x-api-key': key } })).json<{ usage: { days: Array<{ requests: Record<string, number> }> } }>();
        return view.usage.days.at(-1)?.requests.getQuote === 1;
      }),
      'the service counted the quote',
    );

    await tabTo(page, '#sign-in-key');
    await page.keyboard.type(key);
    await page.keyboard.press('Enter');
    await page.locator('#account').waitFor();
    t.ok(await page.evaluate(() => document.activeElement?.id === 'account-title'), 'the focus moves to the key\'s view');
    t.equal(await page.locator('#sign-in-key').inputValue(), '', 'the field no longer holds the key');
    t.equal(count(await usageToday(page), 'getQuote'), '1', 'the quote is counted');

    // Bound to one origin: the swap API takes the key from it alone.
    const origin = 'https://wallet.example';
    await tabTo(page, '#origins-input');
    await page.keyboard.type(origin);
    await tabTo(page, '#origins-form button[type=submit]');
    await page.keyboard.press('Enter');
    await page.getByText(`Saved: the key is taken from ${origin} only.`).waitFor();
    t.ok((await page.locator('#details').innerText()).includes(origin), 'the view shows the origin');
    t.ok(await settles(async () => (await quoteWith(service, key, 'https://elsewhere.example')) === 401), 'another origin is refused');
    t.equal(await quoteWith(service, key, origin), 200, 'the bound origin is taken');

    await tabTo(page, '#rotate');
    await page.keyboard.press('Space');
    t.ok(await page.evaluate(() => document.activeElement?.id === 'confirm-cancel'), 'the confirmation opens on Cancel');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    const rotated = page.locator('#rotated [data-testid=issued-key]');
    await rotated.waitFor();
    const newKey = await rotated.innerText();
    t.ok(newKey !== key && KEY.test(newKey), 'rotated');
    t.ok(await settles(async () => (await quoteWith(service, key, origin)) === 401), 'the old key is refused');
    t.equal(await quoteWith(service, newKey, origin), 200, 'the new key keeps the origins and quotes');

    await tabTo(page, '#revoke');
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Space');
    await page.getByText(/revoked: it no longer works/).waitFor();
    t.ok(await page.locator('#account').isHidden(), 'revoking signs out');
    t.ok(await page.evaluate(() => document.activeElement?.id === 'sign-in-key'), 'the focus is back on the sign-in field');
    t.ok(await settles(async () => (await quoteWith(service, newKey, origin)) === 401), 'the revoked key is refused');
    await keysNowhere(t, page, requested, [key, newKey], 'after revoking');
    t.strictSame(logged.filter(cspRefusal), [], 'the page ran under its CSP without a refusal');
  });

  t.test('"errors shown from the {error, code, action} body": a bad origin refused before it is sent, by its line; Cancel in a confirmation changes nothing; a key revoked elsewhere signs the page out and cannot sign in', skip, async (t) => {
    const { app, service, page } = await setup(t);
    await page.getByLabel('Name').fill('Careful Wallet');
    await page.getByLabel(/Allowed browser origins/).fill('https://wallet.example/app');
    await page.getByRole('button', { name: 'Get a key' }).click();
    const createError = page.locator('#create-error');
    await createError.getByText('Line 1').waitFor();
    t.ok((await createError.innerText()).includes('Line 1, https://wallet.example/app: not an origin as a browser sends it; did you mean https://wallet.example?'), `the page names the line and offers the origin: ${await createError.innerText()}`);
    await axeClean(t, page, 'an error');

    await page.getByLabel(/Allowed browser origins/).fill('https://wallet.example');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await page.locator('#created [data-testid=issued-key]').waitFor();
    t.equal(await createError.innerText(), '', 'the error is gone');
    const key = await page.locator('#created [data-testid=issued-key]').innerText();
    await page.getByRole('button', { name: 'Sign in with this key' }).click();
    await page.locator('#account').waitFor();
    t.ok(await page.locator('#sign-in').isHidden(), 'signed in: the sign-in form is put away');

    for (const action of ['Rotate key…', 'Revoke key…']) {
      await page.getByRole('button', { name: action }).click();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();
      t.ok(await page.getByRole('dialog').isHidden(), `${action} cancelled`);
    }
    t.equal(await quoteWith(service, key, 'https://wallet.example'), 200, 'Cancel left the key working');
    t.equal(await page.locator('#rotated').innerText(), '', 'and issued no key');

    // Revoked behind the page's back (the keys CLI, another tab): the next action signs out.
    t.equal((await app.server.inject({ method: 'POST', url: '/portal/api/key/revoke', headers: { 'x-api-key': key } })).statusCode, 200);
    await page.getByRole('button', { name: 'Refresh' }).click();
    await page.locator('#notice', { hasText: 'Signed out:' }).waitFor();
    t.ok(await page.locator('#account').isHidden(), 'a key refused while signed in signs the page out');
    await page.getByLabel('Paste your key').fill(key);
    await page.getByRole('button', { name: 'Sign in', exact: true }).click();
    const signInError = page.locator('#sign-in-error');
    await signInError.getByText('invalid_key').waitFor();
    t.ok((await signInError.innerText()).length > 'Refused: [invalid_key]'.length, `the message and action are shown: ${await signInError.innerText()}`);
    t.ok(await page.locator('#account').isHidden(), 'not signed in');
    await axeClean(t, page, 'a refused sign-in');
  });

  t.test('"messages a person can act on": an origin refused by its line, "at most 10 origins; you entered 11", a pasted over-long name kept whole and refused saying its limit; nothing is sent until it is right', skip, async (t) => {
    const { app, page, logged } = await setup(t);
    const createError = page.locator('#create-error');
    const name = page.getByLabel('Name');
    t.ok((await page.locator('#create-name-hint').innerText()).includes('at most 64 characters'), 'the name field says its limit');

    await name.fill('Careful Wallet');
    await page.getByLabel(/Allowed browser origins/).fill('https://wallet.example\n\nhtp://x\nhttps://Wallet.example/app');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await createError.getByText('Line 3').waitFor();
    const originProblems = await createError.innerText();
    t.match(originProblems, /Line 3, htp:\/\/x: not an origin \(scheme:\/\/host\[:port\], such as https:\/\/wallet\.example\)/, `the line and what is wrong with it: ${originProblems}`);
    t.match(originProblems, /Line 4, https:\/\/Wallet\.example\/app: not an origin as a browser sends it; did you mean https:\/\/wallet\.example\?/, 'a near miss gets its origin offered');
    t.notMatch(originProblems, /origins\[|bad_request/, 'no field path or code meant for a program');
    await axeClean(t, page, 'origins refused by line');

    await page.getByLabel(/Allowed browser origins/).fill(Array.from({ length: 11 }, (_, i) => `https://w${i}.example`).join('\n'));
    await page.getByRole('button', { name: 'Get a key' }).click();
    await createError.getByText('at most 10 origins; you entered 11').waitFor();
    t.pass('the limit and the count are said');

    const long = `${'Wallet with a name pasted from somewhere else '.repeat(2)}`.trim();
    t.ok([...long].length > 64, `the pasted name is ${[...long].length} characters`);
    await page.getByLabel(/Allowed browser origins/).fill('');
    await name.fill('');
    await page.evaluate((text) => navigator.clipboard.writeText(text), long);
    await name.focus();
    await page.keyboard.press('Control+V');
    t.equal(await name.inputValue(), long, 'the pasted name is kept whole, never silently cut');
    t.equal(await name.getAttribute('aria-invalid'), 'true', 'and marked invalid');
    t.ok((await page.locator('#create-name-problem').innerText()).includes(`The name is ${[...long].length} characters: at most 64.`), 'at once, the field says by how much it is over');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await createError.getByText('at most 64').waitFor();
    t.ok(await page.evaluate(() => document.activeElement?.id === 'create-name'), 'the focus goes to the name to shorten it');
    await axeClean(t, page, 'an over-long name');
    t.strictSame(await app.core.keyStore.list(), [], 'nothing reached the service: no key was made');

    await name.fill(long.slice(0, 64));
    t.equal(await name.getAttribute('aria-invalid'), 'false', 'shortened, the field is valid again');
    t.equal(await page.locator('#create-name-problem').innerText(), '');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await page.locator('#created [data-testid=issued-key]').waitFor();
    t.equal((await app.core.keyStore.list())[0]?.name, long.slice(0, 64), 'a name at the limit is taken as typed');
    t.strictSame(logged.filter(cspRefusal), [], 'the page ran under its CSP without a refusal');
  });

  t.test('"Retry-After says when", in words: a creation over the limit says "try again in about 1 hour", not a count of seconds or a header\'s name', skip, async (t) => {
    const { page } = await setup(t, { PORTAL_KEYS_PER_IP_PER_HOUR: '1' });
    const createError = page.locator('#create-error');
    await page.getByLabel('Name').fill('First Wallet');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await page.locator('#created [data-testid=issued-key]').waitFor();
    await page.getByLabel('Name').fill('Second Wallet');
    await page.getByRole('button', { name: 'Get a key' }).click();
    await createError.getByText('rate_limited').waitFor();
    const said = await createError.innerText();
    t.match(said, /too many keys created from this address: at most 1 key an hour\. Try again in about 1 hour\./, `the limit and the wait in words: ${said}`);
    t.notMatch(said, /seconds|Retry-After/, 'no count of seconds, no header name');
    await axeClean(t, page, 'a refusal with a wait');
  });

  t.test('"the key is shown once", and only while it works: after a rotation the created key, now refused, is gone with its Copy and Sign-in buttons; only the live key is shown', skip, async (t) => {
    const { service, page } = await setup(t);
    await page.getByLabel('Name').fill('Rotating Wallet');
    await page.getByRole('button', { name: 'Get a key' }).click();
    const created = page.locator('#created [data-testid=issued-key]');
    await created.waitFor();
    const key = await created.innerText();
    await page.getByRole('button', { name: 'Sign in with this key' }).click();
    await page.locator('#account').waitFor();
    await page.getByRole('button', { name: 'Rotate key…' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Rotate key' }).click();
    await page.locator('#rotated [data-testid=issued-key]').waitFor();
    const shown = await page.locator('[data-testid=issued-key]').allInnerTexts();
    const live = await page.locator('#rotated [data-testid=issued-key]').innerText();
    t.strictSame(shown, [live], 'one key on the page: the new one');
    t.notOk(shown.includes(key), 'the rotated-away key is not shown');
    t.equal(await page.getByRole('button', { name: 'Copy key' }).count(), 1, 'one Copy button, for the live key');
    t.equal(await page.getByRole('button', { name: 'Sign in with this key' }).count(), 0, 'no Sign-in button for a dead key');
    t.equal(await quoteWith(service, live), 200, 'the key shown works');
    await axeClean(t, page, 'after a rotation');
  });
}
