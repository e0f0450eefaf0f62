// The widget (<bestex-swap>, served at /sdk/widget.js) in a real browser: Debian's Chromium driven
// by playwright-core, headless, with nothing downloaded. The host page is on an origin of its own,
// as a partner's site is, and embeds the widget with one tag; its partner key is kept to that
// origin (./host.ts; a split's route and its execution are ./widget-split.test.ts's). Without Chromium the tests are skipped with a loud notice, unless REQUIRE_CHROMIUM=1
// (CI installs it) makes that a failure.
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import { Decimal } from 'decimal.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { COMPONENTS_ID, rehome } from '../../../codegen/compile-validators.js';
import { repoRoot } from '../../../handlers/app.js';
import { listen, testApp } from '../../helpers/app.js';
import { chromiumSkip } from '../../helpers/chromium.js';
import { SPEC_PATH, specDocument, V2_SPEC_PATH } from '../../helpers/spec.js';
import { axeFindings, fileBrowser, setupHost, widgetText, type HostOptions } from './host.js';

const SCREENSHOTS = path.join(repoRoot(), 'dist', 'screenshots');

/** The widget's rules, read from the package as built (test/sdk/widget/rules.test.ts checks their words). */
const rules = (await import(new URL('./widget/rules.js', import.meta.resolve('@bestex/sdk')).href)) as { EXECUTION_REASONS: Readonly<Record<string, string>> };

interface V2Quote {
  best: { venueId: string; net: string } | null;
  bestExecutable: { venueId: string; net: string } | null;
  venues: Array<{ venueId: string; available: boolean; net: string | null; execution: { executable: boolean; settlement: string | null; reason: string | null } }>;
}

await run(chromiumSkip('the widget browser tests'));

async function run(skip: { skip?: string }): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = fileBrowser();
  const setup = (t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}, options: HostOptions = {}) => setupHost(browser, t, env, options);

  /** What has the focus: the widget's control by name or part, or `body` when the focus fell out of everything. */
  const focused = (page: Page) =>
    page.evaluate(() => {
      const inner = document.querySelector('bestex-swap')!.shadowRoot!.activeElement;
      if (document.activeElement === document.body || !inner) return 'body';
      return inner.getAttribute('name') ?? inner.getAttribute('part') ?? inner.tagName.toLowerCase();
    });

  /** Runs `act`, then waits until the widget has drawn a quote table other than the one on screen before. */
  async function redrawn(page: Page, act: () => Promise<void>): Promise<void> {
    await page.evaluate(() => void ((window as unknown as { shownTable: unknown }).shownTable = document.querySelector('bestex-swap')!.shadowRoot!.querySelector('table')));
    await act();
    await page.waitForFunction(() => {
      const table = document.querySelector('bestex-swap')!.shadowRoot!.querySelector('table');
      return table !== null && table !== (window as unknown as { shownTable: unknown }).shownTable;
    }, undefined, { polling: 50 });
  }

  /** Presses Tab until the widget's control named (or part) `target` has the focus, as a keyboard user would. */
  async function tabTo(page: Page, target: string): Promise<void> {
    for (let presses = 0; presses < 20; presses++) {
      await page.keyboard.press('Tab');
      const focused = await page.evaluate(() => {
        const inner = document.querySelector('bestex-swap')?.shadowRoot?.activeElement;
        return inner ? inner.getAttribute('name') ?? inner.getAttribute('part') : null;
      });
      if (focused === target) return;
    }
    throw new Error(`Tab never reached ${target}`);
  }

  t.test('the widget quotes: every venue ranked as the quote ranks them, with its net and fees; unavailable ones say why in words', skip, async (t) => {
    const { app, page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    const rows = await widgetText(page, 'tbody tr').allInnerTexts();
    const quote = (await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=100' })).json<{ venues: Array<{ venueId: string; net: string }> }>();
    t.equal(rows.length, 5);
    rows.forEach((row, i) => t.match(row, new RegExp(`^\\s*${quote.venues[i]!.venueId}\\s+${quote.venues[i]!.net.replace('.', '\\.')}`), `row ${i}: ${quote.venues[i]!.venueId}`));
    rows.forEach((row, i) => t.match(row, /(venue fee [0-9.]+ \w+, (taken from what you give|on top of what you give|taken from what you receive) \(\d+ bps\)|no venue fee)\s+service [0-9.]+ \(\d+ bps\)\s+you receive [0-9.]+/, `row ${i}: its fee lines, and the disclosed ones with the key`));
    t.match(await widgetText(page, '[part=edge]').innerText(), /best beats the next by \d+ bps/);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-quote.png'), fullPage: true });
    // The attributes are properties too: the host sets one, the widget quotes again.
    await page.evaluate(() => void ((document.querySelector('bestex-swap') as unknown as { amount: string }).amount = '250'));
    await page.waitForFunction(() => /for 250 CC/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('table')?.getAttribute('aria-label') ?? ''));
    t.equal(await widgetText(page, '[name=amount]').inputValue(), '250', 'the property reflects to its attribute and the form');
    await widgetText(page, '[name=to]').selectOption('CBTC');
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.textContent!.includes('no pool for this pair'));
    t.pass('oneswap reads "no pool for this pair" for CC/CBTC');
  });

  t.test('"creating a plan ... dispatches bestex:plan" whose detail validates against the spec\'s ExecutionPlan; the host executes it and the widget shows COMPLETED with what was received and the update id, once; all by keyboard', skip, async (t) => {
    const { app, page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    // The pool waits until the executing state is on screen.
    app.sandbox!.ledger.setOperatorPaused(true);
    // Keyboard only: Tab to the party field, type, submit with Enter.
    await tabTo(page, 'party');
    await page.keyboard.type(`widget-taker::1220${'3'.repeat(64)}`);
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (window as unknown as { plans: unknown[] }).plans.length === 1);
    const detail = await page.evaluate(() => (window as unknown as { plans: Array<{ plan: unknown; quote: unknown }> }).plans[0]);
    const spec = parse(readFileSync(SPEC_PATH, 'utf8')) as { components: { schemas: Record<string, unknown> } };
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv, ['date-time', 'int32']);
    ajv.addSchema({ $id: COMPONENTS_ID, $defs: rehome(spec.components.schemas) });
    const valid = ajv.compile({ $ref: `${COMPONENTS_ID}#/$defs/ExecutionPlan` });
    t.ok(valid(detail!.plan), JSON.stringify(valid.errors));
    t.match(detail!.quote, { pair: { give: 'Amulet', want: 'USDCx' } }, 'with the quote it came from');
    t.match(await widgetText(page, '[part=plan]').innerText(), /valid for \d+ s/, 'the plan counts down');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-plan.png'), fullPage: true });
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=status]')!.getAttribute('data-status') === 'INITIATED', undefined, { timeout: 20_000 });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-executing.png'), fullPage: true });
    app.sandbox!.ledger.setOperatorPaused(false);
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=status]')!.getAttribute('data-status') === 'COMPLETED', undefined, { timeout: 20_000 });
    const status = await widgetText(page, '[part=status]').innerText();
    const result = await page.evaluate(() => (window as unknown as { result: { depositUpdateId: string; received: string } }).result);
    t.match(result.received, /^[0-9]+\.[0-9]+$/);
    t.equal(status, `COMPLETED: received ${result.received} USDCx (update ${result.depositUpdateId})`, 'a settled swap says what was received');
    t.equal(await page.evaluate((id) => document.querySelector('bestex-swap')!.shadowRoot!.textContent!.split(id).length - 1, result.depositUpdateId), 1, 'the status is on screen once, not once more in an announcer');
    t.match(await widgetText(page, '[part=plan]').innerText(), /sent to the ledger$/, 'the plan\'s countdown stopped once it was on the ledger: no "expired" above COMPLETED');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-completed.png'), fullPage: true });
  });

  t.test('"an empty Slippage field is the default (50 bps), never 0": the plan\'s floor is the quoted net less 0.5 %; a slippage that is not a whole number from 0 to 5000 makes no plan and says why', skip, async (t) => {
    const { page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    await widgetText(page, '[name=slippage-bps]').fill('');
    await widgetText(page, '[name=party]').fill(`widget-empty::1220${'4'.repeat(64)}`);
    await widgetText(page, '[name=party]').press('Enter');
    await page.waitForFunction(() => (window as unknown as { plans: unknown[] }).plans.length === 1);
    const { plan } = await page.evaluate(() => (window as unknown as { plans: Array<{ plan: { quoteRef: { net: string; minReceive: string } } }> }).plans[0]!);
    const floor = (BigInt(plan.quoteRef.net.replace('.', '').padEnd(plan.quoteRef.net.split('.')[0]!.length + 10, '0')) * 9950n) / 10000n;
    t.equal(BigInt(plan.quoteRef.minReceive.replace('.', '').padEnd(plan.quoteRef.minReceive.split('.')[0]!.length + 10, '0')), floor, `minReceive ${plan.quoteRef.minReceive} is net ${plan.quoteRef.net} less 50 bps, floored`);
    for (const text of ['abc', '12.5', '5001', '-1']) {
      await widgetText(page, '[name=slippage-bps]').fill(text);
      await widgetText(page, '[name=party]').press('Enter');
      t.equal(await widgetText(page, '[part=error]').innerText(), 'Slippage is a whole number of bps from 0 to 5000; leave it empty for the default (50).', `${text}: said`);
      t.equal(await page.evaluate(() => document.querySelector('bestex-swap')!.shadowRoot!.activeElement?.getAttribute('name')), 'slippage-bps', `${text}: the field has the focus`);
    }
    t.equal(await page.evaluate(() => (window as unknown as { plans: unknown[] }).plans.length), 1, 'no plan was made for any of them');
  });

  t.test('a 429 counts down its Retry-After', skip, async (t) => {
    const limited = () => /Too many requests: retrying in \d+ s/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=error]')!.textContent ?? '');
    // The one-request window goes to whichever of the first quote and its reference (a thousandth of the amount) arrives first.
    const answered = (page: Page) => page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('tbody tr') !== null || /Too many requests/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=error]')!.textContent ?? ''), undefined, { polling: 50 });
    const { page } = await setup(t, { RATE_LIMIT_KEYED_PER_MINUTE: '1' }, { fakeClock: true, loaded: answered });
    if (!(await page.evaluate(limited))) {
      // The first quote used the window; the next one (typing) is refused.
      await widgetText(page, '[name=amount]').fill('101');
      await page.clock.runFor(1_000);
      await page.waitForFunction(limited, undefined, { polling: 50 });
    }
    const left = async () => Number(/retrying in (\d+) s/.exec(await widgetText(page, '[part=error]').innerText())?.[1]);
    const first = await left();
    t.ok(first > 2, `it says how long (${first} s)`);
    // The page's clock, not the wall's: two seconds on it are two seconds off the wait.
    await page.clock.runFor(2_000);
    t.equal(await left(), first - 2, 'and counts down');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-rate-limited.png'), fullPage: true });
  });

  t.test('"a keyed request from an origin not on the key\'s list is refused"', skip, async (t) => {
    const { key, service } = await setup(t);
    // A third site, on an origin of its own: the browser sends its Origin.
    const elsewhere = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise((resolve) => elsewhere.close(resolve)));
    const other = await (await browser()).newPage();
    t.teardown(() => other.close());
    await other.goto(`http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`);
    const answer = await other.evaluate(async ([url, k]) => {
      const response = await fetch(`${url}/api/quote?from=CC&to=USDCx&amount=100`, { headers: { 'x-api-key': k! } });
      return { status: response.status, body: await response.json() };
    }, [service, key]);
    t.match(answer, { status: 401, body: { code: 'invalid_key', error: 'the API key is not valid from this origin' } }, 'the key copied to another site is useless there, and the page reads why');
  });

  t.test('"make run serves GET /demo" on API version 2: at 1,000 CC a new user gets OneSwap\'s better price, signs its message in the wallet and gets a COMPLETED swap with its update id, executed with no registry configuration, by keyboard alone, with a demo key kept to its own origin', skip, async (t) => {
    // OneSwap's intents read often, so the service's reading, which the SDK waits for, follows the swap closely.
    const app = await testApp({ env: { INTENT_POLL_INTERVAL_MS: '200' } });
    t.teardown(app.close);
    const service = await listen(app.server);
    const page = await (await browser()).newPage();
    t.teardown(() => page.close());
    await page.goto(`${service}/demo`);
    await widgetText(page, 'tbody tr').first().waitFor();
    t.equal(await page.locator('bestex-swap').getAttribute('api-version'), '2');
    t.notMatch(await page.content(), /registries/, 'the page configures no registry: the plan names them');
    t.equal(await page.locator('bestex-swap').getAttribute('amount'), '1000');
    await page.evaluate(() => {
      const w = window as unknown as { planned: unknown; statuses: string[] };
      w.statuses = [];
      document.addEventListener('bestex:plan', (event) => void (w.planned = (event as CustomEvent).detail));
      const line = document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=status]')!;
      new MutationObserver(() => w.statuses.push(line.textContent ?? '')).observe(line, { childList: true, subtree: true, characterData: true });
    });
    await page.evaluate(() => (window as unknown as { demo: { funded: Promise<unknown> } }).demo.funded);
    await tabTo(page, 'create');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=status]')!.getAttribute('data-status') === 'COMPLETED', undefined, { timeout: 30_000 });
    const result = await page.evaluate(() => (window as unknown as { demo: { result: { depositUpdateId: string; received: string; outcome: { agrees: boolean } | null } } }).demo.result);
    t.equal(await widgetText(page, '[part=status]').innerText(), `COMPLETED: received ${result.received} USDCx (update ${result.depositUpdateId})`);
    const planned = await page.evaluate(() => (window as unknown as { planned: { plan: { quoteRef: { venueId: string; minReceive: string }; registries: unknown[]; steps: Array<{ kind: string }> }; quote: V2Quote } }).planned);
    t.equal(planned.quote.bestExecutable!.venueId, 'oneswap', 'OneSwap pays the most of the venues a wallet can execute at 1,000 CC');
    t.equal(planned.plan.quoteRef.venueId, 'oneswap', 'a v2 plan, on the best executable venue');
    t.equal(planned.plan.steps[0]!.kind, 'sign-message', 'whose one step is OneSwap\'s message to sign');
    t.ok(planned.plan.registries.length > 0, 'naming its registries');
    t.ok(new Decimal(result.received).gte(planned.plan.quoteRef.minReceive), 'received at least the floor');
    t.equal(result.outcome?.agrees, true, "the service's reading of the swap agrees");
    const statuses = await page.evaluate(() => (window as unknown as { statuses: string[] }).statuses);
    const signing = statuses.find((line) => line.startsWith('SIGNING'));
    t.match(signing, /^SIGNING: sign the message your wallet shows you: .*OneSwap.*moves no funds/, 'the person is told to sign in the wallet, and why, before the wallet asks');
    t.ok(statuses.indexOf(signing!) < statuses.findIndex((line) => line.startsWith('COMPLETED')), 'before the swap completes');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'demo-completed.png'), fullPage: true });
    const demoKeys = (await app.core.keyStore.list()).filter((k) => k.name === 'demo (sandbox)');
    t.strictSame(demoKeys.map((k) => k.origins), [[service]], 'one demo key, allowed only from the page\'s origin');
    await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
    const violations = await page.evaluate(async () => {
      const results = await (window as unknown as { axe: { run: (context: unknown) => Promise<{ violations: Array<{ id: string; impact: string }> }> } }).axe.run(document);
      return results.violations.map((v) => ({ id: v.id, impact: v.impact }));
    });
    t.strictSame(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], 'the demo page passes axe too');
  });

  t.test('an accessibility scan (axe-core) finds no serious or critical violation', skip, async (t) => {
    const { page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
    const violations = await page.evaluate(async () => {
      const results = await (window as unknown as { axe: { run: (context: unknown) => Promise<{ violations: Array<{ id: string; impact: string }> }> } }).axe.run(document);
      return results.violations.map((v) => ({ id: v.id, impact: v.impact }));
    });
    t.strictSame(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], JSON.stringify(violations));
  });

  t.test('"a refused plan\'s error stays until the person acts on it": a quote refresh and typing in another field leave it; editing the field it concerns, pressing Create plan again or Dismiss replace or clear it; it is on screen once', skip, async (t) => {
    const { page } = await setup(t, {}, { fakeClock: true });
    const error = widgetText(page, '[part=error]');
    const refuse = async () => {
      await widgetText(page, '[name=party]').fill('not-a-party');
      await widgetText(page, '[name=party]').press('Enter');
      await page.waitForFunction(() => /takerParty/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=error]')!.textContent ?? ''), undefined, { polling: 50 });
    };
    await refuse();
    const message = await error.innerText();
    t.match(message, /'takerParty' must be a ledger party id/, 'the service\'s reason, in words');
    t.equal(await page.evaluate((m) => document.querySelector('bestex-swap')!.shadowRoot!.textContent!.split(m).length - 1, message), 1, 'the error is on screen once, not once more in an announcer');
    await redrawn(page, () => page.clock.runFor(10_000));
    t.equal(await error.innerText(), message, 'the refresh every 10 s leaves it');
    await redrawn(page, async () => {
      await widgetText(page, '[name=amount]').fill('120');
      await page.clock.runFor(1_000);
    });
    t.equal(await error.innerText(), message, 'a new quote for another amount leaves it');
    await widgetText(page, '[name=party]').fill('not-a-party-either');
    t.equal(await error.innerText(), '', 'editing the field it concerns clears it');
    await refuse();
    await widgetText(page, '[part=dismiss]').click();
    t.equal(await error.innerText(), '', 'Dismiss clears it');
    t.equal(await focused(page), 'party', 'and the focus goes to the field it concerned, not to the page');
    await refuse();
    await widgetText(page, '[name=slippage-bps]').fill('abc');
    t.equal(await error.innerText(), message, 'editing another field leaves it');
    await widgetText(page, '[name=slippage-bps]').press('Enter');
    t.equal(await error.innerText(), 'Slippage is a whole number of bps from 0 to 5000; leave it empty for the default (50).', 'pressing Create plan again replaces it with what that press found');
    // axe-core waits on timers of its own: the page's clock runs again for it.
    await page.clock.resume();
    t.same(await axeFindings(page), [], 'axe-core finds nothing serious with an error and its Dismiss on screen');
  });

  t.test('"an invalid amount clears the quote table" and says why in words, making no request; an empty one asks for an amount', skip, async (t) => {
    const { page, quoteRequests } = await setup(t, {}, { fakeClock: true });
    for (const [text, said] of [
      ['abc', 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.'],
      ['0', 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.'],
      ['-5', 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.'],
      ['1.12345678901', 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.'],
      ['1000000001', 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.'],
      ['1e5', 'Amount is a number above 0 and at most 1000000000, with at most 10 decimal places.'],
      ['', 'Enter an amount to quote.'],
    ]) {
      const before = quoteRequests();
      await widgetText(page, '[name=amount]').fill(text!);
      await page.clock.runFor(1_000);
      t.equal(await widgetText(page, 'table').count(), 0, `${text}: no table of another amount's quote`);
      t.equal(await widgetText(page, '[part=error]').innerText(), said, `${text}: said`);
      t.equal(quoteRequests(), before, `${text}: no request`);
    }
    await redrawn(page, async () => {
      await widgetText(page, '[name=amount]').fill('100');
      await page.clock.runFor(1_000);
    });
    t.equal(await widgetText(page, '[part=error]').innerText(), '', 'a valid amount quotes again, and the words go');
  });

  t.test('"focus never falls to the page": Tab goes tokens and amount, venue, slippage, party, Create plan; after Create plan the plan has the focus; a refresh under a focused venue choice keeps it', skip, async (t) => {
    const { page } = await setup(t, {}, { fakeClock: true });
    const order: string[] = [];
    while (order.at(-1) !== 'create' && order.length < 12) {
      await page.keyboard.press('Tab');
      order.push(await focused(page));
    }
    t.strictSame(order, ['from', 'to', 'amount', 'venue', 'slippage-bps', 'party', 'create'], 'the venue is chosen before slippage and Create plan');
    await page.keyboard.press('Enter');
    t.equal(await focused(page), 'party', 'Create plan without a party: the party field');
    await page.keyboard.type(`widget-focus::1220${'6'.repeat(64)}`);
    await tabTo(page, 'create');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => (window as unknown as { plans: unknown[] }).plans.length === 1, undefined, { polling: 50 });
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.activeElement?.getAttribute('part') === 'plan', undefined, { polling: 50, timeout: 5_000 }).catch(() => undefined);
    t.equal(await focused(page), 'plan', 'after Create plan: the plan it made');
    await widgetText(page, 'input[name=venue]:not([disabled])').focus();
    await redrawn(page, () => page.clock.runFor(10_000));
    t.equal(await focused(page), 'venue', 'a refresh redraws the table and the venue choice keeps the focus');
  });

  t.test('"the headline separates the best quote from the best you can execute now" and says why they differ', skip, async (t) => {
    const { app, page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    const quote = (await app.server.inject({ url: '/api/quote?from=CC&to=USDCx&amount=100' })).json<{ best: { venueId: string; net: string }; venues: Array<{ venueId: string; net: string }> }>();
    const executable = quote.venues.find((v) => v.venueId === 'tradecraft')!;
    t.not(quote.best.venueId, 'tradecraft', 'the sandbox quotes another venue best');
    t.equal(await widgetText(page, '[part=best]').innerText(), `Best quote: ${quote.best.venueId} ${quote.best.net} USDCx · Best you can execute now: tradecraft ${executable.net} USDCx`);
    t.equal(await widgetText(page, '[part=best-note]').innerText(), `Plans are made on tradecraft only for now: ${quote.best.venueId} quotes more but cannot be executed through this widget yet.`);
  });

  t.test('with api-version="2" "the venue table says of every venue whether your wallet can execute it", and why not in words; only the venues it can are offered, the best of them chosen; the widget asks v2 quotes only', skip, async (t) => {
    const paths: string[] = [];
    const { app, page } = await setup(t, {}, { attributes: 'api-version="2"' });
    page.on('request', (request) => void paths.push(new URL(request.url()).pathname));
    await widgetText(page, 'tbody tr').first().waitFor();
    const quote = (await app.server.inject({ url: '/api/v2/quote?from=CC&to=USDCx&amount=100' })).json<V2Quote>();
    const rows = await widgetText(page, 'tbody tr').allInnerTexts();
    t.equal(rows.length, quote.venues.length);
    t.strictSame(await widgetText(page, 'thead th').allInnerTexts(), ['Venue', 'You receive (USDCx)', 'Fees', 'Can you execute it']);
    const cells = await widgetText(page, 'tbody [part=execution]').allInnerTexts();
    quote.venues.forEach((venue, i) => {
      t.match(rows[i], new RegExp(`^\\s*${venue.venueId}\\s+${venue.net!.replace('.', '\\.')}`), `row ${i}: ${venue.venueId}, ranked as the quote ranks it`);
      t.equal(cells[i], venue.execution.executable ? 'yes' : `no: ${rules.EXECUTION_REASONS[venue.execution.reason!]}`, `row ${i}: ${venue.venueId} ${venue.execution.executable ? 'executable' : venue.execution.reason}`);
    });
    t.ok(quote.venues.some((v) => !v.execution.executable) && quote.venues.some((v) => v.execution.executable), 'the sandbox quotes venues of both kinds');
    const enabled = await page.evaluate(() => [...document.querySelector('bestex-swap')!.shadowRoot!.querySelectorAll<HTMLInputElement>('input[name=venue]:not([disabled])')].map((c) => c.value));
    t.strictSame(enabled, quote.venues.filter((v) => v.available && v.execution.executable).map((v) => v.venueId), 'exactly the available executable venues can be chosen');
    t.equal(await widgetText(page, 'input[name=venue]:checked').inputValue(), quote.bestExecutable!.venueId, 'the best executable venue is chosen');
    t.match(await widgetText(page, '[part=impact]').innerText(), new RegExp(`^Price impact on ${quote.bestExecutable!.venueId}: `), 'and the price impact is measured on it');
    await redrawn(page, async () => {
      await widgetText(page, '[name=amount]').fill('120');
    });
    t.ok(paths.includes('/api/v2/quote'), 'its quotes are v2\'s');
    t.notOk(paths.includes('/api/quote'), 'and none of v1\'s');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-v2-quote.png'), fullPage: true });
    t.same(await axeFindings(page), [], 'axe-core finds nothing serious in the v2 table');
  });

  t.test('with api-version="2" "a plan is made in v2 on the best executable venue": bestex:plan\'s detail is a v2 plan (validated against v2\'s ExecutionPlan) naming its registries, with the v2 quote it came from', skip, async (t) => {
    const { page } = await setup(t, {}, { attributes: 'api-version="2"' });
    await widgetText(page, 'tbody tr').first().waitFor();
    await widgetText(page, '[name=party]').fill(`widget-v2::1220${'8'.repeat(64)}`);
    await widgetText(page, '[name=party]').press('Enter');
    await page.waitForFunction(() => (window as unknown as { plans: unknown[] }).plans.length === 1);
    const detail = await page.evaluate(() => (window as unknown as { plans: Array<{ plan: { quoteRef: { venueId: string }; registries: unknown[]; settlement: string; steps: Array<{ instrument: { id: string } }> }; quote: V2Quote }> }).plans[0]!);
    const spec = specDocument(V2_SPEC_PATH) as { components: { schemas: Record<string, unknown> } };
    const ajv = new Ajv2020.default({ strict: false, allErrors: true });
    addFormats.default(ajv, ['date-time', 'int32']);
    ajv.addSchema({ $id: COMPONENTS_ID, $defs: rehome(spec.components.schemas) });
    const valid = ajv.compile({ $ref: `${COMPONENTS_ID}#/$defs/ExecutionPlan` });
    t.ok(valid(detail.plan), JSON.stringify(valid.errors));
    t.ok(detail.quote.bestExecutable, 'the detail\'s quote is the v2 quote');
    t.equal(detail.plan.quoteRef.venueId, detail.quote.bestExecutable!.venueId, `planned on the best executable venue, ${detail.quote.bestExecutable!.venueId}`);
    t.match(detail.plan.registries, [{ instrument: 'Amulet' }], 'the plan names the registry of what it moves');
    // The host page executes each plan it hears of: by now the countdown may have stopped, once the plan is on the ledger.
    t.match(await widgetText(page, '[part=plan]').innerText(), /^Plan \S+: deposit 100 CC, receive at least [0-9.]+ USDCx, (valid for \d+ s|sent to the ledger)/, 'the plan is shown as in v1');
    // Another venue the quote says can be executed, chosen by the person: the next plan is on it.
    const other = detail.quote.venues.find((v) => v.available && v.execution.executable && v.venueId !== detail.quote.bestExecutable!.venueId);
    if (!other) throw new Error('the sandbox quotes a second executable venue');
    await widgetText(page, `input[name=venue][value=${other.venueId}]`).check();
    t.match(await widgetText(page, '[part=impact]').innerText(), new RegExp(`^Price impact on ${other.venueId}: `), 'the price impact follows the choice');
    await widgetText(page, '[name=party]').press('Enter');
    await page.waitForFunction(() => (window as unknown as { plans: unknown[] }).plans.length === 2);
    const second = await page.evaluate(() => (window as unknown as { plans: Array<{ plan: { quoteRef: { venueId: string }; settlement: string } }> }).plans[1]!);
    t.ok(valid(second.plan), JSON.stringify(valid.errors));
    t.equal(second.plan.quoteRef.venueId, other.venueId, `the person's choice, ${other.venueId}, is planned`);
    t.equal(second.plan.settlement, other.execution.settlement, 'settled as the quote said it would be');
  });

  t.test('with api-version="2" "the headline splits the best quote from the best you can execute only when the best venue cannot be executed", with its reason in words', skip, async (t) => {
    const { app, page } = await setup(t, {}, { attributes: 'api-version="2"' });
    await widgetText(page, 'tbody tr').first().waitFor();
    const v2quote = async (amount: string) => (await app.server.inject({ url: `/api/v2/quote?from=CC&to=USDCx&amount=${amount}` })).json<V2Quote>();
    const split = await v2quote('100');
    const best = split.venues.find((v) => v.venueId === split.best!.venueId)!;
    t.notOk(best.execution.executable, `the sandbox quotes ${best.venueId} best, which cannot be executed`);
    t.equal(await widgetText(page, '[part=best]').innerText(), `Best quote: ${split.best!.venueId} ${split.best!.net} USDCx · Best you can execute now: ${split.bestExecutable!.venueId} ${split.bestExecutable!.net} USDCx`);
    t.equal(await widgetText(page, '[part=best-note]').innerText(), `${best.venueId} quotes more, but cannot be executed through this service: ${rules.EXECUTION_REASONS[best.execution.reason!]}`);
    // The executable venue's pool moves 10 % in the seller's favour: it quotes best.
    const { ledger, token } = { ledger: app.sandbox!.manifest.ledger, token: app.sandbox!.ledgerToken };
    const moved = await fetch(new URL('/sandbox/v1/move', ledger), { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ pair: 'CC/USDCx', bps: 1000, venue: split.bestExecutable!.venueId }) });
    t.equal(moved.status, 200, await moved.text());
    await redrawn(page, async () => {
      await widgetText(page, '[name=amount]').fill('101');
    });
    const together = await v2quote('101');
    t.equal(together.best!.venueId, together.bestExecutable!.venueId, `${together.best!.venueId} quotes best and can be executed`);
    t.equal(await widgetText(page, '[part=best]').innerText(), `Best quote: ${together.best!.venueId} ${together.best!.net} USDCx, and you can execute it now`, 'one best, no split');
    t.equal(await widgetText(page, '[part=best-note]').innerText(), '', 'and nothing to explain');
  });

  t.test('"one display name per token": the symbol (CC) everywhere on screen, the registry name (Amulet) in its title', skip, async (t) => {
    const { page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    await widgetText(page, '[name=party]').fill(`widget-names::1220${'7'.repeat(64)}`);
    await widgetText(page, '[name=party]').press('Enter');
    await page.waitForFunction(() => (window as unknown as { plans: unknown[] }).plans.length === 1);
    const visible = await page.evaluate(() => document.querySelector('bestex-swap')!.shadowRoot!.textContent!);
    t.notMatch(visible, /Amulet/, 'the registry name is nowhere on screen');
    t.match(await widgetText(page, '[part=plan]').innerText(), /^Plan \S+: deposit 100 CC, receive at least [0-9.]+ USDCx/);
    const named = await page.evaluate(() => [...document.querySelector('bestex-swap')!.shadowRoot!.querySelectorAll('[title]')].map((node) => [node.textContent, node.getAttribute('title')]));
    t.ok(named.length >= 2, 'the symbol carries its registry name');
    for (const [text, title] of named) t.match(title, text === 'CC' ? /^Amulet/ : /./, `${text}: ${title}`);
    t.ok(named.some(([text]) => text === 'CC'), 'CC in the plan names Amulet in its title');
  });

  t.test('"price impact from the quote itself": this amount\'s price on the execution venue against the price of a thousandth of it, rounded up; a 50,000,000 CC swap against the 3,000,000 USDCx pool warns; the host sets the threshold (price-impact-warning-bps)', skip, async (t) => {
    const { app, page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    const scaled = (text: string) => {
      const [whole, fraction = ''] = text.split('.');
      return BigInt(whole!) * 10_000_000_000n + BigInt(fraction.padEnd(10, '0'));
    };
    const expected = async (amount: string, small: string) => {
      const gross = async (a: string) => (await app.server.inject({ url: `/api/quote?from=CC&to=USDCx&amount=${a}` })).json<{ venues: Array<{ venueId: string; gross: string }> }>().venues.find((v) => v.venueId === 'tradecraft')!.gross;
      const [full, reference] = [scaled(await gross(amount)), scaled(await gross(small)) + 1n];
      const [a, s] = [scaled(amount), scaled(small)];
      const lost = a * reference - full * s;
      const bps = (lost * 10_000n + a * reference - 1n) / (a * reference);
      return `${bps / 100n}.${String(bps % 100n).padStart(2, '0')} %`;
    };
    const impact = widgetText(page, '[part=impact]');
    t.equal(await impact.innerText(), `Price impact on tradecraft: ${await expected('100', '0.1')}, this amount's price against that of 0.1 CC, before fees.`);
    t.equal(await widgetText(page, '[part=impact-warning]').count(), 0, 'no warning for 100 CC');
    await widgetText(page, '[name=amount]').fill('50000000');
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=impact-warning]') !== null);
    const percent = await expected('50000000', '50000');
    t.equal(await impact.innerText(), `Price impact on tradecraft: ${percent}, this amount's price against that of 50000 CC, before fees.`);
    t.equal(await widgetText(page, '[part=impact-warning]').innerText(), `Warning: a price impact of ${percent} is above 1.00 %. This amount moves the price against you; a smaller amount gets a better price.`);
    t.same(await axeFindings(page), [], 'axe-core finds nothing serious with the warning on screen');
    await page.evaluate(() => document.querySelector('bestex-swap')!.setAttribute('price-impact-warning-bps', '9000'));
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=impact-warning]') === null);
    t.pass('a host that warns above 90 % sees no warning at this impact');
  });
}
