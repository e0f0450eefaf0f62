// Nightly CantonSwap's sandbox market and wire (sandbox/venues/nightly.ts): its answers to GET
// /nswap/tokens and POST /nswap/quote read directly, and the real Nightly adapter
// (core/venues/nightly.ts) quoting through it, with every figure recomputed from the spec's pools
// by an independent decimal.js instance.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import { type AmmPool, SandboxVenue, type SandboxVenueSpec } from '../../../sandbox/venues/sandbox-venue.js';
import { createNightlySpec, NIGHTLY_MAX_SWAP_USD, NIGHTLY_SWAP_ADDRESS, nightlyQuoteBook, nightlyWire } from '../../../sandbox/venues/nightly.js';
import type { WireHandler } from '../../../sandbox/venues/wire.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { NightlyVenue } from '../../../core/venues/nightly.js';
import { VenueHttpError } from '../../../core/venues/venue-http.js';
import { neverAborted, noDeadline, plainQuote } from '../../helpers/venue-fetch.js';
import { ceil10, floor10, s, x, X } from '../../helpers/exact.js';
import { wireFetch } from '../../helpers/wire-fetch.js';

const TENTH_NANO = x('0.0000000001');

const FEE_BPS = 20;
const MIN_CC = '25';
const PARTY = `bestex-quotes::1220${'a'.repeat(64)}`;

// ---------------------------------------------------------------------------------------------
// The state, and the venue's figures recomputed from it.
const poolsOf = (spec: SandboxVenueSpec): readonly AmmPool[] => (spec.pricing.kind === 'amm' ? spec.pricing.pools : []);
const poolOf = (spec: SandboxVenueSpec, quote: Token): AmmPool => {
  const pool = poolsOf(spec).find((p) => p.quote === quote);
  if (!pool) throw new Error(`no ${quote.symbol} pool`);
  return pool;
};
/** A spec with only the pools of `quotes`, as another market's Nightly might have. */
function specWith(...quotes: Token[]): SandboxVenueSpec {
  const spec = createNightlySpec();
  return { ...spec, pricing: { kind: 'amm', inPriceFeeBps: FEE_BPS, pools: poolsOf(spec).filter((p) => quotes.includes(p.quote)) } };
}

/** The reserves a trade of `give` for `want` runs through, in then out. */
function reserves(spec: SandboxVenueSpec, give: Token, want: Token): [X, X] {
  const pool = poolOf(spec, give === CC ? want : give);
  const [base, quote] = [x(pool.baseReserve.toFixed()), x(pool.quoteReserve.toFixed())];
  return give === CC ? [base, quote] : [quote, base];
}
/** in′ = amount × (1 − 20/10000). */
const afterFee = (amount: string): X => x(amount).times(10_000 - FEE_BPS).div(10_000);
/** out = rOut × in′ / (rIn + in′), rounded down. */
function out(spec: SandboxVenueSpec, give: Token, want: Token, amount: string): string {
  const [rIn, rOut] = reserves(spec, give, want);
  const effIn = afterFee(amount);
  return s(floor10(rOut.times(effIn).div(rIn.plus(effIn))));
}
const ccPrice = (spec: SandboxVenueSpec): X => {
  const pool = poolOf(spec, USDCX);
  return floor10(x(pool.quoteReserve.toFixed()).div(pool.baseReserve.toFixed()));
};
const cbtcPrice = (spec: SandboxVenueSpec): X => {
  const pool = poolOf(spec, CBTC);
  return floor10(ccPrice(spec).times(pool.baseReserve.toFixed()).div(pool.quoteReserve.toFixed()));
};
/** What must be given of `token` (not CC) to buy 25 CC: in = rX × 25 / ((rCc − 25) × 0.998), rounded up. */
function listedMin(spec: SandboxVenueSpec, token: Token): X {
  const pool = poolOf(spec, token);
  return ceil10(x(pool.quoteReserve.toFixed()).times(MIN_CC).div(x(pool.baseReserve.toFixed()).minus(MIN_CC).times('0.998')));
}

// ---------------------------------------------------------------------------------------------
// The wire, called directly and through the adapter.
interface Answer {
  readonly status: number;
  readonly json: Record<string, unknown>;
}
function call(handler: WireHandler, method: string, path: string, body = ''): Answer {
  const answer = handler({ method, path, query: new URLSearchParams(), headers: {}, body });
  return { status: answer.status, json: JSON.parse(answer.body) as Record<string, unknown> };
}
const quoteBody = (give: Token, want: Token, amount: string, extra: Record<string, unknown> = {}) =>
  JSON.stringify({ fromToken: give.instrument, toToken: want.instrument, amount, recipient: PARTY, ...extra });
const postQuote = (handler: WireHandler, body: string) => call(handler, 'POST', '/nswap/quote', body);
const tokensOf = (handler: WireHandler) => call(handler, 'GET', '/nswap/tokens').json.tokens as Array<Record<string, unknown>>;
const entry = (handler: WireHandler, instrumentId: string) => tokensOf(handler).find((e) => e.instrumentId === instrumentId)!;

const BASE = 'http://sandbox.invalid/nightly';
function adapter(handler: WireHandler, recipient = PARTY): NightlyVenue {
  return new NightlyVenue({ baseUrl: BASE, timeoutMs: 5000, fetch: wireFetch(handler, BASE), recipient });
}
const ask = (venue: NightlyVenue | SandboxVenue, give: Token, want: Token, amount: string) => venue.quote({ give, want, amount: dec(amount) }, noDeadline());

/** A market's Nightly: its spec (the state), its wire and the adapter over it. */
function setup(spec = createNightlySpec()) {
  const wire = nightlyWire(spec);
  return { spec, wire, venue: adapter(wire) };
}

/** Trades through every pool both ways, at sizes the README's tour uses. */
const TRADES: Array<[Token, Token, string]> = [
  [CC, USDCX, '100'],
  [CC, USDCX, '5000'],
  [USDCX, CC, '250'],
  [CC, CBTC, '5000'],
  [CBTC, CC, '0.01'],
];

// ---------------------------------------------------------------------------------------------
t.test('createNightlySpec: "constant-product AMM, 0.20 % inside the price, nothing outside it, minimum 25 CC", the seeds in the header, fresh pools per call', async (t) => {
  const spec = createNightlySpec();
  t.equal(spec.id, 'nightly');
  t.equal(spec.pricing.kind, 'amm');
  t.equal(spec.pricing.kind === 'amm' && spec.pricing.inPriceFeeBps, FEE_BPS);
  t.strictSame(
    poolsOf(spec).map((p) => [p.quote.symbol, p.baseReserve.toFixed(), p.quoteReserve.toFixed()]),
    [
      ['USDCx', '16000000', '2396000'],
      ['CBTC', '6000000', '8.97'],
    ],
  );
  t.equal(spec.minCc?.toFixed(), MIN_CC);
  t.equal(spec.fee({ give: CC, want: USDCX, amount: dec('100') }, { gross: dec('14'), ccSize: dec('100') }), null);
  const again = createNightlySpec();
  t.not(poolOf(again, USDCX), poolOf(spec, USDCX), 'each spec owns its pools');
  t.strictSame(poolsOf(again).map((p) => p.baseReserve.toFixed()), poolsOf(spec).map((p) => p.baseReserve.toFixed()), 'deterministic');
  const others = createSandboxVenues().filter((v) => v.id !== 'nightly').flatMap((v) => (v.spec.pricing.kind === 'amm' ? v.spec.pricing.pools.map((p) => `${p.baseReserve.toFixed()}/${p.quoteReserve.toFixed()}`) : []));
  for (const p of poolsOf(spec)) t.notOk(others.includes(`${p.baseReserve.toFixed()}/${p.quoteReserve.toFixed()}`), `seed ${p.quote.symbol} is not another venue's`);
  t.notOk(
    createSandboxVenues().some((v) => v.id !== 'nightly' && v.spec.pricing.kind === 'amm' && v.spec.pricing.inPriceFeeBps === FEE_BPS),
    'no other venue has the same in-price fee',
  );
});

t.test('GET /nswap/tokens: "the documented ApiToken fields", Amulet and each pooled token, amounts as strings', async (t) => {
  const { wire } = setup();
  const answer = call(wire, 'GET', '/nswap/tokens');
  t.equal(answer.status, 200);
  t.strictSame(Object.keys(answer.json), ['tokens']);
  const tokens = answer.json.tokens as Array<Record<string, unknown>>;
  t.strictSame(tokens.map((e) => [e.index, e.instrumentId, e.symbol]), [
    [0, 'Amulet', 'Amulet'],
    [1, 'USDCx', 'USDCx'],
    [2, 'CBTC', 'CBTC'],
  ]);
  const fields = ['index', 'instrumentId', 'name', 'symbol', 'decimals', 'displayDecimals', 'iconUrl', 'price', 'instrumentAdmin', 'minSwapAmount', 'maxSwapUsd'];
  for (const e of tokens) {
    t.strictSame(Object.keys(e).sort(), [...fields].sort(), `${String(e.instrumentId)}'s fields`);
    for (const f of ['price', 'minSwapAmount', 'maxSwapUsd', 'name', 'iconUrl', 'instrumentAdmin']) t.type(e[f], 'string', `${String(e.instrumentId)}.${f} is a string`);
    t.equal(e.decimals, 10);
    t.match(e.instrumentAdmin, /^[A-Za-z0-9-]+::1220[0-9a-f]{64}$/);
  }
  t.strictSame(tokensOf(nightlyWire(specWith(USDCX))).map((e) => e.instrumentId), ['Amulet', 'USDCx'], 'no CBTC pool: CBTC not listed');
});

t.test('GET /nswap/tokens: "price is USD per token from the current reserves, rounded down"; maxSwapUsd 50000', async (t) => {
  const { spec, wire } = setup();
  t.equal(entry(wire, 'Amulet').price, '0.14975');
  t.equal(entry(wire, 'USDCx').price, '1');
  t.equal(entry(wire, 'CBTC').price, s(cbtcPrice(spec)));
  t.equal(s(cbtcPrice(spec)).slice(0, 7), '100167.', 'CBTC about 100,167 USD, as the header says');
  for (const e of tokensOf(wire)) t.equal(e.maxSwapUsd, '50000');
  t.equal(NIGHTLY_MAX_SWAP_USD.toFixed(), '50000');
  const noUsd = nightlyWire(specWith(CBTC));
  t.strictSame(tokensOf(noUsd).map((e) => e.price), ['0', '0'], 'no USDCx pool: no price');
});

t.test('GET /nswap/tokens: "minSwapAmount is 25 for Amulet; for another token what buys 25 CC now, rounded up"', async (t) => {
  const { spec, wire } = setup();
  t.equal(entry(wire, 'Amulet').minSwapAmount, MIN_CC);
  for (const token of [USDCX, CBTC]) {
    const min = listedMin(spec, token);
    t.equal(entry(wire, token.instrument).minSwapAmount, s(min), `${token.symbol}: ${s(min)}`);
    t.ok(x(out(spec, token, CC, s(min))).gte(MIN_CC), `${token.symbol}: the listed minimum buys at least 25 CC`);
    t.ok(x(out(spec, token, CC, s(min.minus(TENTH_NANO)))).lt(MIN_CC), `${token.symbol}: 1e-10 less buys less`);
  }
  t.strictSame(
    tokensOf(nightlyWire({ ...createNightlySpec(), minCc: undefined })).map((e) => e.minSwapAmount),
    ['0', '0', '0'],
    'a spec without a minimum lists none',
  );
});

t.test('POST /nswap/quote: "toAmount = rOut × in′ / (rIn + in′), in′ = amount × 0.998, rounded down", and the documented fields', async (t) => {
  const { spec, wire } = setup();
  for (const [give, want, amount] of TRADES) {
    const answer = postQuote(wire, quoteBody(give, want, amount));
    t.equal(answer.status, 200);
    const toAmount = out(spec, give, want, amount);
    const [rIn] = reserves(spec, give, want);
    const effIn = afterFee(amount);
    t.strictSame(
      { ...answer.json, memo: undefined },
      {
        fromToken: give.instrument,
        toToken: want.instrument,
        fromAmount: amount,
        toAmount,
        minOutAmount: s(floor10(x(toAmount).times('0.995'))),
        rate: s(floor10(x(toAmount).div(amount))),
        priceImpact: s(floor10(effIn.div(rIn.plus(effIn)))),
        memo: undefined,
        swapAddress: NIGHTLY_SWAP_ADDRESS,
      },
      `${amount} ${give.symbol} → ${want.symbol}: ${toAmount}`,
    );
    t.match(answer.json.memo, /^nswap-[0-9a-f]{16}$/);
  }
  t.equal(out(spec, CC, USDCX, '100'), '14.9449567808', 'a figure by hand: 2,396,000 × 99.8 / 16,000,099.8');
});

t.test('POST /nswap/quote: "minOutAmount = toAmount × (1 − slippageTolerance), rounded down", a JSON number or a string', async (t) => {
  const { spec, wire } = setup();
  const toAmount = x(out(spec, CC, USDCX, '5000'));
  const raw = `{"fromToken":"Amulet","toToken":"USDCx","amount":5000,"recipient":"${PARTY}","slippageTolerance":0.0123456789}`;
  const byNumber = postQuote(wire, raw);
  t.equal(byNumber.status, 200, 'the amount as a JSON number too');
  t.equal(byNumber.json.minOutAmount, s(floor10(toAmount.times(x('1').minus('0.0123456789')))));
  t.equal(postQuote(wire, quoteBody(CC, USDCX, '5000', { slippageTolerance: '0.02' })).json.minOutAmount, s(floor10(toAmount.times('0.98'))));
  t.equal(postQuote(wire, quoteBody(CC, USDCX, '5000', { slippageTolerance: '0' })).json.minOutAmount, s(toAmount));
});

t.test('POST /nswap/quote: "two quotes of the same market state have the same figures and different memos", each memo in the quote book', async (t) => {
  const { spec, wire } = setup();
  const once = postQuote(wire, quoteBody(CC, USDCX, '100'));
  const twice = postQuote(wire, quoteBody(CC, USDCX, '100'));
  t.strictSame({ ...twice.json, memo: undefined }, { ...once.json, memo: undefined }, 'the same figures');
  t.not(twice.json.memo, once.json.memo, 'a memo names one quote: settled once, it cannot stand for the next');
  const book = nightlyQuoteBook(spec);
  for (const answer of [once, twice]) {
    const redeemed = book.redeem(answer.json.memo as string);
    t.ok('quote' in redeemed && redeemed.quote.recipient === PARTY && s(x(redeemed.quote.minOutAmount.toFixed())) === answer.json.minOutAmount, `${String(answer.json.memo)} is in the book with its recipient and minOutAmount`);
  }
});

t.test('POST /nswap/quote: "a recipient that is not a party id is refused", 400 {message}', async (t) => {
  const { wire } = setup();
  const bad = [undefined, '', 'alice', `alice::1220${'A'.repeat(64)}`, `alice::1220${'a'.repeat(63)}`, `alice::1221${'a'.repeat(64)}`, `::1220${'a'.repeat(64)}`, 42];
  for (const recipient of bad) {
    const answer = postQuote(wire, quoteBody(CC, USDCX, '100', { recipient }));
    t.equal(answer.status, 400, `recipient ${JSON.stringify(recipient)}`);
    t.strictSame(Object.keys(answer.json), ['message']);
    t.match(answer.json.message, /recipient/);
  }
  await t.rejects(ask(adapter(wire, 'not-a-party'), CC, USDCX, '100'), VenueHttpError, 'through the adapter: HTTP 400, which it reports as venue_error');
});

t.test('POST /nswap/quote: "unlisted token, same token, no pool, a bad amount or slippage, not a JSON object" are 400 {message}', async (t) => {
  const { wire } = setup();
  const cases: Array<[string, string, RegExp]> = [
    ['unlisted token', quoteBody(CC, USDCX, '100', { toToken: 'CETH' }), /CETH/],
    ['a symbol, not an instrumentId', quoteBody(CC, USDCX, '100', { fromToken: 'CC' }), /Unsupported token: CC/],
    ['the same token', quoteBody(CC, CC, '100'), /differ/],
    ['no pool: USDCx/CBTC', quoteBody(USDCX, CBTC, '100'), /No pool for USDCx\/CBTC/],
    ['amount 0', quoteBody(CC, USDCX, '0'), /amount/],
    ['amount negative', quoteBody(CC, USDCX, '-100'), /amount/],
    ['amount with 11 fractional digits', quoteBody(CC, USDCX, '100.00000000001'), /amount/],
    ['amount in exponent notation', quoteBody(CC, USDCX, '1e3'), /amount/],
    ['amount missing', quoteBody(CC, USDCX, '100', { amount: undefined }), /amount/],
    ['slippage 1', quoteBody(CC, USDCX, '100', { slippageTolerance: '1' }), /slippageTolerance/],
    ['slippage negative', quoteBody(CC, USDCX, '100', { slippageTolerance: '-0.01' }), /slippageTolerance/],
    ['slippage not a number', quoteBody(CC, USDCX, '100', { slippageTolerance: 'low' }), /slippageTolerance/],
    ['not JSON', 'nope', /JSON/],
    ['a JSON list', '[]', /JSON object/],
  ];
  for (const [name, body, message] of cases) {
    const answer = postQuote(wire, body);
    t.equal(answer.status, 400, name);
    t.strictSame(Object.keys(answer.json), ['message'], `${name}: {message}`);
    t.match(answer.json.message, message, name);
  }
  const noCbtc = nightlyWire(specWith(USDCX));
  t.equal(postQuote(noCbtc, quoteBody(CC, CBTC, '5000')).status, 400, 'CBTC where the spec has no CBTC pool');
});

t.test('POST /nswap/quote: "below the minimum" (25 CC a side) and "above maxSwapUsd at the listed price" are 400 {message}', async (t) => {
  const { spec, wire } = setup();
  const below = postQuote(wire, quoteBody(CC, USDCX, '24.9999999999'));
  t.equal(below.status, 400);
  t.match(below.json.message, /below the minimum swap amount of 25 Amulet/);
  t.equal(postQuote(wire, quoteBody(CC, USDCX, '25')).status, 200, 'exactly 25 CC');
  const usdMin = listedMin(spec, USDCX);
  t.equal(postQuote(wire, quoteBody(USDCX, CC, s(usdMin))).status, 200, 'the listed USDCx minimum');
  const belowUsd = postQuote(wire, quoteBody(USDCX, CC, s(usdMin.minus(TENTH_NANO))));
  t.equal(belowUsd.status, 400, 'buying less than 25 CC');
  t.match(belowUsd.json.message, new RegExp(`below the minimum swap amount of ${s(usdMin).replace('.', '\\.')} USDCx`));
  // The smallest CC amount worth more than 50,000 USD at 0.14975.
  const overCc = ceil10(x('50000').div(ccPrice(spec)));
  const above = postQuote(wire, quoteBody(CC, USDCX, s(overCc)));
  t.equal(above.status, 400);
  t.match(above.json.message, /maximum swap value of 50000 USD/);
  t.equal(postQuote(wire, quoteBody(CC, USDCX, s(overCc.minus(TENTH_NANO)))).status, 200, 'just within 50,000 USD');
  t.equal(postQuote(wire, quoteBody(USDCX, CC, '50000.0000000001')).status, 400, 'USDCx at 1 USD');
  t.equal(postQuote(wire, quoteBody(USDCX, CC, '50000')).status, 200);
});

t.test('"an unknown path answers 404, another method 405", both {message}', async (t) => {
  const { wire } = setup();
  for (const path of ['/nswap/quotes', '/', '/tokens', '/nswap/tokens/1']) {
    const answer = call(wire, 'GET', path);
    t.equal(answer.status, 404, path);
    t.strictSame(Object.keys(answer.json), ['message']);
  }
  t.equal(call(wire, 'GET', '/nswap/quote').status, 405);
  t.equal(call(wire, 'POST', '/nswap/tokens', '{}').status, 405);
  t.throws(() => nightlyWire(createSandboxVenues().find((v) => v.id === 'temple')!.spec), /AMM/, 'an order-book spec is not a Nightly market');
});

// ---------------------------------------------------------------------------------------------
t.test('adapter over the wire: "gross = toAmount, fee null", the net recomputed from the pool reserves', async (t) => {
  const { spec, venue } = setup();
  for (const [give, want, amount] of TRADES) {
    const q = await ask(venue, give, want, amount);
    const gross = out(spec, give, want, amount);
    t.strictSame(plainQuote(q), { gross, fee: null }, `${amount} ${give.symbol} → ${want.symbol}`);
    const wire = toQuoteVenue('nightly', dec(amount), want, give, q);
    t.equal(wire.net, gross, 'net = gross: no fee outside the price');
    t.equal(wire.feeBps, 0);
  }
});

t.test('adapter over the wire: "no_pool" for a pair without CC, and for CBTC where the spec has no CBTC pool', async (t) => {
  t.equal(plainQuote(await ask(setup().venue, USDCX, CBTC, '100')), 'no_pool');
  const { venue } = setup(specWith(USDCX));
  t.equal(plainQuote(await ask(venue, CC, CBTC, '5000')), 'no_pool');
  t.equal(plainQuote(await ask(venue, CBTC, CC, '0.01')), 'no_pool');
  t.ok((await ask(venue, CC, USDCX, '100')).available, 'its USDCx pool still quotes');
});

t.test('adapter over the wire: "below minSwapAmount → below_minimum", the listed minimum itself available', async (t) => {
  const { spec, venue } = setup();
  t.equal(plainQuote(await ask(venue, CC, USDCX, '24.9999999999')), 'below_minimum');
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '25')), { gross: out(spec, CC, USDCX, '25'), fee: null });
  for (const token of [USDCX, CBTC]) {
    const min = listedMin(spec, token);
    t.equal(plainQuote(await ask(venue, token, CC, s(min.minus(TENTH_NANO)))), 'below_minimum', `${token.symbol} just below ${s(min)}`);
    t.strictSame(plainQuote(await ask(venue, token, CC, s(min))), { gross: out(spec, token, CC, s(min)), fee: null }, `${token.symbol} at ${s(min)}`);
  }
});

t.test('adapter over the wire: "above maxSwapUsd at the give token\'s price → above_maximum"', async (t) => {
  const { spec, venue } = setup();
  const overCc = ceil10(x('50000').div(ccPrice(spec)));
  t.equal(plainQuote(await ask(venue, CC, USDCX, s(overCc))), 'above_maximum');
  t.ok((await ask(venue, CC, USDCX, s(overCc.minus(TENTH_NANO)))).available, 'just within');
  const overCbtc = ceil10(x('50000').div(cbtcPrice(spec)));
  t.equal(plainQuote(await ask(venue, CBTC, CC, s(overCbtc))), 'above_maximum', `CBTC: ${s(overCbtc)}`);
  t.ok((await ask(venue, CBTC, CC, s(overCbtc.minus(TENTH_NANO)))).available);
});

t.test('adapter probe over the wire: "live, pairs = CC with each pooled token"', async (t) => {
  t.strictSame(await setup().venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] });
  t.strictSame(await setup(specWith(USDCX)).venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx'] });
  t.strictSame(await setup(specWith(CBTC)).venue.probe(neverAborted()), { live: true, pairs: ['CC/CBTC'] });
});

t.test('"quotes move when the pool reserves change in the state object", through the same adapter', async (t) => {
  const { spec, wire, venue } = setup();
  const before = plainQuote(await ask(venue, CC, USDCX, '5000'));
  const pool = poolOf(spec, USDCX);
  // Another part of the system trades 1,000,000 CC into the pool.
  pool.baseReserve = dec('17000000');
  pool.quoteReserve = dec('2255300.5');
  const after = plainQuote(await ask(venue, CC, USDCX, '5000'));
  t.not(JSON.stringify(after), JSON.stringify(before));
  t.strictSame(after, { gross: out(spec, CC, USDCX, '5000'), fee: null }, 'recomputed from the new reserves');
  t.equal(entry(wire, 'Amulet').price, s(ccPrice(spec)), 'the listed price moves too');
  t.equal(entry(wire, 'USDCx').minSwapAmount, s(listedMin(spec, USDCX)), 'and the listed minimum');
});

t.test('"the same venue as the in-process SandboxVenue of the same spec": same gross and rejections through the adapter', async (t) => {
  const spec = createNightlySpec();
  const inProcess = new SandboxVenue(spec);
  const { venue } = setup(spec);
  t.equal(inProcess.id, 'nightly');
  const cases: Array<[Token, Token, string]> = [...TRADES, [CC, USDCX, '24.9999999999'], [CC, USDCX, '25'], [USDCX, CC, '1000'], [CBTC, CC, '0.0001'], [CBTC, CC, '0.00003'], [USDCX, CC, '3']];
  for (const [give, want, amount] of cases) {
    t.strictSame(plainQuote(await ask(venue, give, want, amount)), plainQuote(await ask(inProcess, give, want, amount)), `${amount} ${give.symbol} → ${want.symbol}`);
  }
  poolOf(spec, CBTC).quoteReserve = dec('9.5');
  t.strictSame(plainQuote(await ask(venue, CC, CBTC, '5000')), plainQuote(await ask(inProcess, CC, CBTC, '5000')), 'after the CBTC pool moves');
  t.strictSame(await venue.probe(neverAborted()), await inProcess.probe(), 'the same pairs');
});
