// The widget (<bestex-swap>, served at /sdk/widget.js) in a real browser: Debian's Chromium driven
// by playwright-core, headless, with nothing downloaded. The host page is on an origin of its own,
// as a partner's site is, and embeds the widget with one tag; its partner key is kept to that
// origin. Without Chromium the tests are skipped with a loud notice, unless REQUIRE_CHROMIUM=1
// (CI installs it) makes that a failure.
import { mkdirSync, readFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import path from 'node:path';
import { createRequire } from 'node:module';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';
import type { Page } from 'playwright-core';
import { COMPONENTS_ID, rehome } from '../codegen/compile-validators.js';
import { newKey } from '../core/keys/partner-keys.js';
import { repoRoot } from '../handlers/app.js';
import { listen, testApp, type TestApp } from './helpers/app.js';
import { chromiumPresent, launchChromium } from './helpers/chromium.js';
import { SPEC_PATH } from './helpers/spec.js';

const SCREENSHOTS = path.join(repoRoot(), 'dist', 'screenshots');

if (!chromiumPresent('the widget browser tests')) {
  t.pass('skipped: no Chromium');
} else {
  await run();
}

/** The host's page: the widget by one tag, and a host script that executes a plan the widget emits. */
function hostPage(service: string, key: string, ledger: { url: string; token: string; registries: Readonly<Record<string, string>> }): string {
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>
<main><h1>A partner's page</h1>
<bestex-swap api-base="${service}" api-key="${key}" from="CC" to="USDCx" amount="100"></bestex-swap>
<p id="events"></p></main>
<script type="module" src="${service}/sdk/widget.js"></script>
<script type="module">
  import { execute, sandboxProvider } from '${service}/sdk/sdk.js';
  window.plans = [];
  document.addEventListener('bestex:plan', async (event) => {
    window.plans.push(event.detail);
    const party = event.detail.plan.steps[0] && document.querySelector('bestex-swap').shadowRoot.querySelector('[name=party]').value;
    const provider = sandboxProvider({ ledgerUrl: '${ledger.url}', token: '${ledger.token}', party });
    await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '1000' } } });
    const widget = document.querySelector('bestex-swap');
    window.result = await execute(event.detail.plan, { provider, registries: ${JSON.stringify(ledger.registries)}, hooks: widget.executionHooks() });
  });
</script></body></html>`;
}

async function run(): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = await launchChromium();
  t.teardown(() => browser.close());

  /** A service, a host origin serving the page, and the page open on it. */
  async function setup(t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}): Promise<{ app: TestApp; page: Page; host: string; key: string; service: string }> {
    const app = await testApp({ env });
    t.teardown(app.close);
    const service = await listen(app.server);
    let html = '';
    const hostServer: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end(html);
    });
    await new Promise<void>((resolve) => hostServer.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise((resolve) => hostServer.close(resolve)));
    const host = `http://127.0.0.1:${(hostServer.address() as AddressInfo).port}`;
    const { key, record } = newKey('host page', 'partner-default', new Date(), [host]);
    await app.core.keyStore.add(record);
    html = hostPage(service, key, { url: app.sandbox!.manifest.ledger, token: app.sandbox!.ledgerToken, registries: app.sandbox!.manifest.registries });
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await page.goto(host);
    return { app, page, host, key, service };
  }

  const widgetText = (page: Page, selector: string) => page.locator('bestex-swap').locator(selector);

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

  t.test('the widget quotes: every venue ranked as the quote ranks them, with its net and fees; unavailable ones say why in words', async (t) => {
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
    await page.waitForFunction(() => /for 250 Amulet/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('table')?.getAttribute('aria-label') ?? ''));
    t.equal(await widgetText(page, '[name=amount]').inputValue(), '250', 'the property reflects to its attribute and the form');
    await widgetText(page, '[name=to]').selectOption('CBTC');
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.textContent!.includes('no pool for this pair'));
    t.pass('oneswap reads "no pool for this pair" for CC/CBTC');
  });

  t.test('"creating a plan ... dispatches bestex:plan" whose detail validates against the spec\'s ExecutionPlan; the host executes it and the widget shows COMPLETED with the update id; all by keyboard', async (t) => {
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
    const result = await page.evaluate(() => (window as unknown as { result: { depositUpdateId: string } }).result);
    t.equal(status, `COMPLETED (update ${result.depositUpdateId})`);
    t.match(await widgetText(page, '[part=plan]').innerText(), /sent to the ledger$/, 'the plan\'s countdown stopped once it was on the ledger: no "expired" above COMPLETED');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-completed.png'), fullPage: true });
  });

  t.test('"an empty Slippage field is the default (50 bps), never 0": the plan\'s floor is the quoted net less 0.5 %; a slippage that is not a whole number from 0 to 5000 makes no plan and says why', async (t) => {
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

  t.test('a 429 counts down its Retry-After', async (t) => {
    const { page } = await setup(t, { RATE_LIMIT_KEYED_PER_MINUTE: '1' });
    await page.waitForFunction(() => /Too many requests: retrying in \d+ s/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=error]')!.textContent ?? ''), undefined, { timeout: 10_000 }).catch(async () => {
      // The first quote used the one-request window; the next one (typing) is refused.
      await widgetText(page, '[name=amount]').fill('101');
      await page.waitForFunction(() => /Too many requests: retrying in \d+ s/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=error]')!.textContent ?? ''));
    });
    const left = async () => Number(/retrying in (\d+) s/.exec(await widgetText(page, '[part=error]').innerText())?.[1]);
    const first = await left();
    t.ok(first > 0, `it says how long (${first} s)`);
    await page.waitForTimeout(2_100);
    t.ok((await left()) < first, 'and counts down');
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-rate-limited.png'), fullPage: true });
  });

  t.test('"a keyed request from an origin not on the key\'s list is refused"', async (t) => {
    const { key, service } = await setup(t);
    // A third site, on an origin of its own: the browser sends its Origin.
    const elsewhere = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
      response.end('<!doctype html><title>elsewhere</title>');
    });
    await new Promise<void>((resolve) => elsewhere.listen(0, '127.0.0.1', resolve));
    t.teardown(() => new Promise((resolve) => elsewhere.close(resolve)));
    const other = await browser.newPage();
    t.teardown(() => other.close());
    await other.goto(`http://127.0.0.1:${(elsewhere.address() as AddressInfo).port}/`);
    const answer = await other.evaluate(async ([url, k]) => {
      const response = await fetch(`${url}/api/quote?from=CC&to=USDCx&amount=100`, { headers: { 'x-api-key': k! } });
      return { status: response.status, body: await response.json() };
    }, [service, key]);
    t.match(answer, { status: 401, body: { code: 'invalid_key', error: 'the API key is not valid from this origin' } }, 'the key copied to another site is useless there, and the page reads why');
  });

  t.test('"make run serves GET /demo": from a quote to a COMPLETED swap with its update id, by keyboard alone, with a demo key kept to its own origin', async (t) => {
    const app = await testApp();
    t.teardown(app.close);
    const service = await listen(app.server);
    const page = await browser.newPage();
    t.teardown(() => page.close());
    await page.goto(`${service}/demo`);
    await widgetText(page, 'tbody tr').first().waitFor();
    await page.evaluate(() => (window as unknown as { demo: { funded: Promise<unknown> } }).demo.funded);
    await tabTo(page, 'create');
    await page.keyboard.press('Enter');
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=status]')!.getAttribute('data-status') === 'COMPLETED', undefined, { timeout: 20_000 });
    const result = await page.evaluate(() => (window as unknown as { demo: { result: { depositUpdateId: string } } }).demo.result);
    t.equal(await widgetText(page, '[part=status]').innerText(), `COMPLETED (update ${result.depositUpdateId})`);
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

  t.test('an accessibility scan (axe-core) finds no serious or critical violation', async (t) => {
    const { page } = await setup(t);
    await widgetText(page, 'tbody tr').first().waitFor();
    await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
    const violations = await page.evaluate(async () => {
      const results = await (window as unknown as { axe: { run: (context: unknown) => Promise<{ violations: Array<{ id: string; impact: string }> }> } }).axe.run(document);
      return results.violations.map((v) => ({ id: v.id, impact: v.impact }));
    });
    t.strictSame(violations.filter((v) => v.impact === 'serious' || v.impact === 'critical'), [], JSON.stringify(violations));
  });
}

