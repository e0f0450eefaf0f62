// The trade ledger's rules on their own: a row's figures from its status and terms (slippage of the
// paid legs rounded up, fees collected only for paid legs of a collecting plan), the summary's
// rounding, the CSV's quoting, the range's checks, and a row the store cannot take written again.
import t from 'tap';
import type { Trade } from '../../../core/contract/portal.js';
import { Decimal } from '../../../core/decimal.js';
import type { PlanStatus } from '../../../core/contract/v2.js';
import type { TrackedPlan } from '../../../core/plan-status/status.js';
import type { StoredTrade, TradeStore } from '../../../core/plan-status/trade-store.js';
import { CSV_HEADER, csvLines } from '../../../core/trades/csv.js';
import { TradeLedger } from '../../../core/trades/ledger.js';
import { rangeOf, statesOf } from '../../../core/trades/range.js';
import { TradeSums } from '../../../core/trades/summary.js';
import { slippageBps, tradeOf } from '../../../core/trades/trade.js';
import { parseCsv } from '../../helpers/csv.js';

const plan: TrackedPlan = {
  planId: `pl_${'S'.repeat(22)}`,
  partnerId: 'key_abc',
  takerHash: 'h',
  createdAtMs: Date.parse('2026-12-01T23:59:59.000Z'),
  expiryMs: Date.parse('2026-12-02T00:01:29.000Z'),
  pair: { give: 'Amulet', want: 'USDCx' },
  amount: '300',
  minReceive: '44.7',
  legs: [
    { leg: 0, venueId: 'tradecraft', amount: '100', minReceive: '14.9', basis: 'ledger', escrow: 'p::1', memo: 'm' },
    { leg: 1, venueId: 'cantex', amount: '200', minReceive: '29.8', basis: 'ledger', escrow: 'p::2', memo: 'm' },
  ],
  awaitingSignature: false,
  trade: {
    takerRef: `tr_${'x'.repeat(43)}`,
    collectsFees: true,
    legs: [
      { net: '15', serviceFee: '0.0075', integratorFee: '0.015' },
      { net: '30', serviceFee: '0.015', integratorFee: '0.03' },
    ],
  },
};

const status = (legs: Array<[PlanStatus['state'], string | null]>, state: PlanStatus['state'], terminal = true): PlanStatus => ({
  planId: plan.planId,
  state,
  terminal,
  seq: 3,
  updatedAt: '2026-12-02T00:00:10.000Z',
  expiry: new Date(plan.expiryMs).toISOString(),
  pair: plan.pair,
  amount: plan.amount,
  minReceive: plan.minReceive,
  received: legs.some(([, r]) => r !== null) ? legs.reduce((s, [, r]) => (r === null ? s : String(Number(s) + Number(r))), '0') : null,
  legs: plan.legs.map((leg, i) => ({ leg: leg.leg, venueId: leg.venueId, amount: leg.amount, minReceive: leg.minReceive, state: legs[i]![0], basis: 'ledger', depositUpdateId: 'aa', settlementUpdateId: legs[i]![1] === null ? null : 'bb', received: legs[i]![1] })),
  history: [],
});

t.test('"slippage is of the paid legs, rounded up to 2 places; a venue paying more reads negative"', async (t) => {
  const partial = tradeOf(plan, plan.trade!, status([['completed', '14.99'], ['slippage_failed', null]], 'partially_completed'));
  t.equal(partial.slippageBps, '6.67', '10000 x 0.01 / 15 = 6.666..., rounded up');
  t.equal(partial.received, '14.99');
  t.equal(partial.net, '45', 'net: every leg');
  t.strictSame(partial.fees.collected, { service: '0.0075', integrator: '0.015' }, "the paid leg's lines only");
  t.strictSame(partial.fees.disclosed, { service: '0.0225', integrator: '0.045' });
  t.equal(slippageBps(new Decimal('15'), new Decimal('15.03')), '-20', 'paid more than quoted: negative');
  const open = tradeOf(plan, plan.trade!, status([['deposit_seen', null], ['deposit_seen', null]], 'deposit_seen', false));
  t.equal(open.slippageBps, null, 'none before the plan ends');
  const paused = tradeOf(plan, { ...plan.trade!, collectsFees: false }, status([['completed', '15'], ['completed', '30']], 'completed'));
  t.strictSame(paused.fees.collected, { service: '0', integrator: '0' }, 'fees disclosed only: none collected');
  t.equal(paused.createdAt, '2026-12-01T23:59:59.000Z');
});

t.test('"the summary counts a plan on its UTC day, rounds success rates down and sums per token"', async (t) => {
  const rows: Trade[] = [
    tradeOf(plan, plan.trade!, status([['completed', '14.99'], ['slippage_failed', null]], 'partially_completed')),
    tradeOf({ ...plan, planId: `pl_${'T'.repeat(22)}`, createdAtMs: Date.parse('2026-12-02T00:00:00.000Z') }, plan.trade!, status([['completed', '15'], ['completed', '30']], 'completed')),
    tradeOf({ ...plan, planId: `pl_${'U'.repeat(22)}` }, plan.trade!, status([['expired', null], ['expired', null]], 'expired')),
  ];
  const sums = new TradeSums();
  rows.forEach((row) => sums.add(row));
  const summary = sums.summary(rangeOf({ from: '2026-12-01', to: '2026-12-02' }, 0));
  t.strictSame(summary.days.map((d) => [d.date, d.plans, d.completed]), [['2026-12-01', 2, 1], ['2026-12-02', 1, 1]], 'the second before midnight and midnight: two days');
  t.strictSame(summary.days[1]!.received, [{ token: 'USDCx', amount: '45' }]);
  t.strictSame(summary.days[0]!.given, [{ token: 'Amulet', amount: '100' }], 'given: the paid leg only');
  const tradecraft = summary.venues.find((v) => v.venueId === 'tradecraft')!;
  t.strictSame(tradecraft, { venueId: 'tradecraft', legs: 3, ended: 3, completed: 2, successRate: '0.6666' }, '2/3 rounded down');
  t.strictSame(summary.slippage, { paid: 2, averageBps: '3.34', worstBps: '6.67', belowFloor: 0 });
});

t.test('"the CSV quotes what must be quoted and reads back field for field"', async (t) => {
  const row = tradeOf(plan, plan.trade!, status([['completed', '14.99'], ['slippage_failed', null]], 'partially_completed'));
  const text = CSV_HEADER + csvLines([row, row]);
  t.ok(text.endsWith('\r\n'), 'CRLF line ends');
  const [header, first] = parseCsv(text);
  t.equal(header![0], 'planId');
  t.equal(first![header!.indexOf('venues')], 'tradecraft;cantex');
  t.equal(first![header!.indexOf('settlementUpdateIds')], 'bb;', 'a leg not settled: empty in its place');
  t.equal(parseCsv(CSV_HEADER + csvLines([{ ...row, planId: 'a,"b"' }]))[1]![0], 'a,"b"', 'a comma and quotes survive');
});

t.test('"a range is UTC days, at most 366 apart, of real dates; states are the plan\'s"', async (t) => {
  t.strictSame(rangeOf({}, Date.parse('2026-12-06T10:00:00Z')), { from: '2026-11-07', to: '2026-12-06', fromMs: Date.parse('2026-11-07T00:00:00Z'), toMs: Date.parse('2026-12-07T00:00:00Z') }, 'default: the last 30 days, today included');
  t.throws(() => rangeOf({ from: '2026-02-30' }, 0), /not a calendar day/);
  t.throws(() => rangeOf({ from: '2026-12-02', to: '2026-12-01' }, 0), /after to/);
  t.throws(() => rangeOf({ from: '2025-01-01', to: '2026-12-01' }, 0), /more than 366 days/);
  t.strictSame([...statesOf('completed,expired')!], ['completed', 'expired']);
  t.throws(() => statesOf('done'), /not a plan state/);
});

t.test('"a row the store cannot take is written again later, the newest of each plan, and the plan never fails for it"', async (t) => {
  const written: StoredTrade[] = [];
  let down = true;
  const store: TradeStore = {
    put: async (stored) => {
      if (down) throw new Error('unreachable');
      written.push(stored);
    },
    page: async () => [],
  };
  const warned: string[] = [];
  const ledger = new TradeLedger(store, () => new Date(), { info: () => {}, warn: (_f, m) => warned.push(m), error: () => {} }, 10);
  t.teardown(() => ledger.close());
  await ledger.record(plan, status([['deposit_seen', null], ['deposit_seen', null]], 'deposit_seen', false));
  await ledger.record(plan, status([['completed', '15'], ['completed', '30']], 'completed'));
  t.equal(warned.length, 1, 'said once');
  down = false;
  for (let i = 0; i < 200 && written.length === 0; i++) await new Promise((resolve) => setTimeout(resolve, 10));
  t.strictSame(written.map((w) => w.trade.state), ['completed'], 'the latest row, once');
  await ledger.record({ ...plan, partnerId: null }, status([['completed', '15'], ['completed', '30']], 'completed'));
  t.equal(written.length, 1, 'a keyless plan has no ledger');
});

t.test('"a summary or an export reads its range a page at a time, and refuses more than 100,000 plans rather than sum them in part"', async (t) => {
  const row = tradeOf(plan, plan.trade!, status([['completed', '15'], ['completed', '30']], 'completed'));
  let pages = 0;
  const many = (total: number): TradeStore => ({
    put: async () => {},
    page: async (_query, after, limit) => {
      pages += 1;
      const start = after === null ? 0 : Number(after.planId.slice(3));
      return Array.from({ length: Math.max(0, Math.min(limit, total - start)) }, (_, i) => ({ ...row, planId: `pl_${String(start + i + 1)}` }));
    },
  });
  const log = { info: () => {}, warn: () => {}, error: () => {} };
  const summary = await new TradeLedger(many(2_500), () => new Date('2026-12-02T12:00:00Z'), log).summary('key_abc', {});
  t.equal(summary.plans, 2_500, 'every plan summed');
  t.equal(pages, 3, 'a thousand at a time');
  const csv = await new TradeLedger(many(2_500), () => new Date('2026-12-02T12:00:00Z'), log).csv('key_abc', {});
  t.equal(parseCsv(csv.text).length, 2_501, 'the header and every plan');
  await t.rejects(new TradeLedger(many(100_001), () => new Date('2026-12-02T12:00:00Z'), log).summary('key_abc', {}), /more than 100000 plans: ask fewer days/);
});
