// The key portal's Trades section in a real browser (Debian's Chromium driven by playwright-core,
// against the real service on its sandbox), for a key that made v2 plans, one of them executed to
// completion through the SDK: "the page shows exactly the figures the API answers" - the chart's
// table, each venue's success, the slippage, the fees and the swaps (with More following the
// cursor, and a state filter) held to the API's own answers fetched with the same key; "the CSV
// downloaded is the export, and parses back to the API's list"; days refused before they are
// sent, in words; no axe-core violation of any impact; the key in no URL; the page under its
// CSP throughout. Skipped without Chromium, as test/portal/browser.test.ts is.
import { Decimal } from 'decimal.js';
import t from 'tap';
import type { Browser, Page } from 'playwright-core';
import { createClientV2, execute } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import type * as Portal from '../../core/contract/portal.js';
import { COLLECTING, listen, testApp } from '../helpers/app.js';
import { chromiumSkip, launchChromium } from '../helpers/chromium.js';
import { axeViolations } from '../helpers/axe.js';
import { csvRecords, expectedCsvRecord } from '../helpers/csv.js';
import { issueKey } from '../helpers/keys.js';

/** Plans made beyond the executed one: more than the page lists at first (20), so More has a page to follow. */
const PLANNED = 21;

const skip = chromiumSkip('the portal trades browser test');
let launched: Promise<Browser> | undefined;
t.teardown(async () => {
  await (await launched)?.close();
});

type Tap = Pick<typeof t, 'strictSame'>;

/** "axe-clean": no axe-core violation of any impact on the view as it is now. */
async function axeClean(t: Tap, page: Page, view: string): Promise<void> {
  t.strictSame(await axeViolations(page), [], `axe: no violation (${view})`);
}

/** Presses Tab until the focused element matches `selector`, as a keyboard user would. */
async function tabTo(page: Page, selector: string): Promise<void> {
  for (let presses = 0; presses < 120; presses++) {
    await page.keyboard.press('Tab');
    if (await page.evaluate((s) => document.activeElement?.matches(s) ?? false, selector)) return;
  }
  throw new Error(`Tab never reached ${selector}`);
}

/** Each row's cells' text, header cell first: what a screen reader reads of the table. */
const tableRows = (page: Page, selector: string) =>
  page.$$eval(selector, (rows) => rows.map((row) => [...(row as HTMLTableRowElement).cells].map((cell) => cell.innerText.trim())));

const canonical = (d: Decimal) => d.toFixed();
const none = (value: string | null, suffix = '') => (value === null ? '–' : `${value}${suffix}`);
const utc = (iso: string) => `${iso.slice(0, 19).replace('T', ' ')} UTC`;

t.test('"the page shows exactly the figures the API answers": a key\'s plans, one completed, as charts\' table, venues, slippage, fees and swaps with More; the CSV downloaded parses back to the API\'s list; axe-clean; the key in no URL', skip, async (t) => {
  const app = await testApp({ env: { ...COLLECTING, QUOTE_CACHE_TTL_MS: '1', PLAN_STATUS_POLL_MS: '50' } });
  t.teardown(app.close);
  const service = await listen(app.server);
  const { key } = await issueKey(app.core.keyStore, { name: 'Trades Wallet' });
  const sandbox = app.sandbox!;

  // One plan executed to completion through the SDK, as a partner's wallet does.
  const client = createClientV2({ baseUrl: service, apiKey: key });
  const party = `trades-taker::1220${'7'.repeat(64)}`;
  const provider = sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party });
  await provider.request({ method: 'ledgerApi', params: { requestMethod: 'post', resource: '/sandbox/v1/fund', body: { party, token: 'CC', amount: '100' } } });
  const plan = await client.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: 'trades-executed' });
  const result = await execute(plan as Parameters<typeof execute>[0], { provider, client });
  t.equal(result.status, 'COMPLETED', 'the executed plan completed');
  // Plans only planned, some with an integrator fee, so fees of both kinds are disclosed.
  for (let i = 0; i < PLANNED; i++) {
    const response = await fetch(`${service}/api/v2/execute/plan`, {
      method: 'POST',
      headers: { 'x-api-key': key, 'content-type': 'application/json' },
      body: JSON.stringify({
        from: 'CC',
        to: 'USDCx',
        amount: String(10 + i),
        venueId: 'tradecraft',
        takerParty: `trades-planned-${i}::1220${'8'.repeat(64)}`,
        idempotencyKey: `trades-planned-${i}`,
        ...(i % 2 === 0 ? { feeBps: 5, feeRecipient: `wallet-co::1220${'a'.repeat(64)}` } : {}),
      }),
    });
    t.equal(response.status, 200, `plan ${i} made`);
  }

  const api = async <T>(path: string): Promise<T> => {
    const response = await fetch(`${service}${path}`, { headers: { 'x-api-key': key } });
    if (!response.ok) throw new Error(`${path}: ${response.status} ${await response.text()}`);
    return (response.headers.get('content-type') ?? '').startsWith('text/csv') ? ((await response.text()) as T) : ((await response.json()) as T);
  };
  // The ledger follows the plan's status to its outcome: the test waits for it, not for a time.
  for (;;) {
    const { trades } = await api<Portal.TradePage>(`/portal/api/key/trades?status=completed`);
    if (trades.length === 1) break;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }

  const context = await (await (launched ??= launchChromium())).newContext({ acceptDownloads: true });
  t.teardown(() => context.close());
  const page = await context.newPage();
  const requested: string[] = [];
  page.on('request', (request) => requested.push(request.url()));
  const refused: string[] = [];
  page.on('console', (message) => {
    if (message.type() === 'error' && /Content Security Policy|Refused to/i.test(message.text())) refused.push(message.text());
  });
  await page.goto(`${service}/portal`);
  await tabTo(page, '#sign-in-key');
  await page.keyboard.type(key);
  await page.keyboard.press('Enter');
  await page.locator('#trades-list table').waitFor();

  const summary = await api<Portal.TradeSummary>('/portal/api/key/trades/summary');
  const range = `from=${summary.from}&to=${summary.to}`;
  t.strictSame([await page.inputValue('#trades-from'), await page.inputValue('#trades-to')], [summary.from, summary.to], 'the days shown are the service\'s default days');
  t.equal(summary.plans, PLANNED + 1);
  t.equal(summary.completed, 1);

  // The charts: one image each, named with the totals; a bar group for every day of the range.
  const charts = page.locator('#trades-activity svg[role=img]');
  const label = (await charts.first().getAttribute('aria-label')) ?? '';
  t.match(label, `${summary.plans} plans, ${summary.completed} completed`, 'the counts chart says the totals in its name');
  const rangeDays = (Date.parse(summary.to) - Date.parse(summary.from)) / 86_400_000 + 1;
  t.equal(await charts.first().locator('rect').count(), 2 * rangeDays, 'two bars (plans, completed) for every UTC day of the range');
  const head = (await tableRows(page, '#trades-activity table thead tr'))[0]!;
  const volume = head.slice(3).map((name) => /^(Given|Received) \((\w+)\)$/.exec(name)!);
  t.strictSame(
    volume.map((m) => `${m[1]} ${m[2]}`).sort(),
    summary.days.flatMap((d) => [...d.given.map((a) => `Given ${a.token}`), ...d.received.map((a) => `Received ${a.token}`)]).filter((v, i, all) => all.indexOf(v) === i).sort(),
    'a volume column for each token the days were given or received',
  );
  t.ok(volume.length > 0, 'the completed plan has volume');
  t.equal(await charts.count(), 1 + new Set(volume.map((m) => m[2])).size, 'and a volume chart for each token');
  const amountOf = (day: Portal.TradeDay, m: RegExpExecArray) => (m[1] === 'Given' ? day.given : day.received).find((a) => a.token === m[2])?.amount ?? '0';
  t.strictSame(
    await tableRows(page, '#trades-activity table tbody tr'),
    summary.days.map((d) => [d.date, String(d.plans), String(d.completed), ...volume.map((m) => amountOf(d, m))]),
    'the chart\'s table: each day\'s plans, completed and volume as the API answers them',
  );
  t.strictSame(
    await tableRows(page, '#trades-activity table tfoot tr'),
    [['All days', String(summary.plans), String(summary.completed), ...volume.map((m) => canonical(summary.days.reduce((s, d) => s.plus(amountOf(d, m)), new Decimal(0))))]],
    'and their totals',
  );

  const rate = (r: string | null) => (r === null ? '– (none ended)' : `${new Decimal(r).times(100).toFixed()}%`);
  t.strictSame(
    await tableRows(page, '#trades-venues tbody tr'),
    summary.venues.map((v) => [v.venueId, String(v.legs), String(v.ended), String(v.completed), rate(v.successRate)]),
    'each venue\'s legs, ended, completed and success rate',
  );
  t.ok(summary.venues.some((v) => v.completed === 1 && v.successRate === '1'), 'the completed leg counts as a success');

  const bps = (value: string | null) => (value === null ? '– (none paid)' : `${value} bps`);
  t.strictSame(
    await page.$$eval('#trades-slippage dd', (dds) => dds.map((dd) => dd.textContent)),
    [String(summary.slippage.paid), bps(summary.slippage.averageBps), bps(summary.slippage.worstBps), String(summary.slippage.belowFloor)],
    'the slippage: paid, average, worst, below the floor',
  );
  t.equal(summary.slippage.paid, 1);

  t.strictSame(
    await tableRows(page, '#trades-fees tbody tr'),
    summary.fees.map((f) => [f.token, f.disclosed.service, f.disclosed.integrator, f.collected.service, f.collected.integrator]),
    'the fees disclosed and collected per token',
  );
  t.ok(summary.fees.some((f) => f.disclosed.integrator !== '0'), 'an integrator fee was disclosed');

  // The swaps: the API's first page, then every page after More.
  const swapCells = (trade: Portal.Trade) => [
    `${utc(trade.createdAt)}\n${trade.planId}`,
    trade.state.replaceAll('_', ' '),
    `${trade.pair.give} to ${trade.pair.want}`,
    `${trade.amount} ${trade.pair.give}`,
    none(trade.received, ` ${trade.pair.want}`),
    none(trade.slippageBps, ' bps'),
    trade.legs.map((l) => l.venueId).join(', '),
    trade.legs.flatMap((l) => (l.settlementUpdateId === null ? [] : [l.settlementUpdateId])).join('\n') || '–',
    `Disclosed ${trade.fees.disclosed.service} + ${trade.fees.disclosed.integrator} ${trade.fees.token}\nCollected ${trade.fees.collected.service} + ${trade.fees.collected.integrator} ${trade.fees.token}`,
  ];
  const first = await api<Portal.TradePage>(`/portal/api/key/trades?${range}&limit=20`);
  t.strictSame(await tableRows(page, '#trades-list tbody tr'), first.trades.map(swapCells), 'the latest swaps, each as the API answers it');
  t.not(first.nextCursor, null, 'more than a page');
  const all: Portal.Trade[] = [...first.trades];
  for (let cursor = first.nextCursor; cursor !== null; ) {
    const next = await api<Portal.TradePage>(`/portal/api/key/trades?${range}&limit=20&cursor=${cursor}`);
    all.push(...next.trades);
    cursor = next.nextCursor;
  }
  const executed = all.find((trade) => trade.planId === plan.planId)!;
  t.equal(executed.state, 'completed');
  t.equal(executed.received, result.received, 'received: what the wallet received');
  await axeClean(t, page, 'the trades of the default days');

  await tabTo(page, '#trades-more');
  await page.keyboard.press('Enter');
  await page.locator('#notice', { hasText: 'that is all of them' }).waitFor();
  t.strictSame(await tableRows(page, '#trades-list tbody tr'), all.map(swapCells), 'after More, every swap, in the API\'s order');
  t.ok(await page.locator('#trades-more').isHidden(), 'More is gone with the last page');
  await axeClean(t, page, 'every swap listed');

  await tabTo(page, '#trades-download');
  const [download] = await Promise.all([page.waitForEvent('download'), page.keyboard.press('Enter')]);
  t.equal(download.suggestedFilename(), `bestex-trades-${summary.from}-${summary.to}.csv`);
  let csv = '';
  for await (const chunk of (await download.createReadStream()) as AsyncIterable<Buffer>) csv += chunk.toString('utf8');
  t.equal(csv, await api<string>(`/portal/api/key/trades/export?${range}`), 'the file is the export, byte for byte');
  t.strictSame(csvRecords(csv), all.map(expectedCsvRecord), 'the CSV parses back to the API\'s list, row for row');

  // Days the service would refuse are refused before anything is sent, in words, the field to fix focused.
  await page.fill('#trades-from', summary.to);
  await page.fill('#trades-to', summary.from);
  const asked = requested.length;
  await tabTo(page, '#trades-form button[type=submit]');
  await page.keyboard.press('Enter');
  await page.locator('#trades-error', { hasText: `The first day (${summary.to}) is after the last (${summary.from}): swap them.` }).waitFor();
  t.ok(await page.evaluate(() => document.activeElement?.id === 'trades-from'), 'the focus is on the first day');
  t.equal(requested.length, asked, 'nothing was sent');
  await page.fill('#trades-from', summary.from);
  await page.fill('#trades-to', summary.to);

  // One state: the swaps and the CSV narrow to it, the sums do not.
  await tabTo(page, '#trades-status');
  await page.selectOption('#trades-status', 'completed');
  await tabTo(page, '#trades-form button[type=submit]');
  await page.keyboard.press('Enter');
  await page.locator('#trades-list caption', { hasText: 'completed only' }).waitFor();
  const completed = await api<Portal.TradePage>(`/portal/api/key/trades?${range}&status=completed&limit=20`);
  t.strictSame(await tableRows(page, '#trades-list tbody tr'), completed.trades.map(swapCells), 'only the completed swap, as the API lists it');

  t.notOk(requested.some((url) => url.includes(key)), 'the key is in no URL the page asked for');
  await page.getByRole('button', { name: 'Sign out' }).click();
  t.equal(await page.locator('#trades-list').innerHTML(), '', 'signed out, no trade is left on the page');
  t.strictSame(refused, [], 'the page ran under its CSP without a refusal');
});
