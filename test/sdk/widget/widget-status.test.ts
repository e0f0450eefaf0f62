// The service's status of a plan in the widget, in Chromium (./host.ts's page, API version 2): once
// the wallet's batch is on the ledger the widget follows the plan's status events (the SDK's
// watch, with the widget's key) and shows them beside the SDK's own tracking; when the two end
// differently it keeps the wallet's view and says so quietly; a service that cannot give a reading
// is said so quietly too, and one that does not serve plan statuses (501) says nothing. The
// service's event stream is the real service's in one test, and played by the page's network
// (Playwright's route) in the others, the rest of the swap by the real service and the sandbox. Without Chromium the tests are skipped with a loud
// notice, unless REQUIRE_CHROMIUM=1 makes that a failure.
import t from 'tap';
import type { Page, Route } from 'playwright-core';
import type { V2 } from '@bestex/sdk';
import { chromiumSkip } from '../../helpers/chromium.js';
import { sse, statusEvent } from '../../helpers/plan-status.js';
import { fileBrowser, setupHost, untilStatus, widgetText, type Hosted } from './host.js';

const skip = chromiumSkip('the widget\'s plan status tests');

if (!skip.skip) {
  const browser = fileBrowser();

  interface Stream {
    readonly query: URLSearchParams;
    readonly headers: Record<string, string>;
  }

  /** A host page on v2 whose service's plan event stream is `answer`'s; every stream the widget opened. */
  async function hosted(t: { teardown(fn: () => unknown): void }, answer: (route: Route, planId: string) => Promise<void>): Promise<Hosted & { streams: Stream[] }> {
    const host = await setupHost(browser, t, {}, { attributes: 'api-version="2"' });
    const streams: Stream[] = [];
    await host.page.route(
      (url) => url.pathname === '/api/v2/plan/events',
      async (route) => {
        // A preflight (the key's header) is the service's own to answer.
        if (route.request().method() !== 'GET') return route.fallback();
        const query = new URL(route.request().url()).searchParams;
        streams.push({ query, headers: await route.request().allHeaders() });
        await answer(route, query.get('planId')!);
      },
    );
    return { ...host, streams };
  }

  /** The service's event stream of `events`, as it opens and ends. */
  const stream = (route: Route, events: readonly V2.PlanStatusEvent[], retryMs = 2000) =>
    route.fulfill({
      status: 200,
      headers: { 'content-type': 'text/event-stream', 'x-service-api-version': '2', 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-service-api-version' },
      body: `retry: ${retryMs}\n\n${events.map(sse).join('')}`,
    });

  /** Plans 100 CC for a new party and lets the host execute it (on the best executable venue: tradecraft). */
  async function swap(page: Page, taker: string): Promise<void> {
    await widgetText(page, 'tbody tr').first().waitFor();
    await widgetText(page, '[name=party]').fill(`${taker}::1220${'6'.repeat(64)}`);
    await widgetText(page, '[name=party]').press('Enter');
  }

  const serviceLine = (page: Page) => widgetText(page, '[part=service]');
  const untilService = (page: Page, check: string) =>
    page.waitForFunction((expected) => {
      const line = document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=service]')!;
      return !line.hasAttribute('hidden') && `${line.getAttribute('data-state')}/${line.getAttribute('data-agrees')}` === expected;
    }, check, { timeout: 20_000 });

  t.test('"the service\'s status is shown beside the wallet\'s own; when they disagree the widget trusts the wallet\'s view and says so quietly": the service reads slippage failed, the wallet completed', skip, async (t) => {
    const { page, streams, key } = await hosted(t, (route, planId) => stream(route, [1, 2, 3].map((seq) => statusEvent(planId, ['planned', 'deposit_seen', 'slippage_failed'], seq))));
    await swap(page, 'widget-status-differs');
    await untilStatus(page, 'COMPLETED');
    await untilService(page, 'slippage_failed/false');
    const result = await page.evaluate(() => (window as unknown as { result: { status: string; planId: string; received: string } }).result);
    t.equal(result.status, 'COMPLETED', 'the wallet\'s own view');
    t.match(await widgetText(page, '[part=status]').innerText(), /^COMPLETED: received /, 'the status line is the wallet\'s');
    t.equal(
      await serviceLine(page).innerText(),
      "The service reads: slippage failed, the deposit returned. This differs from your wallet's own view (COMPLETED), which is what happened.",
    );
    t.strictSame(
      await serviceLine(page).evaluate((line) => [line.getAttribute('aria-live'), line.getAttribute('role'), line.closest('[aria-live]')]),
      [null, null, null],
      'quietly: the service\'s line is no live region, the status line says what happened',
    );
    t.equal(streams.length, 1, 'one stream');
    t.equal(streams[0]!.query.get('planId'), result.planId, 'of the plan executed');
    t.equal(streams[0]!.headers['x-api-key'], key, 'a keyed plan: read with the widget\'s key');
    t.equal(streams[0]!.query.get('token'), null, 'no token: the plan is keyed');
  });

  t.test('"the service\'s status as it changes", agreeing with the wallet: deposit seen while the wallet waits, then, on a stream opened again from the last event held, completed with what was received', skip, async (t) => {
    const states: V2.PlanState[] = ['planned', 'deposit_seen', 'completed'];
    let opened = 0;
    const { page, app, streams } = await hosted(t, async (route, planId) => {
      opened += 1;
      // The first stream ends after deposit seen, as a dropped connection does.
      if (opened === 1) return stream(route, [1, 2].map((seq) => statusEvent(planId, states, seq)), 50);
      // The service is behind the wallet here: its terminal event comes once the wallet has its result.
      await page.waitForFunction(() => 'result' in window, undefined, { timeout: 20_000 });
      const received = await page.evaluate(() => (window as unknown as { result: { received: string } }).result.received);
      await stream(route, [statusEvent(planId, states, 3, { received })]);
    });
    // The pool waits until the wallet's INITIATED is on screen.
    app.sandbox!.ledger.setOperatorPaused(true);
    await swap(page, 'widget-status-agrees');
    await untilStatus(page, 'INITIATED');
    await untilService(page, 'deposit_seen/null');
    t.equal(await serviceLine(page).innerText(), 'The service reads: deposit seen, waiting for the venue.');
    app.sandbox!.ledger.setOperatorPaused(false);
    await untilStatus(page, 'COMPLETED');
    await untilService(page, 'completed/true');
    const received = await page.evaluate(() => (window as unknown as { result: { received: string } }).result.received);
    t.equal(await serviceLine(page).innerText(), `The service reads: completed, ${received} USDCx received.`, 'no word of a difference');
    t.equal(streams.length, 2);
    t.equal(streams[1]!.query.get('lastEventId'), '2', 'opened again from the last event held');
  });

  t.test('"the service\'s status beside the wallet\'s own", from the real service across origins (its key\'s preflight, its stream\'s CORS): deposit seen while the pool waits, then completed, agreeing', skip, async (t) => {
    const { page, app } = await setupHost(browser, t, { PLAN_STATUS_POLL_MS: '50' }, { attributes: 'api-version="2"' });
    app.sandbox!.ledger.setOperatorPaused(true);
    await swap(page, 'widget-status-service');
    await untilStatus(page, 'INITIATED');
    await untilService(page, 'deposit_seen/null');
    app.sandbox!.ledger.setOperatorPaused(false);
    await untilStatus(page, 'COMPLETED');
    await untilService(page, 'completed/true');
    const result = await page.evaluate(() => (window as unknown as { result: { received: string } }).result);
    t.equal(await serviceLine(page).innerText(), `The service reads: completed, ${result.received} USDCx received.`);
  });

  t.test('a service that cannot give the plan\'s status is said so quietly (404), one that does not serve plan statuses (501) says nothing', skip, async (t) => {
    const refusal = (status: number, code: string) => (route: Route) =>
      route.fulfill({
        status,
        headers: { 'content-type': 'application/json', 'x-service-api-version': '2', 'access-control-allow-origin': '*', 'access-control-expose-headers': 'x-service-api-version' },
        body: JSON.stringify({ error: `${code} answered`, code, action: 'none' }),
      });
    const missing = await hosted(t, refusal(404, 'plan_not_found'));
    await swap(missing.page, 'widget-status-missing');
    await untilStatus(missing.page, 'COMPLETED');
    await missing.page.waitForFunction(() => !document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=service]')!.hasAttribute('hidden'));
    t.equal(await serviceLine(missing.page).innerText(), "The service's own status of this plan is not available (plan_not_found answered); your wallet's view above is what counts.");
    const unserved = await hosted(t, refusal(501, 'not_implemented'));
    await swap(unserved.page, 'widget-status-unserved');
    await untilStatus(unserved.page, 'COMPLETED');
    await unserved.page.waitForFunction(() => (window as unknown as { results: unknown[] }).results.length === 1);
    // The widget asks for the stream as the execution ends: its request may reach the server a moment after the result.
    for (let i = 0; i < 400 && unserved.streams.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 25));
    t.equal(unserved.streams.length, 1, 'the stream was asked for');
    t.equal(await serviceLine(unserved.page).isHidden(), true, 'and nothing said of it');
  });
}
