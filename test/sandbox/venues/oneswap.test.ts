// OneSwap's sandbox wire (sandbox/venues/oneswap.ts): its answers to GET /api/v1/quote read
// directly, and the real OneSwap adapter (core/venues/oneswap.ts) quoting through it, with every
// figure recomputed from the pool's reserves by an independent decimal.js instance. The traffic
// fees (0.5 CC, 0.075 USDCx) and the 0.30 % pool fee are the README's, written out here; the
// instrument admins are the sandbox's, as Cantex's sandbox wire serves them.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import type { AmmPool, SandboxVenue, SandboxVenueSpec } from '../../../sandbox/venues/sandbox-venue.js';
import { oneswapWire } from '../../../sandbox/venues/oneswap.js';
import { SANDBOX_INSTRUMENT_ADMINS, SANDBOX_VENUE_KEY, type WireHandler, type WireRequest } from '../../../sandbox/venues/wire.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { OneSwapVenue } from '../../../core/venues/oneswap.js';
import { VenueHttpError } from '../../../core/venues/venue-http.js';
import type { VenueQuote } from '../../../core/venues/venue.js';
import { neverAborted, noDeadline, plainQuote } from '../../helpers/venue-fetch.js';
import { ceil10, floor10, s, x, X } from '../../helpers/exact.js';
import { wireFetch } from '../../helpers/wire-fetch.js';


const TRAFFIC_FEE = { CC: '0.5', USDCx: '0.075' } as const;
const POOL_SHARE = '0.997';

/** A fresh sandbox oneswap: its pools are mutable state, so each test takes its own. */
function freshOneswap(): SandboxVenue {
  const oneswap = createSandboxVenues().find((v) => v.id === 'oneswap');
  if (!oneswap || oneswap.spec.pricing.kind !== 'amm') throw new Error('no sandbox oneswap pool');
  return oneswap;
}
const poolOf = (spec: SandboxVenueSpec, quote: Token): AmmPool => {
  const pool = spec.pricing.kind === 'amm' ? spec.pricing.pools.find((p) => p.quote === quote) : undefined;
  if (!pool) throw new Error(`no ${quote.symbol} pool`);
  return pool;
};

const KEYED = { 'x-api-key': SANDBOX_VENUE_KEY };
const QUOTE = '/api/v1/quote';
const send = (handler: WireHandler, path: string, query: string, headers: WireRequest['headers'] = KEYED, method = 'GET') =>
  handler({ method, path, query: new URLSearchParams(query), headers, body: '' });
function get(handler: WireHandler, path: string, query: string, headers: WireRequest['headers'] = KEYED, method = 'GET') {
  const answer = send(handler, path, query, headers, method);
  return { status: answer.status, json: JSON.parse(answer.body) as unknown };
}
const q = (from: string, to: string, amount: string) => `from=${from}&to=${to}&amount=${amount}`;

const BASE = 'http://sandbox.invalid/oneswap';
function adapter(handler: WireHandler, key = SANDBOX_VENUE_KEY): OneSwapVenue {
  // The header's case as core/venues/live-venues.ts sends it.
  return new OneSwapVenue({ baseUrl: BASE, timeoutMs: 5000, fetch: wireFetch(handler, BASE), headers: { 'x-api-key': key } });
}
const ask = (venue: OneSwapVenue | SandboxVenue, give: Token, want: Token, amount: string) => venue.quote({ give, want, amount: dec(amount) }, noDeadline());
/** The quote as the service shows it (net, fee cost), which both venues' answers go through. */
const shown = (quote: VenueQuote, give: Token, want: Token, amount: string) => toQuoteVenue('oneswap', dec(amount), want, give, quote);

/**
 * OneSwap's answer recomputed from the pool: the traffic fee comes out of the input, the pool
 * takes 0.3 % of the rest, and the constant product prices what is left.
 */
function expectedWire(pool: AmmPool, give: Token, amount: string) {
  const sellingCc = give === CC;
  const [base, quote] = [x(pool.baseReserve.toFixed()), x(pool.quoteReserve.toFixed())];
  const [rIn, rOut] = sellingCc ? [base, quote] : [quote, base];
  const fee = x(give === CC ? TRAFFIC_FEE.CC : TRAFFIC_FEE.USDCx);
  const after = X.max(x(amount).minus(fee), 0);
  const poolIn = after.times(POOL_SHARE);
  const output = floor10(rOut.times(poolIn).div(rIn.plus(poolIn)));
  const cc = sellingCc ? fee : ceil10(fee.times(base).div(quote));
  const want = sellingCc ? pool.quote : CC;
  return {
    inputToken: give.instrument,
    inputTokenAdmin: SANDBOX_INSTRUMENT_ADMINS[give.instrument],
    outputToken: want.instrument,
    outputTokenAdmin: SANDBOX_INSTRUMENT_ADMINS[want.instrument],
    inputAmount: amount,
    outputAmount: s(output),
    rate: after.isZero() ? '0' : s(floor10(output.div(after))),
    priceImpact: poolIn.isZero() ? '0' : s(ceil10(poolIn.div(rIn.plus(poolIn)))),
    fee: 0.003,
    poolId: 'oneswap-amulet-usdcx',
    expiresIn: 30,
    estimatedTrafficCost: { cc: s(cc), usd: sellingCc ? s(ceil10(fee.times(quote).div(base))) : s(fee) },
    trafficFeeInInput: s(fee),
    inputAmountAfterTrafficFee: s(after),
  };
}

/** What the adapter should make of it: gross = floor(output × amount / (amount − fee)), the fee deducted from the input. */
function expectedAdapter(pool: AmmPool, give: Token, amount: string) {
  const wire = expectedWire(pool, give, amount);
  const fee = x(wire.trafficFeeInInput);
  const gross = floor10(x(wire.outputAmount).times(amount).div(x(amount).minus(fee)));
  return { gross: s(gross), fee: { amount: s(fee), asset: give.symbol, appliedTo: 'deducted_from_give' }, output: wire.outputAmount };
}

// ---------------------------------------------------------------------------------------------
// The wire, read directly.

t.test('oneswap wire: "outputAmount is computed from the input net of the traffic fee", every documented field recomputed from the pool', async (t) => {
  const { spec } = freshOneswap();
  const handler = oneswapWire(spec);
  const pool = poolOf(spec, USDCX);
  for (const [give, want, amount] of [[CC, USDCX, '100'], [USDCX, CC, '1000'], [CC, USDCX, '2500000.1234567891'], [USDCX, CC, '0.0750000001']] as const) {
    const answer = get(handler, QUOTE, q(give.instrument, want.instrument, amount));
    t.equal(answer.status, 200, `${amount} ${give.symbol}`);
    t.strictSame(answer.json, expectedWire(pool, give, amount), `${amount} ${give.symbol}→${want.symbol}`);
  }
  // By hand: 99.5 CC after the fee, 99.2015 into the pool; 1,806,000 × 99.2015 / 12,000,099.2015.
  t.has(get(handler, QUOTE, q('Amulet', 'USDCx', '100')).json, { outputAmount: '14.9297023292', inputAmountAfterTrafficFee: '99.5', trafficFeeInInput: '0.5' });
});

t.test('oneswap wire: "fee is a JSON number" (0.003, the pool fee inside the price), written as decimal text', async (t) => {
  const text = send(oneswapWire(freshOneswap().spec), QUOTE, q('Amulet', 'USDCx', '100')).body;
  t.match(text, /"fee":0\.003,/);
  t.match(text, /"expiresIn":30,/);
  t.match(text, /"outputAmount":"[0-9.]+"/, 'amounts are strings');
});

t.test('oneswap wire: "an amount no larger than the traffic fee is quoted with nothing reaching the pool"', async (t) => {
  const handler = oneswapWire(freshOneswap().spec);
  for (const [from, to, amount, fee] of [['Amulet', 'USDCx', '0.5', '0.5'], ['Amulet', 'USDCx', '0.1', '0.5'], ['USDCx', 'Amulet', '0.075', '0.075']] as const) {
    t.has(get(handler, QUOTE, q(from, to, amount)), {
      status: 200,
      json: { inputAmount: amount, trafficFeeInInput: fee, inputAmountAfterTrafficFee: '0', outputAmount: '0', rate: '0', priceImpact: '0' },
    }, `${amount} ${from}`);
  }
});

t.test('oneswap wire: "X-API-Key: <SANDBOX_VENUE_KEY>" or a 401 {error}', async (t) => {
  const handler = oneswapWire(freshOneswap().spec);
  const refused = { status: 401, json: { error: 'Invalid or missing API key' } };
  const query = q('Amulet', 'USDCx', '100');
  t.strictSame(get(handler, QUOTE, query, {}), refused, 'no key');
  t.strictSame(get(handler, QUOTE, query, { 'x-api-key': 'os_live_other' }), refused, 'another key');
  t.strictSame(get(handler, QUOTE, query, { authorization: `Bearer ${SANDBOX_VENUE_KEY}` }), refused, 'the key in another header');
  t.strictSame(get(handler, '/nowhere', '', {}), refused, 'before routing, as a gateway does');
  t.equal(get(handler, QUOTE, query).status, 200, 'the key');
});

t.test('oneswap wire: "400 validation": missing parameters, an amount that is not a positive decimal of at most 10 digits, from = to', async (t) => {
  const handler = oneswapWire(freshOneswap().spec);
  const missing = { status: 400, json: { error: 'from, to and amount are required' } };
  t.strictSame(get(handler, QUOTE, 'to=USDCx&amount=100'), missing, 'no from');
  t.strictSame(get(handler, QUOTE, 'from=Amulet&amount=100'), missing, 'no to');
  t.strictSame(get(handler, QUOTE, 'from=Amulet&to=USDCx'), missing, 'no amount');
  t.strictSame(get(handler, QUOTE, q('Amulet', 'USDCx', '')), missing, 'an empty amount');
  for (const amount of ['0', '0.0', '-5', 'abc', '1e3', '01', '1.', '1.12345678901', ' 100']) {
    t.strictSame(get(handler, QUOTE, q('Amulet', 'USDCx', encodeURIComponent(amount))), { status: 400, json: { error: 'amount must be a positive decimal with at most 10 fractional digits' } }, `amount '${amount}'`);
  }
  t.strictSame(get(handler, QUOTE, q('Amulet', 'Amulet', '100')), { status: 400, json: { error: 'from and to must be different tokens' } });
});

t.test('oneswap wire: "a pair without a pool" is 404 {error: "Pool not found ..."}, an unknown instrument included', async (t) => {
  const handler = oneswapWire(freshOneswap().spec);
  for (const [from, to] of [['Amulet', 'CBTC'], ['CBTC', 'Amulet'], ['USDCx', 'CBTC'], ['Amulet', 'ETH'], ['CC', 'USDCx']] as const) {
    t.strictSame(get(handler, QUOTE, q(from, to, '100')), { status: 404, json: { error: `Pool not found for ${from}/${to}` } }, `${from}/${to}`);
  }
});

t.test('oneswap wire: "an unknown path is 404 {error}", worded so the adapter cannot take it for no_pool', async (t) => {
  const handler = oneswapWire(freshOneswap().spec);
  for (const [path, method] of [['/api/v1/pools', 'GET'], ['/api/v1/quote/', 'GET'], ['/', 'GET'], ['/health', 'GET'], [QUOTE, 'POST']] as const) {
    const answer = send(handler, path, q('Amulet', 'USDCx', '100'), KEYED, method);
    t.strictSame(answer, { status: 404, body: '{"error":"Not found"}' }, `${method} ${path}`);
    t.notMatch(answer.body, /pool|pair/i);
  }
});

t.test('oneswap wire: "never mutates the state": the pool\'s reserves are as they were after any requests', async (t) => {
  const { spec } = freshOneswap();
  const pool = poolOf(spec, USDCX);
  const before = [pool.baseReserve.toFixed(), pool.quoteReserve.toFixed()];
  const handler = oneswapWire(spec);
  for (const query of [q('Amulet', 'USDCx', '5000000'), q('USDCx', 'Amulet', '900000'), q('Amulet', 'USDCx', '0.1'), q('Amulet', 'CBTC', '1')]) send(handler, QUOTE, query);
  t.strictSame([pool.baseReserve.toFixed(), pool.quoteReserve.toFixed()], before);
});

t.test('oneswap wire: "only OneSwap\'s venue": a book venue, a minimum order, or no CC/USDCx pool is refused at construction', async (t) => {
  const venues = createSandboxVenues();
  t.throws(() => oneswapWire(venues.find((v) => v.id === 'temple')!.spec), /AMM venue/);
  const { spec } = freshOneswap();
  t.throws(() => oneswapWire({ ...spec, minCc: dec('1') }), /no minimum order/);
  t.throws(() => oneswapWire({ ...spec, pricing: { kind: 'amm', inPriceFeeBps: 30, pools: [] } }), /CC\/USDCx pool/);
});

// ---------------------------------------------------------------------------------------------
// The real adapter through the wire.

t.test('oneswap adapter over the wire: "an available quote whose net recomputes from the pool"', async (t) => {
  const { spec } = freshOneswap();
  const venue = adapter(oneswapWire(spec));
  const pool = poolOf(spec, USDCX);
  for (const [give, want, amount] of [[CC, USDCX, '100'], [USDCX, CC, '1000'], [CC, USDCX, '123.4567890123'], [USDCX, CC, '250000'], [CC, USDCX, '0.6']] as const) {
    const label = `${amount} ${give.symbol}→${want.symbol}`;
    const exp = expectedAdapter(pool, give, amount);
    const quote = await ask(venue, give, want, amount);
    t.strictSame(plainQuote(quote), { gross: exp.gross, fee: exp.fee }, label);
    // The service's net of that gross is what OneSwap said it pays, or one unit under it.
    const net = shown(quote, give, want, amount).net ?? 'none';
    t.ok([exp.output, s(x(exp.output).minus('1e-10'))].includes(net), `${label}: net ${net}, outputAmount ${exp.output}`);
  }
  // By hand: 14.9297023292 × 100 / 99.5 = 15.00472595899…
  t.has(plainQuote(await ask(venue, CC, USDCX, '100')), { gross: '15.0047259589' });
});

t.test('oneswap adapter over the wire: "economically the same venue" as the in-process sandbox oneswap: same pool and fees, a net no lower and within 1e-6', async (t) => {
  const oneswap = freshOneswap();
  const venue = adapter(oneswapWire(oneswap.spec));
  for (const [give, want, amount] of [[CC, USDCX, '100'], [CC, USDCX, '1000000'], [USDCX, CC, '15'], [USDCX, CC, '300000'], [CC, USDCX, '1000000000']] as const) {
    const label = `${amount} ${give.symbol}→${want.symbol}`;
    const [wire, local] = [shown(await ask(venue, give, want, amount), give, want, amount), shown(await ask(oneswap, give, want, amount), give, want, amount)];
    t.strictSame(wire.fee, local.fee, `${label}: the same fee`);
    if (!wire.net || !local.net) {
      t.fail(`${label}: not quoted`);
      continue;
    }
    // The wire prices the curve at the net input, the in-process venue scales the full amount's
    // output down: the curve is concave, so the wire's net is the higher, by a hair.
    t.ok(x(wire.net).gte(local.net), `${label}: ${wire.net} ≥ ${local.net}`);
    t.ok(x(wire.net).minus(local.net).div(local.net).lt('1e-6'), `${label}: within 1e-6`);
  }
});

t.test('oneswap adapter over the wire: each rejection the sandbox oneswap produces — no_pool, below_minimum — as the in-process venue', async (t) => {
  const oneswap = freshOneswap();
  const venue = adapter(oneswapWire(oneswap.spec));
  for (const [give, want] of [[CC, CBTC], [CBTC, CC], [USDCX, CBTC]] as const) {
    t.equal(plainQuote(await ask(venue, give, want, '100')), 'no_pool', `${give.symbol}→${want.symbol}`);
    t.equal(plainQuote(await ask(oneswap, give, want, '100')), 'no_pool', `${give.symbol}→${want.symbol}, in-process`);
  }
  // No more than the traffic fee, or so little over it that the pool pays nothing.
  for (const [give, want, amount] of [[CC, USDCX, '0.5'], [CC, USDCX, '0.3'], [USDCX, CC, '0.075'], [CC, USDCX, '0.5000000001'], [USDCX, CC, '0.0000000001']] as const) {
    const label = `${amount} ${give.symbol}`;
    t.equal(plainQuote(await ask(venue, give, want, amount)), 'below_minimum', label);
    t.equal(shown(await ask(oneswap, give, want, amount), give, want, amount).rejectionCode, 'below_minimum', `${label}, in-process as the service shows it`);
  }
});

t.test('oneswap adapter over the wire: "no price-impact cap" — a trade of many times the pool is quoted, as the in-process venue quotes it', async (t) => {
  const oneswap = freshOneswap();
  const venue = adapter(oneswapWire(oneswap.spec));
  const impact = (get(oneswapWire(oneswap.spec), QUOTE, q('Amulet', 'USDCx', '100000000')).json as { priceImpact: string }).priceImpact;
  t.ok(x(impact).gt('0.15'), `price impact ${impact}, past the real venue's 15 %`);
  const { gross, fee } = expectedAdapter(poolOf(oneswap.spec, USDCX), CC, '100000000');
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '100000000')), { gross, fee });
  t.equal((await ask(oneswap, CC, USDCX, '100000000')).available, true, 'in-process');
});

t.test('oneswap adapter over the wire: a wrong key is the venue\'s 401, thrown (the engine reports venue_error)', async (t) => {
  const failure = await ask(adapter(oneswapWire(freshOneswap().spec), 'os_live_wrong'), CC, USDCX, '100').catch((err: unknown) => err);
  t.ok(failure instanceof VenueHttpError && failure.status === 401, 'HTTP 401');
  t.strictSame(failure instanceof VenueHttpError && failure.body, { error: 'Invalid or missing API key' });
});

t.test('oneswap probe over the wire: "live, with CC/USDCx only" (the CBTC probe is a no-pool 404), as the in-process venue', async (t) => {
  const oneswap = freshOneswap();
  const live = await adapter(oneswapWire(oneswap.spec)).probe(neverAborted());
  t.strictSame(live, { live: true, pairs: ['CC/USDCx'] });
  t.strictSame(live, await oneswap.probe());
  t.strictSame(await adapter(oneswapWire(oneswap.spec), 'os_live_wrong').probe(neverAborted()), { live: false, pairs: [] }, 'refused without the key');
});

t.test('oneswap adapter over the wire: "quotes move when the pool\'s reserves change in the state object"', async (t) => {
  const { spec } = freshOneswap();
  const handler = oneswapWire(spec);
  const venue = adapter(handler);
  const pool = poolOf(spec, USDCX);
  const before = plainQuote(await ask(venue, CC, USDCX, '100'));
  t.has(before, { gross: '15.0047259589' });
  // Another part of the system moves the pool: CC gets dearer.
  pool.baseReserve = dec('10000000');
  pool.quoteReserve = dec('2000000');
  const after = plainQuote(await ask(venue, CC, USDCX, '100'));
  t.strictSame(after, { gross: expectedAdapter(pool, CC, '100').gross, fee: { amount: '0.5', asset: 'CC', appliedTo: 'deducted_from_give' } });
  t.notSame(after, before);
  // By hand: 2,000,000 × 99.2015 / 10,000,099.2015 = 19.84010318320…; USD 0.5 × 2,000,000 / 10,000,000.
  t.has(get(handler, QUOTE, q('Amulet', 'USDCx', '100')).json, { outputAmount: '19.8401031832', estimatedTrafficCost: { cc: '0.5', usd: '0.1' } });
  t.has(plainQuote(await ask(venue, USDCX, CC, '1000')), { gross: expectedAdapter(pool, USDCX, '1000').gross });
});
