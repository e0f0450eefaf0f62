// The quote arithmetic (core/quotes/math.ts, core/venues/venue-math.ts) against the rules openapi/v1.yaml documents for
// QuoteVenue (net, feeBps) and QuoteResponse (best, edgeBps). Expected values are written out by
// hand or recomputed with an independent decimal.js instance, never by the function under test.
import { execFileSync } from 'node:child_process';
import { Decimal as DecimalJs } from 'decimal.js';
import fc from 'fast-check';
import t from 'tap';
import { dec, smallQuotient, type Decimal } from '../../../core/decimal.js';
import { rank } from '../../../core/quotes/engine.js';
import { edgeBps, feeCostBps, netAfterFee, toQuoteVenue } from '../../../core/quotes/math.js';
import { walkBook, type BookLevel } from '../../../core/venues/venue-math.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import type { VenueFeeQuote, VenueQuote } from '../../../core/venues/venue.js';
import type { QuoteVenue } from '../../../core/contract/v1.js';

// ---------------------------------------------------------------------------------------------
// An independent oracle: its own decimal.js clone, far more precision than any input needs.
const X = DecimalJs.clone({ precision: 200, rounding: DecimalJs.ROUND_FLOOR, toExpNeg: -300, toExpPos: 300 });
type X = InstanceType<typeof X>;
const x = (v: string | number | Decimal): X => new X(typeof v === 'object' ? v.toFixed() : v);
/** floor to 10 fractional digits, canonical plain string. */
const floor10s = (v: X): string => canonical(v.toDecimalPlaces(10, X.ROUND_FLOOR));
const ceil10s = (v: X): string => canonical(v.toDecimalPlaces(10, X.ROUND_CEIL));
const canonical = (v: X): string => (v.isZero() ? '0' : v.toFixed());
/** floor(gross × (amount − fee) / amount) to 10 dp: the documented give-side net. */
const giveSideNet = (gross: string, fee: string, amount: string): string =>
  floor10s(x(gross).times(x(amount).minus(x(fee))).div(x(amount)));
/** round(10000 × (gross − net) / gross) half up. */
const feeBpsOf = (gross: string, net: string): number =>
  x(gross).isZero() ? 0 : x(gross).minus(x(net)).times(10_000).div(x(gross)).toDecimalPlaces(0, X.ROUND_HALF_UP).toNumber();
/** floor(10000 × (best − next) / next). */
/** The documented edge, independently: floor(10000 × (best - next) / next), at most 1000000000. */
const edgeOf = (best: string, next: string): number =>
  Math.min(x(best).minus(x(next)).times(10_000).div(x(next)).toDecimalPlaces(0, X.ROUND_FLOOR).toNumber(), 1_000_000_000);

/** The wire's Decimal pattern (openapi/v1.yaml): no exponent, ≤ 10 fractional digits, canonical. */
const WIRE_DECIMAL = /^(0|[1-9][0-9]*)(\.[0-9]{0,9}[1-9])?$/;

const lv = (price: string, quantity: string): BookLevel => ({ price: dec(price), quantity: dec(quantity) });
const ok = (gross: string, fee: VenueFeeQuote | null = null): VenueQuote => ({ available: true, gross: dec(gross), fee });
const fee = (amount: string, asset: Token, appliedTo: VenueFeeQuote['appliedTo'] = 'deducted_from_give'): VenueFeeQuote => ({
  amount: dec(amount),
  asset,
  appliedTo,
});

// Arbitraries for the property tests.
const arbAmount = fc.bigInt({ min: 1n, max: 10n ** 19n }).map((n) => scaled(n)); // (0, 1e9], 10 dp
/** Non-negative decimals with up to `digits` fractional digits and `intDigits` integer digits. */
function arbDecimal(digits: number, intDigits: number) {
  return fc.bigInt({ min: 0n, max: 10n ** BigInt(digits + intDigits) }).map((n) => scaled(n, digits));
}
const arbFee = fc.record({
  side: fc.constantFrom('give' as const, 'want' as const),
  appliedTo: fc.constantFrom('on_top' as const, 'deducted_from_give' as const),
  amount: fc.oneof(arbDecimal(12, 3), arbDecimal(10, 10)),
});
const arbQuote = fc.record({
  amount: arbAmount,
  gross: fc.oneof(arbDecimal(14, 8), arbDecimal(10, 12), arbDecimal(3, 3)),
  fee: fc.option(arbFee, { nil: null }),
});

function quoteFrom(q: { gross: string; fee: { side: 'give' | 'want'; appliedTo: VenueFeeQuote['appliedTo']; amount: string } | null }): VenueQuote {
  return ok(q.gross, q.fee && fee(q.fee.amount, q.fee.side === 'give' ? CC : USDCX, q.fee.appliedTo));
}

// ---------------------------------------------------------------------------------------------
t.test('walkBook sell-base: "selling the base hits bids: output = Σ quantity × price"', async (t) => {
  const bids = [lv('0.15', '100'), lv('0.14', '200'), lv('0.13', '300')];
  t.equal(walkBook(bids, dec('50'), 'sell-base')?.toFixed(), '7.5', 'inside the first level: 50 × 0.15');
  t.equal(walkBook(bids, dec('100'), 'sell-base')?.toFixed(), '15', 'exactly the first level');
  t.equal(walkBook(bids, dec('250'), 'sell-base')?.toFixed(), '36', 'partial last level: 100×0.15 + 150×0.14 = 15 + 21');
  t.equal(walkBook(bids, dec('600'), 'sell-base')?.toFixed(), '82', 'the whole book: 15 + 28 + 39');
  t.equal(
    walkBook([lv('0.123456789', '1'), lv('0.1', '10')], dec('1.33333'), 'sell-base')?.toFixed(),
    floor10s(x('0.123456789').plus(x('0.33333').times('0.1'))),
    'fractional partial level',
  );
  t.equal(
    walkBook([lv('0.00000000015', '1')], dec('1'), 'sell-base')?.toFixed(),
    '0.0000000001',
    'output rounds down to 10 fractional digits',
  );
});

t.test('walkBook buy-base: "buying the base lifts asks with `amount` of quote currency: output = Σ quantity bought"', async (t) => {
  const asks = [lv('0.2', '100'), lv('0.25', '100'), lv('0.3', '1000')];
  t.equal(walkBook(asks, dec('10'), 'buy-base')?.toFixed(), '50', 'inside the first level: 10 / 0.2');
  t.equal(walkBook(asks, dec('20'), 'buy-base')?.toFixed(), '100', 'exactly the first level costs 100 × 0.2 = 20');
  t.equal(walkBook(asks, dec('30'), 'buy-base')?.toFixed(), '140', 'partial second level: 100 + 10/0.25');
  t.equal(
    walkBook(asks, dec('46'), 'buy-base')?.toFixed(),
    floor10s(x(200).plus(x(1).div('0.3'))),
    'partial last level rounds down: 100 + 100 + 1/0.3 = 203.3333333333',
  );
  t.equal(walkBook(asks, dec('46'), 'buy-base')?.toFixed(), '203.3333333333');
  t.equal(walkBook(asks, dec('345'), 'buy-base')?.toFixed(), '1200', 'the whole book costs 20 + 25 + 300');
});

t.test('walkBook: "null when the book is too thin for the amount"', async (t) => {
  const bids = [lv('0.15', '100'), lv('0.14', '200')];
  t.equal(walkBook(bids, dec('300.0000000001'), 'sell-base'), null, 'one unit more than the bids hold');
  t.equal(walkBook(bids, dec('300'), 'sell-base')?.toFixed(), '43', 'exactly the depth is filled');
  const asks = [lv('0.2', '100'), lv('0.25', '100')];
  t.equal(walkBook(asks, dec('45.0000000001'), 'buy-base'), null, 'one unit more quote currency than the asks cost');
  t.equal(walkBook(asks, dec('45'), 'buy-base')?.toFixed(), '200', 'exactly the cost of the book is filled');
  t.equal(walkBook([], dec('1'), 'sell-base'), null, 'an empty book');
  t.equal(walkBook([], dec('1'), 'buy-base'), null, 'an empty book');
});

// ---------------------------------------------------------------------------------------------
t.test('netAfterFee: "no fee: net = gross, rounded down to 10 fractional digits"', async (t) => {
  t.equal(netAfterFee(dec('100'), dec('15.12345678909'), null, USDCX).toFixed(), '15.123456789');
  t.equal(netAfterFee(dec('100'), dec('15'), null, USDCX).toFixed(), '15');
});

t.test('netAfterFee: "a fee in the want instrument is subtracted as is"', async (t) => {
  t.equal(netAfterFee(dec('1000'), dec('66.5'), fee('0.79', CC, 'on_top'), CC).toFixed(), '65.71', '66.5 − 0.79');
  t.equal(netAfterFee(dec('1000'), dec('66.5'), fee('0.79', CC, 'deducted_from_give'), CC).toFixed(), '65.71', 'appliedTo does not matter for a want-side fee');
  t.equal(netAfterFee(dec('5'), dec('1.0000000001'), fee('0.0000000001', USDCX), USDCX).toFixed(), '1');
});

t.test('netAfterFee: "a fee in the give instrument is valued at the quote\'s own average rate: floor(gross × (amount − fee) / amount)"', async (t) => {
  t.equal(netAfterFee(dec('100'), dec('15'), fee('1', CC), USDCX).toFixed(), '14.85', '15 × 99 / 100');
  t.equal(netAfterFee(dec('3'), dec('1'), fee('1', CC), USDCX).toFixed(), '0.6666666666', '1 × 2 / 3 floors');
  t.equal(netAfterFee(dec('3'), dec('1'), fee('1', CC), USDCX).toFixed(), giveSideNet('1', '1', '3'));
  t.equal(
    netAfterFee(dec('1000'), dec('149.9925003749'), fee('3', CC), USDCX).toFixed(),
    giveSideNet('149.9925003749', '3', '1000'),
  );
});

t.test('netAfterFee: "a fee on top of the give amount must not make a venue look better" — the same fee gives the SAME net on top or deducted', async (t) => {
  const cases: Array<[string, string, string]> = [
    ['100', '15', '0.79'],
    ['3', '1', '1'],
    ['499.9999999999', '74.7', '0.79'],
    ['0.0000000003', '0.0000000001', '0.0000000001'],
  ];
  for (const [amount, gross, f] of cases) {
    const onTop = netAfterFee(dec(amount), dec(gross), fee(f, CC, 'on_top'), USDCX);
    const deducted = netAfterFee(dec(amount), dec(gross), fee(f, CC, 'deducted_from_give'), USDCX);
    t.equal(onTop.toFixed(), deducted.toFixed(), `amount ${amount}, gross ${gross}, fee ${f}`);
    t.equal(onTop.toFixed(), giveSideNet(gross, f, amount), 'and it is the documented give-side net');
  }
  // Through toQuoteVenue, so the whole wire entry (net and feeBps) agrees too.
  const a = toQuoteVenue('a', dec('100'), USDCX, CC, ok('15', fee('0.79', CC, 'on_top')));
  const b = toQuoteVenue('b', dec('100'), USDCX, CC, ok('15', fee('0.79', CC, 'deducted_from_give')));
  t.equal(a.net, b.net);
  t.equal(a.feeBps, b.feeBps);
  t.equal(a.net, '14.8815');
  t.equal(a.feeBps, 79);
});

t.test('netAfterFee property: "on top and deducted give the same net, and net ≤ gross"', async (t) => {
  check(t, fc.property(arbAmount, arbDecimal(12, 10), arbDecimal(12, 10), (amount, gross, f) => {
    fc.pre(x(f).lte(x(amount)));
    const onTop = netAfterFee(dec(amount), dec(gross), fee(f, CC, 'on_top'), USDCX);
    const deducted = netAfterFee(dec(amount), dec(gross), fee(f, CC, 'deducted_from_give'), USDCX);
    return onTop.eq(deducted) && onTop.lte(dec(gross)) && onTop.toFixed() === giveSideNet(gross, f, amount);
  }));
});

// ---------------------------------------------------------------------------------------------
t.test('feeCostBps: "round(10000 × (gross − net) / gross) half up; 0 without a fee"', async (t) => {
  t.equal(feeCostBps(dec('15'), dec('15')), 0, 'no cost');
  t.equal(feeCostBps(dec('10000'), dec('9999.5')), 1, 'exactly 0.5 bp rounds up (half up, not floor and not half even)');
  t.equal(feeCostBps(dec('10000'), dec('9998.5')), 2, '1.5 bp rounds up to 2');
  t.equal(feeCostBps(dec('10000'), dec('9997.5')), 3, '2.5 bp rounds up to 3 (half even would give 2)');
  t.equal(feeCostBps(dec('10000'), dec('9999.5000000001')), 0, 'just under 0.5 bp rounds down');
  t.equal(feeCostBps(dec('3'), dec('2.99985')), 1, '10000 × 0.00015 / 3 = 0.5 → 1');
  t.equal(feeCostBps(dec('15'), dec('14.85')), 100, '1 %');
  t.equal(feeCostBps(dec('3'), dec('2')), 3333, '3333.33… → 3333');
  t.equal(feeCostBps(dec('3'), dec('1')), 6667, '6666.66… → 6667');
  t.equal(feeCostBps(dec('0'), dec('0')), 0, 'zero gross');
});

t.test('edgeBps: "floor(10000 × (best.net − next.net) / next.net); rounded down so the edge is never overstated"', async (t) => {
  t.equal(edgeBps(dec('101'), dec('100')), 100);
  t.equal(edgeBps(dec('103'), dec('101')), 198, '198.019… floors');
  t.equal(edgeBps(dec('1.00007'), dec('1')), 0, '0.7 bp floors to 0 (half up would say 1)');
  t.equal(edgeBps(dec('1.00019999'), dec('1')), 1, '1.9999 bp floors to 1');
  t.equal(edgeBps(dec('2'), dec('1')), 10_000);
  t.equal(edgeBps(dec('5'), dec('5')), 0, 'a tie has no edge');
  t.equal(edgeBps(dec('14.9549775011'), dec('14.9')), edgeOf('14.9549775011', '14.9'));
});

// ---------------------------------------------------------------------------------------------
t.test('toQuoteVenue: an available quote becomes a wire entry with gross, net, fee and feeBps', async (t) => {
  const v = toQuoteVenue('tradecraft', dec('1000'), USDCX, CC, ok('149.9925003749', fee('3', CC)));
  t.strictSame(
    { ...v, netValue: v.netValue?.toFixed() },
    {
      venueId: 'tradecraft',
      settlementMode: 'managed-deposit',
      available: true,
      gross: '149.9925003749',
      net: giveSideNet('149.9925003749', '3', '1000'),
      fee: { amount: '3', asset: 'Amulet', appliedTo: 'deducted_from_give' },
      feeBps: feeBpsOf('149.9925003749', giveSideNet('149.9925003749', '3', '1000')),
      rejectionCode: null,
      netValue: giveSideNet('149.9925003749', '3', '1000'),
      priceImpact: null,
    },
  );
  t.equal(v.feeBps, 30);
  const noFee = toQuoteVenue('x', dec('1'), USDCX, CC, ok('0.15'));
  t.equal(noFee.fee, null);
  t.equal(noFee.feeBps, 0, '"0 when the venue charges no fee outside its price"');
  t.equal(noFee.net, '0.15');
});

t.test('toQuoteVenue: "gross is rounded down to 10 fractional digits"', async (t) => {
  const v = toQuoteVenue('x', dec('10'), USDCX, CC, ok('1.23456789019'));
  t.equal(v.gross, '1.2345678901');
  t.equal(v.net, '1.2345678901');
});

t.test('toQuoteVenue: "a fee is what the user pays: rounded up to 10 dp before it enters the net"', async (t) => {
  // Unrounded, 1000 × (1 − 0.00000000001) = 999.99999999; with the fee rounded up to 0.0000000001
  // the net is 1000 × 0.9999999999 = 999.9999999.
  const v = toQuoteVenue('x', dec('1'), USDCX, CC, ok('1000', fee('0.00000000001', CC)));
  t.equal(v.fee?.amount, '0.0000000001', 'the wire fee is rounded up');
  t.equal(v.net, '999.9999999', 'the net uses the rounded-up fee');
  t.equal(v.net, giveSideNet('1000', ceil10s(x('0.00000000001')), '1'));
  const w = toQuoteVenue('x', dec('1'), USDCX, CC, ok('2', fee('0.12345678901', USDCX)));
  t.equal(w.fee?.amount, '0.1234567891', 'a want-side fee rounds up too');
  t.equal(w.net, '1.8765432109', '2 − 0.1234567891');
  t.equal(w.fee?.asset, 'USDCx');
});

t.test('toQuoteVenue: "net ≤ 0 → below_minimum"', async (t) => {
  const negative = toQuoteVenue('x', dec('1'), USDCX, CC, ok('1', fee('2', USDCX)));
  t.equal(negative.available, false, 'a want-side fee larger than gross');
  t.equal(negative.rejectionCode, 'below_minimum');
  t.equal(negative.net, null);
  t.equal(negative.netValue, null);
  const giveEaten = toQuoteVenue('x', dec('1'), USDCX, CC, ok('1', fee('1.5', CC)));
  t.equal(giveEaten.rejectionCode, 'below_minimum', 'a give-side fee larger than the amount');
  const allOfIt = toQuoteVenue('x', dec('1'), USDCX, CC, ok('1', fee('1', CC)));
  t.equal(allOfIt.rejectionCode, 'below_minimum', 'a give-side fee equal to the amount leaves nothing');
  const wantFeeEqualsGross = toQuoteVenue('x', dec('1'), USDCX, CC, ok('1', fee('1', USDCX)));
  t.equal(wantFeeEqualsGross.rejectionCode, 'below_minimum', 'a want-side fee equal to gross leaves nothing');
});

t.test('toQuoteVenue: "net ≤ 0 → below_minimum" when net is exactly (+)0', async (t) => {
  const dust = toQuoteVenue('x', dec('1'), USDCX, CC, ok('0.00000000001'));
  t.equal(dust.rejectionCode, 'below_minimum', 'gross that floors to 0 with no fee: net 0');
  const giveSideToZero = toQuoteVenue('x', dec('3'), USDCX, CC, ok('0.0000000001', fee('1', CC)));
  t.equal(giveSideToZero.rejectionCode, 'below_minimum', 'give-side: floor(0.0000000001 × 2 / 3) = 0');
});

t.test('toQuoteVenue: "a fee asset that is neither give nor want → venue_error"', async (t) => {
  const v = toQuoteVenue('x', dec('100'), USDCX, CC, ok('15', fee('0.0001', CBTC)));
  t.strictSame(
    { ...v },
    {
      venueId: 'x',
      settlementMode: 'managed-deposit',
      available: false,
      gross: null,
      net: null,
      fee: null,
      feeBps: null,
      rejectionCode: 'venue_error',
      netValue: null,
      priceImpact: null,
    },
  );
});

t.test('toQuoteVenue: "priceImpact rounded up to 10 digits, so it is never understated"; null when the venue states none or is unavailable', async (t) => {
  const impact = (priceImpact: string | null) => toQuoteVenue('x', dec('100'), USDCX, CC, { available: true, gross: dec('15'), fee: null, priceImpact: priceImpact === null ? null : dec(priceImpact) }).priceImpact;
  t.equal(impact('0.00000498501'), '0.0000049851', 'up, past 10 digits');
  t.equal(impact('0.0012'), '0.0012', 'kept within them');
  t.equal(impact('0'), '0');
  t.equal(impact(null), null);
  t.equal(toQuoteVenue('x', dec('100'), USDCX, CC, ok('15')).priceImpact, null, 'a venue that gives none');
  t.equal(toQuoteVenue('x', dec('100'), USDCX, CC, { available: true, gross: dec('0'), fee: null, priceImpact: dec('0.1') }).priceImpact, null, 'rejected (below_minimum): none');
});

t.test('toQuoteVenue: an unavailable venue keeps its rejectionCode and has gross, net, fee and feeBps null', async (t) => {
  for (const code of ['no_pool', 'insufficient_liquidity', 'timeout', 'maintenance'] as const) {
    const v = toQuoteVenue('x', dec('1'), USDCX, CC, { available: false, rejectionCode: code });
    t.equal(v.rejectionCode, code);
    t.equal(v.available, false);
    t.strictSame([v.gross, v.net, v.fee, v.feeBps, v.netValue], [null, null, null, null, null]);
  }
});

// ---------------------------------------------------------------------------------------------
const REQ = { give: CC, want: USDCX, amount: dec('100') };
const ASOF = '2025-01-01T00:00:00.000Z';
const entry = (id: string, gross: string | null, f: VenueFeeQuote | null = null) =>
  toQuoteVenue(id, REQ.amount, REQ.want, REQ.give, gross === null ? { available: false, rejectionCode: 'no_pool' } : ok(gross, f));

t.test('rank: "available venues by net, best first (ties by venueId); unavailable venues after, by venueId"', async (t) => {
  const r = rank(REQ, ASOF, [
    entry('zeta', null),
    entry('bravo', '15'),
    entry('alpha', '15'),
    entry('charlie', '15.5', fee('1', CC)), // net 15.345: gross is higher but net is what ranks
    entry('yankee', null),
    entry('delta', '15.4'),
  ]);
  t.strictSame(r.venues.map((v) => v.venueId), ['delta', 'charlie', 'alpha', 'bravo', 'yankee', 'zeta']);
  t.strictSame(r.venues.map((v) => v.net), ['15.4', '15.345', '15', '15', null, null]);
  t.strictSame(r.best, { venueId: 'delta', gross: '15.4', net: '15.4' }, 'best is the highest net');
  t.equal(r.edgeBps, edgeOf('15.4', '15.345'), 'edge of best over the second-ranked');
  t.equal(r.edgeBps, 35, 'floor(10000 × 0.055 / 15.345) = floor(35.84…)');
  t.strictSame(r.pair, { give: 'Amulet', want: 'USDCx' });
  t.equal(r.amount, '100');
  t.equal(r.asOf, ASOF);
  t.notOk('netValue' in r.venues[0]!, 'the internal netValue is not on the wire');
});

t.test('rank: "ties by venueId" — equal nets order by venueId whatever the input order', async (t) => {
  const a = rank(REQ, ASOF, [entry('b', '10'), entry('a', '10'), entry('c', '10')]);
  const b = rank(REQ, ASOF, [entry('c', '10'), entry('b', '10'), entry('a', '10')]);
  t.strictSame(a.venues.map((v) => v.venueId), ['a', 'b', 'c']);
  t.strictSame(b.venues.map((v) => v.venueId), ['a', 'b', 'c']);
  t.equal(a.best?.venueId, 'a');
  t.equal(a.edgeBps, 0, 'a tie at the top has no edge');
});

t.test('rank: "best null when none is available; edgeBps null with fewer than two available"', async (t) => {
  const none = rank(REQ, ASOF, [entry('b', null), entry('a', null)]);
  t.equal(none.best, null);
  t.equal(none.edgeBps, null);
  t.strictSame(none.venues.map((v) => v.venueId), ['a', 'b']);
  const one = rank(REQ, ASOF, [entry('b', null), entry('a', '2')]);
  t.strictSame(one.best, { venueId: 'a', gross: '2', net: '2' });
  t.equal(one.edgeBps, null, 'one available venue has no edge');
  const empty = rank(REQ, ASOF, []);
  t.equal(empty.best, null);
  t.equal(empty.edgeBps, null);
  t.strictSame(empty.venues, []);
});

t.test('rank: "edgeBps is an integer ≥ 0, null with fewer than two available" when a venue nets exactly 0', async (t) => {
  // b's gross floors to 0 and it has no fee: net 0, so b is below_minimum.
  const r = rank(REQ, ASOF, [entry('a', '1'), entry('b', '0.00000000001')]);
  t.equal(r.venues.filter((v) => v.available).length, 1, 'only a is available');
  t.equal(r.edgeBps, null, 'edgeBps (currently Infinity: 10000 × 1 / 0)');
});

// ---------------------------------------------------------------------------------------------
// Properties: every figure a response shows can be recomputed from the others.

/** The documented net, recomputed from the wire entry's own figures only. */
function netFromWire(v: QuoteVenue, amount: string): string {
  if (!v.fee) return floor10s(x(v.gross!));
  if (v.fee.asset === 'USDCx') return floor10s(x(v.gross!).minus(x(v.fee.amount)));
  return giveSideNet(v.gross!, v.fee.amount, amount);
}

t.test('property: "net = floor(gross × (amount − fee.amount) / amount)" (give-side) or "gross − fee" (want-side), recomputed from the response\'s own gross, fee.amount and amount', async (t) => {
  check(t, fc.property(arbQuote, (q) => {
    const v = toQuoteVenue('v', dec(q.amount), USDCX, CC, quoteFrom(q));
    const r = rank({ give: CC, want: USDCX, amount: dec(q.amount) }, ASOF, [v]);
    const wire = r.venues[0]!;
    if (!wire.available) return true;
    return wire.net === netFromWire(wire, r.amount) && wire.feeBps === feeBpsOf(wire.gross!, wire.net!);
  }), { numRuns: 2000 });
});

t.test('property: "net ≤ gross" and unavailable only when the recomputed net is not positive', async (t) => {
  check(t, fc.property(arbQuote, (q) => {
    const v = toQuoteVenue('v', dec(q.amount), USDCX, CC, quoteFrom(q));
    const gross = floor10s(x(q.gross));
    const feeAmount = q.fee ? ceil10s(x(q.fee.amount)) : null;
    const recomputed =
      !q.fee ? gross : q.fee.side === 'want' ? floor10s(x(gross).minus(x(feeAmount!))) : giveSideNet(gross, feeAmount!, q.amount);
    if (!v.available) return v.rejectionCode === 'below_minimum' && x(recomputed).lte(0);
    return x(v.net!).lte(x(v.gross!)) && v.gross === gross && v.net === recomputed && v.fee?.amount === (feeAmount ?? undefined);
  }), { numRuns: 2000 });
});

t.test('property: "every amount string has ≤ 10 fractional digits and no exponent" (the wire Decimal pattern)', async (t) => {
  check(t, fc.property(fc.array(fc.tuple(fc.constantFrom('a', 'b', 'c', 'd'), arbQuote), { maxLength: 6 }), arbAmount, (qs, amount) => {
    const entries = qs.map(([id, q], i) => toQuoteVenue(`${id}${i}`, dec(amount), USDCX, CC, quoteFrom(q)));
    const r = rank({ give: CC, want: USDCX, amount: dec(amount) }, ASOF, entries);
    const strings = [r.amount, r.best?.gross, r.best?.net, ...r.venues.flatMap((v) => [v.gross, v.net, v.fee?.amount])].filter(
      (s): s is string => typeof s === 'string',
    );
    return strings.every((s) => WIRE_DECIMAL.test(s));
  }), { numRuns: 1000 });
  // Magnitudes at which a default decimal.js would switch to exponent notation.
  const tiny = toQuoteVenue('a', dec('0.0000001'), USDCX, CC, ok('0.0000000001'));
  t.equal(tiny.gross, '0.0000000001');
  const huge = toQuoteVenue('a', dec('1000000000'), USDCX, CC, ok('123456789012345678901234.5'));
  t.equal(huge.gross, '123456789012345678901234.5');
  t.equal(rank({ give: CC, want: USDCX, amount: dec('0.0000001') }, ASOF, []).amount, '0.0000001');
});

t.test('property: rank orders by net desc then venueId, best is the first, edgeBps recomputes from the wire nets', async (t) => {
  check(t, fc.property(fc.uniqueArray(fc.tuple(fc.stringMatching(/^[a-z]{1,6}$/), arbQuote), { selector: ([id]) => id, maxLength: 7 }), (qs) => {
    const amount = '100';
    const entries = qs.map(([id, q]) => toQuoteVenue(id, dec(amount), USDCX, CC, quoteFrom(q)));
    const r = rank({ give: CC, want: USDCX, amount: dec(amount) }, ASOF, entries);
    if (r.venues.length !== qs.length) return false;
    const avail = r.venues.filter((v) => v.available);
    const unavail = r.venues.filter((v) => !v.available);
    // Available first.
    if (r.venues.slice(0, avail.length).some((v) => !v.available)) return false;
    for (let i = 1; i < avail.length; i++) {
      const [p, c] = [avail[i - 1]!, avail[i]!];
      const cmp = x(p.net!).comparedTo(x(c.net!));
      if (cmp < 0 || (cmp === 0 && !(p.venueId < c.venueId))) return false;
    }
    for (let i = 1; i < unavail.length; i++) if (!(unavail[i - 1]!.venueId < unavail[i]!.venueId)) return false;
    if (avail.length === 0) return r.best === null && r.edgeBps === null;
    if (r.best?.venueId !== avail[0]!.venueId || r.best.net !== avail[0]!.net || r.best.gross !== avail[0]!.gross) return false;
    if (avail.length < 2) return r.edgeBps === null;
    return r.edgeBps === edgeOf(avail[0]!.net!, avail[1]!.net!) && r.edgeBps >= 0;
  }), { numRuns: 1000 });
});

t.test('property: "available implies net > 0"', async (t) => {
  check(t, fc.property(arbQuote, (q) => {
    const v = toQuoteVenue('v', dec(q.amount), USDCX, CC, quoteFrom(q));
    return !v.available || x(v.net!).gt(0);
  }), { numRuns: 2000, examples: [[{ amount: '1', gross: '0.00000000001', fee: null }]] });
});

// ---------------------------------------------------------------------------------------------
/** A bigint n as the decimal n / 10^digits, canonical. */
function scaled(n: bigint, digits = 10): string {
  const s = n.toString().padStart(digits + 1, '0');
  const int = s.slice(0, -digits);
  const frac = s.slice(-digits).replace(/0+$/, '');
  return frac ? `${int}.${frac}` : int;
}

function check<T>(t: { ok: (v: unknown, msg: string) => unknown }, prop: fc.IProperty<T>, params: fc.Parameters<T> = {}): void {
  const details = fc.check(prop, params) as fc.RunDetails<T>;
  t.ok(!details.failed, details.failed ? (fc.defaultReportMessage(details) ?? 'property failed') : 'property holds');
}


t.test('the Decimal constructor holds its properties in V8 fast mode (decimal.js leaves them in dictionary mode)', async (t) => {
  // Asked of a fresh node with --allow-natives-syntax, which this process does not run with.
  const moduleUrl = new URL('../../../core/decimal.js', import.meta.url).href;
  const probe = `import(${JSON.stringify(moduleUrl)}).then(({ Decimal }) => console.log(%HasFastProperties(Decimal)))`;
  const out = execFileSync(process.execPath, ['--allow-natives-syntax', '-e', probe], { encoding: 'utf8' });
  t.equal(out.trim(), 'true');
});

t.test('smallQuotient: exactly floor(a / b), as decimal.js\'s own long division gives it, for any a >= 0 and b > 0', async (t) => {
  const positive = (digits: number, intDigits: number) => arbDecimal(digits, intDigits).filter((x) => x !== '0');
  const expected = (a: string, b: string) => new X(a).divToInt(new X(b)).toNumber();
  // Wide operands (quotients far past the proposal range, so the long division answers too),
  // bps-shaped ones, and exact multiples, where a proposal is most likely to be one off.
  check(t, fc.property(arbDecimal(10, 20), positive(10, 20), (a, b) => smallQuotient(dec(a), dec(b)) === expected(a, b)), { numRuns: 2000 });
  check(t, fc.property(arbDecimal(10, 6), positive(10, 4), (a, b) => smallQuotient(dec(a), dec(b)) === expected(a, b)), { numRuns: 2000 });
  check(
    t,
    fc.property(fc.integer({ min: 1, max: 20_000 }), positive(10, 4), (q, b) => {
      const a = new X(b).times(q);
      const justUnder = a.minus('1e-10').toFixed();
      return smallQuotient(dec(a.toFixed()), dec(b)) === q && smallQuotient(dec(justUnder), dec(b)) === q - 1;
    }),
    { numRuns: 2000 },
  );
  t.equal(smallQuotient(dec('0'), dec('7')), 0);
  t.equal(smallQuotient(dec('29999.9999999999'), dec('1')), 29999);
  t.equal(smallQuotient(dec('1000000000000'), dec('3')), 333_333_333_333, 'past the proposal range: the long division');
});

t.test('edgeBps "at most 1000000000" (the contract\'s bound): a best venue paying more than 100,000 times the next reads the bound', async (t) => {
  t.equal(edgeBps(dec('100001'), dec('1')), 1_000_000_000, 'exactly 100,000 times more: the bound itself');
  t.equal(edgeBps(dec('100000.9999'), dec('1')), 999_999_999);
  t.equal(edgeBps(dec('1e30'), dec('1e-30')), 1_000_000_000, 'venue amounts at the ends of their range');
  t.equal(edgeBps(dec('15'), dec('14.9549254495')), 30);
});

// ---------------------------------------------------------------------------------------------
// Rules that `make mutation` found no test for (mutation/equivalent-mutants.md lists the rest).

t.test('netAfterFee: "worst-case output after the venue\'s fee" is never below zero: a give-side fee at or above the amount leaves 0', async (t) => {
  t.equal(netAfterFee(dec('10'), dec('15'), fee('12', CC), USDCX).toFixed(), '0', 'a fee above the amount: 0, not 15 × (10 − 12) / 10');
  t.equal(netAfterFee(dec('10'), dec('15'), fee('10', CC, 'on_top'), USDCX).toFixed(), '0', 'a fee equal to the amount: 0');
  t.equal(netAfterFee(dec('10'), dec('15'), fee('9.9999999999', CC), USDCX).toFixed(), '0.0000000001', 'just under it: what is left, 15 × 0.0000000001 / 10 floored');
});

t.test('feeCostBps: "0 without a fee" also for a zero gross, whatever the net (no division by zero)', async (t) => {
  t.equal(feeCostBps(dec('0'), dec('-0.79')), 0, 'a want-side fee on a zero gross');
  t.equal(feeCostBps(dec('0'), dec('0')), 0);
});
