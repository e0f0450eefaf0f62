// The widget's browser harness, shared by its Chromium test files: a host page on an origin of its
// own (as a partner's site is) that embeds the widget with one tag and executes each plan it emits
// with the SDK and the sandbox wallet; a service for it with a partner key kept to that origin; and
// Debian's Chromium, launched by the first test that needs it, with the few ways the tests read
// and drive the widget.
import { createRequire } from 'node:module';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { newKey } from '../../../core/keys/partner-keys.js';
import { listen, testApp, type TestApp, type TestAppOptions } from '../../helpers/app.js';
import { launchChromium } from '../../helpers/chromium.js';

export interface HostOptions {
  /** More attributes of the widget's tag (api-version="2", say). */
  readonly attributes?: string;
  /** The widget's amount attribute (100 unless said). */
  readonly amount?: string;
  /** Execute with a v2 client (which completes a plan made with a message to sign) rather than with v1's registries. */
  readonly v2Client?: boolean;
  /** The page's timers run only when the test moves its clock. */
  readonly fakeClock?: boolean;
  /** With fakeClock: what the page shows once its first quote is answered, before its clock stops (the table unless said). */
  readonly loaded?: (page: Page) => Promise<unknown>;
  /** The app's sandbox started so (its participant without the batching package, say). */
  readonly sandbox?: TestAppOptions['sandbox'];
}

interface Ledger {
  readonly url: string;
  readonly token: string;
  readonly registries: Readonly<Record<string, string>>;
}

/**
 * The host's page: the widget by one tag, and a host script that gives the party 1000 CC and
 * executes each plan the widget emits (window.plans, each execution's result in window.results,
 * the last in window.result).
 */
export function hostPage(service: string, key: string, ledger: Ledger, options: HostOptions = {}): string {
  const how = options.v2Client ? `client: createClientV2({ baseUrl: '${service}', apiKey: '${key}' })` : `registries: ${JSON.stringify(ledger.registries)}`;
  return `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>Host</title></head><body>
<main><h1>A partner's page</h1>
<bestex-swap api-base="${service}" api-key="${key}" from="CC" to="USDCx" amount="${options.amount ?? '100'}" ${options.attributes ?? ''}></bestex-swap>
<p id="events"></p></main>
<script type="module" src="${service}/sdk/widget.js"></script>
<script type="module">
  import { createClientV2, execute, sandboxProvider } from '${service}/sdk/sdk.js';
  window.plans = [];
  window.results = [];
  document.addEventListener('bestex:plan', async (event) => {
    window.plans.push(event.detail);
    const party = event.detail.plan.steps[0] && document.querySelector('bestex-swap').shadowRoot.querySelector('[name=party]').value;
    const provider = sandboxProvider({ ledgerUrl: '${ledger.url}', token: '${ledger.token}', party });
    await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '1000' } } });
    const widget = document.querySelector('bestex-swap');
    window.result = await execute(event.detail.plan, { provider, ${how}, hooks: widget.executionHooks() });
    window.results.push(window.result);
  });
</script></body></html>`;
}

export interface Hosted {
  readonly app: TestApp;
  readonly page: Page;
  readonly host: string;
  readonly key: string;
  readonly service: string;
  readonly quoteRequests: () => number;
}

/** Chromium for this test file, launched by the first test that runs (a run without it launches nothing), closed when the file's tests end. */
export function fileBrowser(): () => Promise<Browser> {
  let launched: Promise<Browser> | undefined;
  t.teardown(async () => {
    await (await launched)?.close();
  });
  return () => (launched ??= launchChromium());
}

/** A service, a host origin serving the page, and the page open on it. */
export async function setupHost(browser: () => Promise<Browser>, t: { teardown(fn: () => unknown): void }, env: Record<string, string> = {}, options: HostOptions = {}): Promise<Hosted> {
  const app = await testApp({ env, ...(options.sandbox ? { sandbox: options.sandbox } : {}) });
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
  html = hostPage(service, key, { url: app.sandbox!.manifest.ledger, token: app.sandbox!.ledgerToken, registries: app.sandbox!.manifest.registries }, options);
  const page = await (await browser()).newPage();
  t.teardown(() => page.close());
  // A control that is not there fails in seconds, not in the half-minute that would take the file past its time.
  page.setDefaultTimeout(10_000);
  let quotes = 0;
  page.on('request', (request) => void (new URL(request.url()).pathname === '/api/quote' && quotes++));
  // The page's timers run only when the test moves its clock: a refresh is the test's act, not the wall clock's.
  if (options.fakeClock) await page.clock.install({ time: new Date() });
  await page.goto(host);
  if (options.fakeClock) {
    await (options.loaded ? options.loaded(page) : widgetText(page, 'tbody tr').first().waitFor());
    await page.clock.pauseAt(await page.evaluate(() => Date.now() + 2_000));
  }
  return { app, page, host, key, service, quoteRequests: () => quotes };
}

export const widgetText = (page: Page, selector: string) => page.locator('bestex-swap').locator(selector);

/** Waits until the widget's status line reads `status` (its data-status). */
export const untilStatus = (page: Page, status: string, timeout = 20_000) =>
  page.waitForFunction((s) => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=status]')!.getAttribute('data-status') === s, status, { timeout });

/** axe-core's serious and critical findings on the page as it is now. */
export async function axeFindings(page: Page): Promise<Array<{ id: string; impact: string }>> {
  if (!(await page.evaluate(() => 'axe' in window))) await page.addScriptTag({ path: createRequire(import.meta.url).resolve('axe-core/axe.min.js') });
  const violations = await page.evaluate(async () => {
    const results = await (window as unknown as { axe: { run: (context: unknown) => Promise<{ violations: Array<{ id: string; impact: string }> }> } }).axe.run(document);
    return results.violations.map((v) => ({ id: v.id, impact: v.impact }));
  });
  return violations.filter((v) => v.impact === 'serious' || v.impact === 'critical');
}
