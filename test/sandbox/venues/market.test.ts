// The embedded sandbox market (sandbox/venues/market.ts over sandbox/venues/sandbox-venue.ts): each
// venue's pricing and fee mechanics, recomputed here from the seeds with an independent
// decimal.js instance.
import { Decimal as DecimalJs } from 'decimal.js';
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import type { SandboxVenue } from '../../../sandbox/venues/sandbox-venue.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import type { Venue, VenueQuote } from '../../../core/venues/venue.js';

const X = DecimalJs.clone({ precision: 200, rounding: DecimalJs.ROUND_FLOOR, toExpNeg: -300, toExpPos: 300 });
type X = InstanceType<typeof X>;
const x = (v: string | number): X => new X(v);
const s = (v: X): string => (v.isZero() ? '0' : v.toFixed());
const floor10 = (v: X): X => v.toDecimalPlaces(10, X.ROUND_FLOOR);
const ceil10 = (v: X): X => v.toDecimalPlaces(10, X.ROUND_CEIL);

/** Constant product with a fee inside the price: out = rOut × in′ / (rIn + in′), in′ = in × (1 − bps/10000). */
function amm(reserveIn: string, reserveOut: string, amount: string, inPriceBps: number): string {
  const effIn = x(amount).times(10_000 - inPriceBps).div(10_000);
  return s(floor10(x(reserveOut).times(effIn).div(x(reserveIn).plus(effIn))));
}

// The seeds, copied from the README's "Sandbox market" section / market.ts.
const SEEDS = {
  tradecraft: { usdcx: ['20000000', '3000000'], cbtc: ['8000000', '12'], inPriceBps: 0 },
  cantex: { usdcx: ['30000000', '4485000'], cbtc: ['10000000', '14.95'], inPriceBps: 5 },
  oneswap: { usdcx: ['12000000', '1806000'], inPriceBps: 30 },
} as const;

let venues: Map<string, SandboxVenue>;
t.beforeEach(() => {
  // Fresh venues per test: pool reserves are mutable objects.
  venues = new Map(createSandboxVenues().map((v) => [v.id, v]));
});
/** Sandbox venues used through the venue port, as the quote engine does. */
const port = (v: SandboxVenue): Venue => v;
const venue = (id: string): Venue => {
  const v = venues.get(id);
  if (!v) throw new Error(`no sandbox venue ${id}`);
  return port(v);
};
const signal = new AbortController().signal;
const deadline = { signal, endsAt: Number.POSITIVE_INFINITY };
const quote = (id: string, give: Token, want: Token, amount: string): Promise<VenueQuote> =>
  venue(id).quote({ give, want, amount: dec(amount) }, deadline);

/** An available quote as plain strings, or its rejection code. */
function plain(q: VenueQuote) {
  if (!q.available) return { rejectionCode: q.rejectionCode };
  return {
    gross: q.gross.toFixed(),
    fee: q.fee && { amount: q.fee.amount.toFixed(), asset: q.fee.asset.instrument, appliedTo: q.fee.appliedTo },
  };
}

// ---------------------------------------------------------------------------------------------
t.test('the sandbox market has five venues: tradecraft, cantex, oneswap, nightly, temple', async (t) => {
  t.strictSame(createSandboxVenues().map((v) => v.id), ['tradecraft', 'cantex', 'oneswap', 'nightly', 'temple']);
  for (const v of createSandboxVenues()) t.equal(v.settlementMode, 'managed-deposit');
});

t.test('tradecraft: "constant-product AMM, 0.30 % fee deducted from the give amount" — CC→USDCx and USDCx→CC', async (t) => {
  const { usdcx } = SEEDS.tradecraft;
  t.strictSame(plain(await quote('tradecraft', CC, USDCX, '1000')), {
    gross: amm(usdcx[0], usdcx[1], '1000', 0),
    fee: { amount: '3', asset: 'Amulet', appliedTo: 'deducted_from_give' },
  });
  t.equal(amm(usdcx[0], usdcx[1], '1000', 0), '149.9925003749', 'the oracle itself: 3e9 / 20001000');
  t.strictSame(plain(await quote('tradecraft', USDCX, CC, '100')), {
    gross: amm(usdcx[1], usdcx[0], '100', 0),
    fee: { amount: '0.3', asset: 'USDCx', appliedTo: 'deducted_from_give' },
  });
  t.strictSame(plain(await quote('tradecraft', CC, USDCX, '0.0000012345')), {
    gross: amm(usdcx[0], usdcx[1], '0.0000012345', 0),
    fee: { amount: s(ceil10(x('0.0000012345').times(30).div(10_000))), asset: 'Amulet', appliedTo: 'deducted_from_give' },
  }, 'a proportional fee is rounded up to 10 dp: 0.0000000037035 → 0.0000000038');
  t.strictSame(plain(await quote('tradecraft', CC, CBTC, '1000')), {
    gross: amm(SEEDS.tradecraft.cbtc[0], SEEDS.tradecraft.cbtc[1], '1000', 0),
    fee: { amount: '3', asset: 'Amulet', appliedTo: 'deducted_from_give' },
  });
});

t.test('cantex: "constant-product AMM with a 0.05 % LP fee inside the price" — CC→USDCx and USDCx→CC', async (t) => {
  const { usdcx } = SEEDS.cantex;
  t.strictSame(plain(await quote('cantex', CC, USDCX, '1000')), { gross: amm(usdcx[0], usdcx[1], '1000', 5), fee: null });
  t.strictSame(plain(await quote('cantex', USDCX, CC, '100')), { gross: amm(usdcx[1], usdcx[0], '100', 5), fee: null });
  t.strictSame(plain(await quote('cantex', CBTC, CC, '0.01')), {
    gross: amm(SEEDS.cantex.cbtc[1], SEEDS.cantex.cbtc[0], '0.01', 5),
    fee: null,
  }, 'CBTC→CC: ~6,687 CC out, over 500 CC, no network fee');
});

t.test('cantex: "a flat 0.79 CC charge on top of the give amount for trades under 500 CC", none at ≥ 500 CC', async (t) => {
  const { usdcx } = SEEDS.cantex;
  const networkFee = { amount: '0.79', asset: 'Amulet', appliedTo: 'on_top' };
  // Selling CC: the trade's CC size is the amount.
  t.strictSame(plain(await quote('cantex', CC, USDCX, '100')), { gross: amm(usdcx[0], usdcx[1], '100', 5), fee: networkFee }, '100 CC');
  t.strictSame(plain(await quote('cantex', CC, USDCX, '499.9999999999')).fee, networkFee, '499.9999999999 CC is under 500');
  t.equal(plain(await quote('cantex', CC, USDCX, '500')).fee, null, 'exactly 500 CC: no fee');
  t.equal(plain(await quote('cantex', CC, USDCX, '500.0000000001')).fee, null);
  // Buying CC: the trade's CC size is the CC output.
  const small = plain(await quote('cantex', USDCX, CC, '10'));
  t.ok(x(amm(usdcx[1], usdcx[0], '10', 5)).lt(500), '10 USDCx buys under 500 CC');
  t.strictSame(small, { gross: amm(usdcx[1], usdcx[0], '10', 5), fee: networkFee }, '10 USDCx → ~66.8 CC: fee');
  t.ok(x(amm(usdcx[1], usdcx[0], '100', 5)).gte(500), '100 USDCx buys over 500 CC');
  t.equal(plain(await quote('cantex', USDCX, CC, '100')).fee, null, '100 USDCx → ~668 CC: no fee');
});

t.test('cantex on the wire: the on-top CC fee is valued "at the quote\'s own average rate" selling CC, "subtracted as is" buying CC', async (t) => {
  const { usdcx } = SEEDS.cantex;
  const sell = toQuoteVenue('cantex', dec('100'), USDCX, CC, await quote('cantex', CC, USDCX, '100'));
  const gross = amm(usdcx[0], usdcx[1], '100', 5);
  t.strictSame(sell.fee, { amount: '0.79', asset: 'Amulet', appliedTo: 'on_top' });
  t.equal(sell.net, s(floor10(x(gross).times(x(100).minus('0.79')).div(100))));
  t.equal(sell.feeBps, 79, 'the 0.79 CC fee costs 79 bp of a 100 CC trade');
  const buy = toQuoteVenue('cantex', dec('10'), CC, USDCX, await quote('cantex', USDCX, CC, '10'));
  t.equal(buy.net, s(x(amm(usdcx[1], usdcx[0], '10', 5)).minus('0.79')), 'a want-side fee: gross − 0.79');
});

t.test('oneswap: "0.30 % inside the price plus a traffic fee deducted from the give amount" — CC→USDCx and USDCx→CC', async (t) => {
  const { usdcx } = SEEDS.oneswap;
  t.strictSame(plain(await quote('oneswap', CC, USDCX, '1000')), {
    gross: amm(usdcx[0], usdcx[1], '1000', 30),
    fee: { amount: '0.5', asset: 'Amulet', appliedTo: 'deducted_from_give' },
  }, '0.5 CC when giving CC');
  t.strictSame(plain(await quote('oneswap', USDCX, CC, '100')), {
    gross: amm(usdcx[1], usdcx[0], '100', 30),
    fee: { amount: '0.075', asset: 'USDCx', appliedTo: 'deducted_from_give' },
  }, '0.075 USDCx when giving USDCx');
});

t.test('oneswap: "No CBTC pool: CC/CBTC quotes come back `no_pool`"', async (t) => {
  t.strictSame(plain(await quote('oneswap', CC, CBTC, '1000')), { rejectionCode: 'no_pool' });
  t.strictSame(plain(await quote('oneswap', CBTC, CC, '0.01')), { rejectionCode: 'no_pool' });
});

t.test('every venue: a pair without CC (USDCx/CBTC) → no_pool', async (t) => {
  for (const id of ['tradecraft', 'cantex', 'oneswap', 'nightly', 'temple']) {
    t.strictSame(plain(await quote(id, USDCX, CBTC, '100')), { rejectionCode: 'no_pool' }, `${id} USDCx→CBTC`);
    t.strictSame(plain(await quote(id, CBTC, USDCX, '1')), { rejectionCode: 'no_pool' }, `${id} CBTC→USDCx`);
  }
});

t.test('temple: "order book walked level by level, 1 bp taker fee deducted from the give amount" — CC→USDCx and USDCx→CC', async (t) => {
  // Selling 50,000 CC into the bids: 40,000 × 0.15 + 10,000 × 0.1498 = 6000 + 1498.
  t.strictSame(plain(await quote('temple', CC, USDCX, '50000')), {
    gross: '7498',
    fee: { amount: '5', asset: 'Amulet', appliedTo: 'deducted_from_give' },
  });
  // Buying CC with 10,000 USDCx: the first ask level costs 40,000 × 0.1503 = 6012, the rest buys at 0.1505.
  const bought = s(floor10(x(40_000).plus(x(10_000).minus(6012).div('0.1505'))));
  t.equal(bought, '66498.3388704318');
  t.strictSame(plain(await quote('temple', USDCX, CC, '10000')), {
    gross: bought,
    fee: { amount: '1', asset: 'USDCx', appliedTo: 'deducted_from_give' },
  });
  t.strictSame(plain(await quote('temple', CC, CBTC, '1000')), {
    gross: '0.001499',
    fee: { amount: '0.1', asset: 'Amulet', appliedTo: 'deducted_from_give' },
  }, 'CC→CBTC: 1000 × 0.000001499');
});

t.test('temple: "minimum order 1 CC" — below 1 CC → below_minimum', async (t) => {
  t.strictSame(plain(await quote('temple', CC, USDCX, '0.9999999999')), { rejectionCode: 'below_minimum' }, 'selling 0.9999999999 CC');
  t.strictSame(plain(await quote('temple', CC, USDCX, '0.5')), { rejectionCode: 'below_minimum' });
  t.equal(plain(await quote('temple', CC, USDCX, '1')).gross, '0.15', 'exactly 1 CC is accepted');
  t.strictSame(plain(await quote('temple', USDCX, CC, '0.15')), { rejectionCode: 'below_minimum' }, 'buying 0.15 / 0.1503 ≈ 0.998 CC');
  t.equal(plain(await quote('temple', USDCX, CC, '0.1503')).gross, '1', 'buying exactly 1 CC is accepted');
  for (const id of ['tradecraft', 'cantex', 'oneswap']) {
    t.ok((await quote(id, CC, USDCX, '0.5')).available, `${id} has no 1 CC minimum`);
  }
});

t.test('temple: an amount larger than the book\'s depth → insufficient_liquidity', async (t) => {
  // Bids hold 40k + 80k + 150k + 300k + 600k = 1,170,000 CC.
  t.strictSame(plain(await quote('temple', CC, USDCX, '1170000.0000000001')), { rejectionCode: 'insufficient_liquidity' });
  t.strictSame(plain(await quote('temple', CC, USDCX, '2000000')), { rejectionCode: 'insufficient_liquidity' });
  t.equal(plain(await quote('temple', CC, USDCX, '1170000')).gross, '173909', 'the whole bid side: 6000 + 11984 + 22425 + 44700 + 88800');
  // Asks cost 6012 + 12040 + 22620 + 45360 + 91200 = 177,232 USDCx for 1,170,000 CC.
  t.strictSame(plain(await quote('temple', USDCX, CC, '177232.0000000001')), { rejectionCode: 'insufficient_liquidity' });
  t.equal(plain(await quote('temple', USDCX, CC, '177232')).gross, '1170000', 'the whole ask side');
  // CBTC book: bids hold 350,000 CC.
  t.strictSame(plain(await quote('temple', CC, CBTC, '350001')), { rejectionCode: 'insufficient_liquidity' });
});

t.test('probes: "every venue reports live and the pairs it serves" (CC first, by pairKey)', async (t) => {
  const expected: Record<string, string[]> = {
    tradecraft: ['CC/USDCx', 'CC/CBTC'],
    cantex: ['CC/USDCx', 'CC/CBTC'],
    oneswap: ['CC/USDCx'],
    nightly: ['CC/USDCx', 'CC/CBTC'],
    temple: ['CC/USDCx', 'CC/CBTC'],
  };
  for (const v of createSandboxVenues()) {
    t.strictSame(await port(v).probe(signal), { live: true, pairs: expected[v.id] }, v.id);
  }
});

t.test('sandbox venues are deterministic: "deterministic on every start"', async (t) => {
  const a = createSandboxVenues().map(port);
  const b = createSandboxVenues().map(port);
  for (let i = 0; i < a.length; i++) {
    const [qa, qb] = await Promise.all([
      a[i]!.quote({ give: CC, want: USDCX, amount: dec('12345.6789') }, deadline),
      b[i]!.quote({ give: CC, want: USDCX, amount: dec('12345.6789') }, deadline),
    ]);
    t.strictSame(plain(qa), plain(qb), a[i]!.id);
  }
});
