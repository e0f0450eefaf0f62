// The widget's split route in Chromium (./host.ts's page, on API version 2, at 1,000,000 CC, where
// the sandbox's quote splits the amount across two executable venues): the route as the quote
// states it, the plan of its legs, and its execution by the host to COMPLETED, PARTIALLY_COMPLETED
// (one leg's venue made to return its deposit), and, for a wallet whose participant cannot batch
// the legs, the plan made again on the best venue alone; a split_changed refusal re-quotes. Without
// Chromium the tests are skipped with a loud notice, unless REQUIRE_CHROMIUM=1 makes that a failure.
import { mkdirSync } from 'node:fs';
import path from 'node:path';
import t from 'tap';
import Ajv2020 from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { Decimal } from 'decimal.js';
import type { Page } from 'playwright-core';
import { COMPONENTS_ID, rehome } from '../../../codegen/compile-validators.js';
import { repoRoot } from '../../../handlers/app.js';
import type { TestApp } from '../../helpers/app.js';
import { chromiumSkip } from '../../helpers/chromium.js';
import { specDocument, V2_SPEC_PATH } from '../../helpers/spec.js';
import { axeFindings, fileBrowser, setupHost, untilStatus, widgetText, type HostOptions } from './host.js';

const SCREENSHOTS = path.join(repoRoot(), 'dist', 'screenshots');
const AMOUNT = '1000000';
/** What the party is given before it plans: the whole amount, and more. */
const FUND = '1100000';

/** The widget's rules, read from the package as built (test/sdk/widget/rules.test.ts checks their words). */
const rules = (await import(new URL('./widget/rules.js', import.meta.resolve('@bestex/sdk')).href)) as {
  venueName(venueId: string): string;
  edgeWords(bps: number): string;
  batchingFallback(venueId: string): string;
  SPLIT_SETTLEMENT: string;
};

interface SplitQuote {
  legs: Array<{ venueId: string; amount: string; net: string }>;
  net: string;
  edgeBps: number;
}
interface Quote {
  best: { venueId: string; net: string } | null;
  bestExecutable: { venueId: string; net: string } | null;
  split?: SplitQuote;
}
interface SplitPlan {
  planId: string;
  idempotencyKey: string;
  split: { net: string; minReceive: string; edgeBps: number; bestExecutable: { venueId: string; net: string }; legs: Array<{ venueId: string; amount: string; net: string; minReceive: string }> };
  steps: Array<{ kind: string }>;
}
interface Leg {
  index: number;
  venueId: string;
  amount: string;
  status: string;
  received: string | null;
}
interface Result {
  status: string;
  received: string | null;
  depositUpdateId: string | null;
  /** The error's code (an Error's own fields do not cross from the page). */
  errorCode: string | null;
  legs?: Leg[];
}

/** A validator of one of v2's schemas, compiled from the spec itself. */
function v2Schema(name: string) {
  const spec = specDocument(V2_SPEC_PATH) as { components: { schemas: Record<string, unknown> } };
  const ajv = new Ajv2020.default({ strict: false, allErrors: true });
  addFormats.default(ajv, ['date-time', 'int32']);
  ajv.addSchema({ $id: COMPONENTS_ID, $defs: rehome(spec.components.schemas) });
  return ajv.compile({ $ref: `${COMPONENTS_ID}#/$defs/${name}` });
}

/** One of the sandbox ledger's own controls (its faucet, say). */
const sandboxPost = (app: TestApp, resource: string, body: unknown) =>
  fetch(new URL(resource, app.sandbox!.manifest.ledger), { method: 'POST', headers: { authorization: `Bearer ${app.sandbox!.ledgerToken}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });

const quoteOf = async (app: TestApp): Promise<Quote> => (await app.server.inject({ url: `/api/v2/quote?from=CC&to=USDCx&amount=${AMOUNT}` })).json<Quote>();

const plans = (page: Page) => page.evaluate(() => (window as unknown as { plans: Array<{ plan: unknown; quote: Quote }> }).plans);
const results = (page: Page) =>
  page.evaluate(() => (window as unknown as { results: Array<Omit<Result, 'errorCode'> & { error: { code: string } | null }> }).results.map(({ error, ...result }) => ({ ...result, errorCode: error?.code ?? null })));

await run(chromiumSkip('the widget split browser tests'));

async function run(skip: { skip?: string }): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const browser = fileBrowser();
  const options: HostOptions = { attributes: 'api-version="2"', amount: AMOUNT, v2Client: true };
  // OneSwap's intents read often, so the service's reading, which the SDK waits for, follows a leg closely.
  const env = { INTENT_POLL_INTERVAL_MS: '200' };
  const setup = (t: { teardown(fn: () => unknown): void }, more: Partial<HostOptions> = {}) => setupHost(browser, t, env, { ...options, ...more });

  /** The widget on screen with the split its quote states, and that quote's split. */
  async function splitShown(app: TestApp, page: Page): Promise<{ quote: Quote; split: SplitQuote }> {
    await widgetText(page, '[part=split]').waitFor();
    const quote = await quoteOf(app);
    if (!quote.split) throw new Error(`the sandbox's quote at ${AMOUNT} CC has no split`);
    return { quote, split: quote.split };
  }

  /**
   * Gives `party` the amount on the ledger (which hosts it there: OneSwap signs in only a party the
   * ledger knows), fills it in, presses Create plan, and waits for the `count`th plan the widget emits.
   */
  async function createPlan(app: TestApp, page: Page, party: string, count = 1): Promise<void> {
    const funded = await sandboxPost(app, '/sandbox/v1/fund', { party, token: 'CC', amount: FUND });
    if (funded.status !== 200) throw new Error(`the faucet refused: ${await funded.text()}`);
    await widgetText(page, '[name=party]').fill(party);
    await widgetText(page, '[name=party]').press('Enter');
    await page.waitForFunction((n) => (window as unknown as { plans: unknown[] }).plans.length >= n, count);
  }

  t.test('with api-version="2" at 1,000,000 CC "the split is shown as the route when it nets more than any venue alone": each leg\'s venue, what it is given and pays, the total and its edge over the best venue alone, the batch and the legs\' own settlement; the headline names it', skip, async (t) => {
    const { app, page } = await setup(t);
    const { quote, split } = await splitShown(app, page);
    const best = quote.bestExecutable!;
    t.equal(await widgetText(page, '[part=split] label').innerText(), `Split across ${split.legs.length} venues`);
    t.ok(await widgetText(page, 'input[name=venue][value=split]').isChecked(), 'the split is the route chosen');
    t.equal(await widgetText(page, 'tbody input[name=venue]:checked').count(), 0, 'no single venue is');
    t.strictSame(
      await widgetText(page, '[part=split-leg]').allInnerTexts(),
      split.legs.map((leg) => `${rules.venueName(leg.venueId)}: gives ${leg.amount} CC, pays ${leg.net} USDCx`),
      'each leg: its venue, what it is given and what it pays',
    );
    t.equal(await widgetText(page, '[part=split-total]').innerText(), `In all: ${split.net} USDCx, ${rules.edgeWords(split.edgeBps)} more than ${rules.venueName(best.venueId)} alone (${best.net} USDCx)`);
    t.match(await widgetText(page, '[part=split]').innerText(), rules.SPLIT_SETTLEMENT, 'one batch, each venue settling its own leg');
    t.match(await widgetText(page, '[part=best]').innerText(), new RegExp(`Best you can execute now: a split across ${split.legs.length} venues ${split.net.replace('.', '\\.')} USDCx`), 'the headline names the split as the best the person can execute');
    t.match(await widgetText(page, '[part=impact]').innerText(), /^Price impact: each venue is given only its leg/, 'the impact is the legs\', not one venue\'s for the whole amount');
    t.equal(await widgetText(page, '[part=impact-warning]').count(), 0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-split-quote.png'), fullPage: true });
    t.same(await axeFindings(page), [], 'axe-core finds nothing serious with the split on screen');
    // A single venue chosen instead: the split gives way, and the impact is that venue's.
    await widgetText(page, `input[name=venue][value=${best.venueId}]`).check();
    t.match(await widgetText(page, '[part=impact]').innerText(), new RegExp(`^Price impact on ${best.venueId}: `));
  });

  t.test('"a shown split is planned with the quote\'s legs" and its plan (v2\'s SplitPlan) names each leg\'s deposit, venue and floor; the host executes it through the sandbox wallet to COMPLETED, the total received shown and every leg paid', skip, async (t) => {
    const { app, page } = await setup(t);
    const { split } = await splitShown(app, page);
    const requests: unknown[] = [];
    page.on('request', (request) => void (new URL(request.url()).pathname === '/api/v2/execute/plan' && requests.push(request.postDataJSON())));
    await createPlan(app, page, `widget-split::1220${'a'.repeat(64)}`);
    const plan = (await plans(page))[0]!.plan as SplitPlan;
    const valid = v2Schema('SplitPlan');
    t.ok(valid(plan), JSON.stringify(valid.errors));
    t.match(requests[0], { amount: AMOUNT, legs: split.legs.map(({ venueId, amount }) => ({ venueId, amount })) }, 'the request named the quote\'s legs');
    t.notOk((requests[0] as { venueId?: string }).venueId, 'and no venue');
    t.strictSame(
      await widgetText(page, '[part=plan-leg]').allInnerTexts(),
      plan.split.legs.map((leg) => `deposit ${leg.amount} CC to ${rules.venueName(leg.venueId)}, which must pay at least ${leg.minReceive} USDCx`),
      'before signing, each leg\'s deposit, venue and floor',
    );
    const signFirst = plan.steps[0]!.kind === 'sign-message';
    t.match(await widgetText(page, '[part=plan]').innerText(), new RegExp(`^Plan ${plan.planId}: split across ${plan.split.legs.length} venues: ${signFirst ? "sign OneSwap's message in your wallet \\(it moves no funds\\), then " : ''}deposit each leg, all in one batch`));
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-split-plan.png'), fullPage: true });
    await untilStatus(page, 'COMPLETED', 60_000);
    const [result] = await results(page);
    t.equal(result!.status, 'COMPLETED');
    t.ok(new Decimal(result!.received!).gte(plan.split.minReceive), `received ${result!.received}, at least the legs' floors summed (${plan.split.minReceive})`);
    t.equal(await widgetText(page, '[part=status]').innerText(), `COMPLETED: received ${result!.received} USDCx in all, every leg paid`);
    t.strictSame(
      await widgetText(page, '[part=leg]').allInnerTexts(),
      result!.legs!.map((leg) => `${rules.venueName(leg.venueId)}: paid ${leg.received} USDCx for ${leg.amount} CC`),
      'each leg: what its venue paid',
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-split-completed.png'), fullPage: true });
  });

  t.test('"PARTIALLY_COMPLETED shows each leg\'s fate": the leg its venue returned says so and that its fees were not collected, the paid one what it paid', skip, async (t) => {
    const { app, page } = await setup(t);
    const { split } = await splitShown(app, page);
    if (!split.legs.some((leg) => leg.venueId === 'oneswap')) throw new Error('the sandbox\'s split has a OneSwap leg');
    // OneSwap's next intent ends slippage_failed, whatever its pool says: that leg's deposit is returned.
    const forced = await sandboxPost(app, '/sandbox/v1/oneswap/next-outcome', { status: 'slippage_failed' });
    t.equal(forced.status, 200, await forced.text());
    await createPlan(app, page, `widget-partial::1220${'b'.repeat(64)}`);
    await untilStatus(page, 'PARTIALLY_COMPLETED', 60_000);
    const [result] = await results(page);
    t.equal(await widgetText(page, '[part=status]').innerText(), `PARTIALLY_COMPLETED: received ${result!.received} USDCx from the legs paid; the others were not, each leg as listed below`, 'what was received, and no more: each leg\'s fate is listed once');
    const said = await widgetText(page, '[part=leg]').allInnerTexts();
    t.strictSame(
      said,
      result!.legs!.map((leg) =>
        leg.venueId === 'oneswap'
          ? `OneSwap: returned: your ${leg.amount} CC came back to you, and its service fee was not collected`
          : `${rules.venueName(leg.venueId)}: paid ${leg.received} USDCx for ${leg.amount} CC`,
      ),
    );
    await page.screenshot({ path: path.join(SCREENSHOTS, 'widget-split-partial.png'), fullPage: true });
  });

  t.test('"a wallet that cannot batch the legs" (REFUSED batching_unavailable, nothing signed): the widget says why, plans the best venue alone under a new idempotency key, and the host executes that to COMPLETED', skip, async (t) => {
    const { app, page } = await setup(t, { sandbox: { batchingUtility: false } });
    await splitShown(app, page);
    await createPlan(app, page, `widget-nobatch::1220${'c'.repeat(64)}`, 2);
    const [first, second] = await plans(page);
    const split = first!.plan as SplitPlan;
    const alone = second!.plan as { idempotencyKey: string; quoteRef: { venueId: string } };
    t.ok(v2Schema('ExecutionPlan')(alone), 'the second plan is a single-venue plan');
    t.equal(alone.quoteRef.venueId, split.split.bestExecutable.venueId, `on ${split.split.bestExecutable.venueId}, the venue the split beat`);
    t.not(alone.idempotencyKey, split.idempotencyKey, 'under a new idempotency key');
    t.match(await widgetText(page, '[part=plan]').innerText(), new RegExp(`^${rules.batchingFallback(split.split.bestExecutable.venueId).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\s+Plan \\S+: `), 'the person is told why, above the new plan');
    await untilStatus(page, 'COMPLETED', 60_000);
    const [refused, completed] = await results(page);
    t.match(refused, { status: 'REFUSED', errorCode: 'batching_unavailable' }, 'the split was refused by the SDK');
    t.equal(completed!.status, 'COMPLETED');
    t.equal(await widgetText(page, '[part=legs]').isHidden(), true, 'a single-venue plan has no legs to show');
  });

  t.test('"a 409 split_changed re-quotes and shows the new route", in words, and makes no plan', skip, async (t) => {
    const { app, page } = await setup(t);
    await splitShown(app, page);
    await page.route('**/api/v2/execute/plan', async (route) => {
      // The service's own answer's headers (its CORS and API version), with the refusal in its place.
      const response = await route.fetch();
      await route.fulfill({
        response,
        status: 409,
        contentType: 'application/json',
        body: JSON.stringify({ error: 'the split no longer holds: nothing was created: re-quote', code: 'split_changed', action: "re-quote and plan the quote's split, or its bestExecutable venue" }),
      });
    });
    await widgetText(page, '[name=party]').fill(`widget-changed::1220${'d'.repeat(64)}`);
    // The quote asked after the refusal, answered: the split shown until then is the earlier quote's.
    const requoted = page.waitForResponse((response) => new URL(response.url()).pathname === '/api/v2/quote', { timeout: 60_000 });
    await widgetText(page, '[name=party]').press('Enter');
    await page.waitForFunction(() => /The split changed/.test(document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=error]')!.textContent ?? ''));
    t.equal(await widgetText(page, '[part=error]').innerText(), 'The split changed since it was quoted: quoting again, to show the route as it is now.');
    t.equal((await requoted).status(), 200, 'it quoted again');
    await page.waitForFunction(() => document.querySelector('bestex-swap')!.shadowRoot!.querySelector('[part=split]') !== null);
    t.equal((await plans(page)).length, 0, 'no plan was made');
  });
}
