// A partner's trade ledger as the portal answers it: plans of each outcome made through the SDK
// and executed by the sandbox wallet appear with what each became on the ledger (matching the plan
// status and GET /api/v2/outcome), their figures recomputable from each other; the summary sums
// exactly those rows, the CSV parses back to them, pages and filters show each once; the ledger is
// the key record's (kept across a rotation, never another key's) and never names the taker.
import t from 'tap';
import { createClientV2, execute, type V2 } from '@bestex/sdk';
import { sandboxProvider } from '@bestex/sdk/sandbox';
import { Decimal } from '../../../core/decimal.js';
import type { Trade, TradePage, TradeSummary } from '../../../core/contract/portal.js';
import type { PlanStatus } from '../../../core/contract/v2.js';
import { COLLECTING, listen, testApp } from '../../helpers/app.js';
import { csvRecords, expectedCsvRecord } from '../../helpers/csv.js';
import { issueKey } from '../../helpers/keys.js';
import { fund, movedBeforePrepare, sandboxControl } from '../../helpers/sandbox.js';

let takers = 0;
let clockShiftMs = 0;
const app = await testApp({
  env: { ...COLLECTING, QUOTE_CACHE_TTL_MS: '1', INTENT_POLL_INTERVAL_MS: '200', PLAN_STATUS_POLL_MS: '50' },
  overrides: { now: () => new Date(Date.now() + clockShiftMs) },
});
t.teardown(app.close);
const base = await listen(app.server);
const { key } = await issueKey(app.core.keyStore, { name: 'ledger partner' });
const keyed = createClientV2({ baseUrl: base, apiKey: key });
const sandbox = app.sandbox!;

const control = (resource: string, body: unknown) => sandboxControl(sandbox, resource, body);

async function taker(amount: string) {
  const party = `ledger-${++takers}::1220${'6'.repeat(64)}`;
  // The fee legs are paid in the want token, in the same batch as the deposit.
  await fund(sandbox, party, { CC: amount, USDCx: '1000' });
  return { party, provider: sandboxProvider({ ledgerUrl: sandbox.manifest.ledger, token: sandbox.ledgerToken, party }) };
}

async function terminal(planId: string): Promise<PlanStatus> {
  for (let i = 0; i < 600; i++) {
    const answer = await fetch(`${base}/api/v2/plan/status?planId=${planId}`, { headers: { 'x-api-key': key } });
    const body = (await answer.json()) as PlanStatus;
    if (answer.status === 200 && body.terminal) return body;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the plan never reached a terminal state');
}

async function portal<T>(path: string, withKey = key): Promise<{ status: number; body: T; text: string; headers: Headers }> {
  const response = await fetch(`${base}/portal/api/key/${path}`, { headers: { 'x-api-key': withKey } });
  const text = await response.text();
  return { status: response.status, text, headers: response.headers, body: (response.headers.get('content-type')?.startsWith('application/json') ? JSON.parse(text) : text) as T };
}

const sum = (values: ReadonlyArray<string | null>): Decimal => values.reduce<Decimal>((s, v) => (v === null ? s : s.plus(v)), new Decimal(0));
const wire = (x: Decimal): string => (x.isZero() ? '0' : x.toFixed());

// The plans, one of each outcome, made before the tests read them.
const made: Array<{ plan: V2.ExecutionPlan | V2.SplitPlan; status: PlanStatus; party: string; outcome?: V2.Outcome }> = [];

/** /api/v2/outcome of a single-venue plan, asked as its status ends (an expired plan's while the clock is past its deadline). */
const outcomeOf = (plan: V2.ExecutionPlan, party: string, since: string) => keyed.outcome({ party, since, deadline: plan.expiry });

t.before(async () => {
  {
    const { party, provider } = await taker('100');
    const since = new Date().toISOString();
    const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-done` })) as V2.ExecutionPlan;
    if ((await execute(plan, { provider, client: keyed })).status !== 'COMPLETED') throw new Error('not completed');
    made.push({ plan, status: await terminal(plan.planId), party, outcome: await outcomeOf(plan, party, since) });
  }
  {
    const { party, provider } = await taker('100');
    const since = new Date().toISOString();
    const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-slip` })) as V2.ExecutionPlan;
    await control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 });
    try {
      if ((await execute(plan, { provider, client: keyed })).status !== 'SLIPPAGE_FAILED') throw new Error('not slippage failed');
    } finally {
      await control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: 300 });
    }
    made.push({ plan, status: await terminal(plan.planId), party, outcome: await outcomeOf(plan, party, since) });
  }
  {
    const { party } = await taker('100');
    const since = new Date().toISOString();
    const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount: '50', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-exp` })) as V2.ExecutionPlan;
    clockShiftMs = 91_000 + 61_000;
    try {
      made.push({ plan, status: await terminal(plan.planId), party, outcome: await outcomeOf(plan, party, since) });
    } finally {
      clockShiftMs = 0;
    }
  }
  {
    const amount = '1000000';
    const { party, provider } = await taker(amount);
    const quote = await keyed.quote({ from: 'CC', to: 'USDCx', amount });
    const legs = quote.split!.legs.map(({ venueId, amount }) => ({ venueId, amount }));
    const plan = (await keyed.plan({ from: 'CC', to: 'USDCx', amount, legs, takerParty: party, idempotencyKey: `${party}-split` })) as V2.SplitPlan;
    const wallet = movedBeforePrepare(provider, () => control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: -300 }));
    try {
      if ((await execute(plan, { provider: wallet, client: keyed })).status !== 'PARTIALLY_COMPLETED') throw new Error('not partially completed');
    } finally {
      await control('/sandbox/v1/move', { pair: 'CC/USDCx', bps: 300 });
    }
    made.push({ plan, status: await terminal(plan.planId), party });
  }
});

const rows = async (): Promise<Trade[]> => (await portal<TradePage>('trades?limit=200')).body.trades;

t.test('"each plan appears with what it became on the ledger, matching its status and /api/v2/outcome, its figures recomputable"', async (t) => {
  const listed = await rows();
  t.equal(listed.length, made.length, 'exactly the plans made with the key');
  t.strictSame(listed.map((r) => r.planId), [...made].reverse().map((m) => m.plan.planId), 'newest first');
  for (const { plan, status, party, outcome } of made) {
    const row = listed.find((r) => r.planId === plan.planId)!;
    const legs = 'split' in plan ? plan.split.legs : [{ ...plan.quoteRef }];
    t.equal(row.state, status.state, `${status.state}: the state its status reads`);
    t.ok(row.terminal);
    t.equal(row.received, status.received, `${status.state}: what it received, as its status says`);
    t.strictSame(
      row.legs.map((l) => [l.venueId, l.state, l.received, l.depositUpdateId, l.settlementUpdateId]),
      status.legs.map((l) => [l.venueId, l.state, l.received, l.depositUpdateId, l.settlementUpdateId]),
      `${status.state}: each leg's venue, state, payment and update ids`,
    );
    t.strictSame(row.legs.map((l) => l.net), legs.map((l) => l.net), 'each leg as quoted');
    t.equal(row.net, wire(sum(row.legs.map((l) => l.net))), 'net: the legs summed');
    t.equal(row.minReceive, wire(sum(row.legs.map((l) => l.minReceive))), 'minReceive: the legs summed');
    t.equal(row.received, row.legs.some((l) => l.received !== null) ? wire(sum(row.legs.map((l) => l.received))) : null, 'received: the paid legs summed');
    const paid = row.legs.filter((l) => l.received !== null);
    const expectedSlippage = paid.length === 0 ? null : sum(paid.map((l) => l.net)).minus(row.received!).times(10_000).div(sum(paid.map((l) => l.net))).toDecimalPlaces(2, Decimal.ROUND_CEIL);
    t.equal(row.slippageBps, expectedSlippage === null ? null : wire(expectedSlippage), 'slippage: of the paid legs, rounded up');
    t.strictSame(row.fees.disclosed, { service: wire(sum(legs.map((l) => l.clientFees.service.amount))), integrator: wire(sum(legs.map((l) => l.clientFees.integrator?.amount ?? '0'))) }, 'fees disclosed: the plan\'s lines');
    const paidLegs = legs.filter((_, i) => row.legs[i]!.received !== null);
    t.strictSame(row.fees.collected, { service: wire(sum(paidLegs.map((l) => l.clientFees.service.amount))), integrator: wire(sum(paidLegs.map((l) => l.clientFees.integrator?.amount ?? '0'))) }, "fees collected: the paid legs' lines");
    t.match(row.takerRef, /^tr_[A-Za-z0-9_-]{43}$/);
    t.notOk(JSON.stringify(row).includes(party), 'the row never names the taker');
    if (outcome) {
      // A plan expired unfunded made no deposit offer: the outcome finds none in its window.
      const expected = { completed: 'completed', slippage_failed: 'slippage_failed', expired: 'not_found' }[status.state as 'completed'];
      t.equal(outcome.status, expected, `/api/v2/outcome agrees: ${expected}`);
      if (row.legs[0]!.settlementUpdateId !== null) t.equal(outcome.depositUpdateId, row.legs[0]!.settlementUpdateId, 'the same settling update');
    }
  }
  t.ok(new Decimal(listed.find((r) => r.state === 'completed')!.fees.collected.service).gt(0), 'a completed plan collected its service fee');
  t.equal(listed.find((r) => r.state === 'slippage_failed')!.fees.collected.service, '0', 'a returned plan collected none');
});

t.test('"the summary sums exactly the listed rows: per day, per venue, slippage and fees"', async (t) => {
  const listed = await rows();
  const { body: summary } = await portal<TradeSummary>('trades/summary');
  t.equal(summary.plans, listed.length);
  t.equal(summary.completed, listed.filter((r) => r.legs.some((l) => l.received !== null)).length, 'completed: the plans with a paid leg');
  t.equal(summary.days.reduce((n, d) => n + d.plans, 0), listed.length, 'every plan on its day');
  const received = sum(listed.flatMap((r) => r.legs.map((l) => l.received)));
  t.equal(wire(sum(summary.days.flatMap((d) => d.received.map((r) => r.amount)))), wire(received), 'volume received: the paid legs');
  t.equal(wire(sum(summary.days.flatMap((d) => d.given.map((g) => g.amount)))), wire(sum(listed.flatMap((r) => r.legs.filter((l) => l.received !== null).map((l) => l.amount)))), 'volume given: the paid legs');
  for (const venue of summary.venues) {
    const legs = listed.flatMap((r) => r.legs.filter((l) => l.venueId === venue.venueId));
    t.equal(venue.legs, legs.length, `${venue.venueId}: its legs`);
    t.equal(venue.completed, legs.filter((l) => l.received !== null).length, `${venue.venueId}: its paid legs`);
    t.equal(venue.successRate, venue.ended === 0 ? null : wire(new Decimal(venue.completed).div(venue.ended).toDecimalPlaces(4, Decimal.ROUND_DOWN)));
  }
  const slipped = listed.filter((r) => r.slippageBps !== null).map((r) => new Decimal(r.slippageBps!));
  t.equal(summary.slippage.paid, slipped.length);
  t.equal(summary.slippage.worstBps, wire(Decimal.max(...slipped)));
  t.equal(summary.slippage.belowFloor, 0, 'no plan paid below its floor');
  t.strictSame(summary.fees, [
    {
      token: 'USDCx',
      disclosed: { service: wire(sum(listed.map((r) => r.fees.disclosed.service))), integrator: wire(sum(listed.map((r) => r.fees.disclosed.integrator))) },
      collected: { service: wire(sum(listed.map((r) => r.fees.collected.service))), integrator: wire(sum(listed.map((r) => r.fees.collected.integrator))) },
    },
  ]);
});

t.test('"the CSV parses back to the rows the API lists"', async (t) => {
  const listed = await rows();
  const csv = await portal<string>('trades/export');
  t.equal(csv.status, 200);
  t.match(csv.headers.get('content-type'), /^text\/csv/);
  t.match(csv.headers.get('content-disposition'), /^attachment; filename="bestex-trades-\d{4}-\d{2}-\d{2}-\d{4}-\d{2}-\d{2}\.csv"$/);
  const records = csvRecords(csv.text);
  t.strictSame(records, listed.map(expectedCsvRecord));
});

t.test('"pages follow nextCursor with each plan once; a status filter keeps only those states"', async (t) => {
  const listed = await rows();
  const seen: string[] = [];
  let cursor: string | null = null;
  do {
    const page: TradePage = (await portal<TradePage>(`trades?limit=1${cursor ? `&cursor=${cursor}` : ''}`)).body;
    t.ok(page.trades.length <= 1);
    seen.push(...page.trades.map((r) => r.planId));
    cursor = page.nextCursor;
  } while (cursor !== null);
  t.strictSame(seen, listed.map((r) => r.planId), 'every plan once, in order');
  const filtered = (await portal<TradePage>('trades?status=completed,partially_completed')).body.trades;
  t.strictSame(filtered.map((r) => r.planId), listed.filter((r) => r.state === 'completed' || r.state === 'partially_completed').map((r) => r.planId));
  t.equal((await portal('trades?status=done')).status, 400, 'a state that is none: 400');
  t.equal((await portal('trades?from=2026-02-30')).status, 400, 'a day that is none: 400');
  const past = (await portal<TradePage>('trades?from=2020-01-01&to=2020-01-31')).body;
  t.strictSame(past, { trades: [], nextCursor: null }, 'a range without plans: none');
});

t.test('"the ledger is the key record\'s: kept across a rotation, never another key\'s; the same taker reads differently to each key"', async (t) => {
  const listed = await rows();
  const { key: other } = await issueKey(app.core.keyStore, { name: 'another partner' });
  t.strictSame((await portal<TradePage>('trades', other)).body.trades, [], 'another key sees none');
  const { party } = made[0]!;
  const theirs = (await createClientV2({ baseUrl: base, apiKey: other }).plan({ from: 'CC', to: 'USDCx', amount: '100', venueId: 'tradecraft', takerParty: party, idempotencyKey: `${party}-other` })) as V2.ExecutionPlan;
  const [row] = (await portal<TradePage>('trades', other)).body.trades;
  t.equal(row!.planId, theirs.planId);
  t.not(row!.takerRef, listed.find((r) => r.planId === made[0]!.plan.planId)!.takerRef, "one taker, two keys: two takerRefs");
  const rotated = await fetch(`${base}/portal/api/key/rotate`, { method: 'POST', headers: { 'x-api-key': other } });
  t.equal(rotated.status, 200);
  const { key: newKey } = (await rotated.json()) as { key: string };
  t.strictSame((await portal<TradePage>('trades', newKey)).body.trades.map((r) => r.planId), [theirs.planId], 'the rotated key reads the same ledger');
});

t.test('"never log a taker\'s party": the ledger\'s reads leave none in the log', async (t) => {
  const text = JSON.stringify(app.logs());
  for (const { party } of made) t.notOk(text.includes(party), 'no taker party in the log');
});
