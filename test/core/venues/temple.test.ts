// The Temple adapter (core/venues/temple.ts) against order-book fixtures of the third-party SDK's
// shape (GET /api/v1/market/orderbook?symbol=Amulet/USDCx&levels=N -> bids/asks [{price,
// quantity}]), served by a fake fetch; and against the sandbox's temple (sandbox/venues/market.ts)
// over the same book, which must agree on every figure.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import type { OrderBook } from '../../../sandbox/venues/sandbox-venue.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { TempleVenue } from '../../../core/venues/temple.js';
import { VenueHttpError, VenueUnreadable } from '../../../core/venues/venue-http.js';
import { deadlineIn, fakeFetch, neverAborted, noDeadline, plainQuote, type Reply, type SentRequest as Call } from '../../helpers/venue-fetch.js';

// ---------------------------------------------------------------------------------------------
// The sandbox temple's books, served in the SDK's shape.
const sandboxTemple = createSandboxVenues().find((v) => v.id === 'temple');
if (!sandboxTemple || sandboxTemple.spec.pricing.kind !== 'book') throw new Error('no sandbox temple book');
const SANDBOX_BOOKS = sandboxTemple.spec.pricing.books;

const bookJson = (book: OrderBook, order: (levels: Array<{ price: string; quantity: string }>) => unknown[] = (l) => l): string =>
  JSON.stringify({
    bids: order(book.bids.map((l) => ({ price: l.price.toFixed(), quantity: l.quantity.toFixed() }))),
    asks: order(book.asks.map((l) => ({ price: l.price.toFixed(), quantity: l.quantity.toFixed() }))),
  });
const bookFor = (symbol: string | null) => SANDBOX_BOOKS.find((b) => `Amulet/${b.quote.symbol}` === symbol);

const BASE = 'https://temple.example.invalid';
const KEY = 'tdg_test_key_0001';

/** A venue over the fake; `onBook` answers GET orderbook for a symbol (default: the sandbox's books). */
function setup(onBook?: (symbol: string | null, call: Call) => Reply, options: { timeoutMs?: number; takerFeeBps?: number } = {}) {
  const route = onBook ?? ((symbol: string | null) => {
    const book = bookFor(symbol);
    return book ? { body: bookJson(book) } : { status: 404, body: '{"error":"unknown symbol"}' };
  });
  const fake = fakeFetch((call) => route(new URL(call.url).searchParams.get('symbol'), call));
  const venue = new TempleVenue({ baseUrl: BASE, timeoutMs: options.timeoutMs ?? 600_000, fetch: fake.fetch, headers: { 'X-API-Key': KEY }, ...(options.takerFeeBps === undefined ? {} : { takerFeeBps: options.takerFeeBps }) });
  return { venue, calls: fake.calls };
}

const deadline = noDeadline();
const ask = (venue: { quote: TempleVenue['quote'] }, give: Token, want: Token, amount: string) => venue.quote({ give, want, amount: dec(amount) }, deadline);


// ---------------------------------------------------------------------------------------------
t.test('temple: "selling CC walks bids", 1 bp taker fee deducted from the give amount; GET orderbook with X-API-Key', async (t) => {
  const { venue, calls } = setup();
  // 40,000 × 0.15 + 10,000 × 0.1498 = 6000 + 1498; fee 50,000 × 0.0001 = 5 CC.
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: '7498', fee: { amount: '5', asset: 'CC', appliedTo: 'deducted_from_give' } });
  t.equal(calls.length, 1);
  t.equal(calls[0]?.method, 'GET');
  t.equal(calls[0]?.url, `${BASE}/api/v1/market/orderbook?symbol=Amulet/USDCx&levels=100`);
  t.equal(calls[0]?.headers['X-API-Key'], KEY);
});

t.test('temple: "buying CC with USDCx walks asks" — 100 USDCx / 0.1503, fee 0.01 USDCx', async (t) => {
  const { venue, calls } = setup();
  t.strictSame(plainQuote(await ask(venue, USDCX, CC, '100')), { gross: '665.3359946773', fee: { amount: '0.01', asset: 'USDCx', appliedTo: 'deducted_from_give' } });
  t.strictSame(plainQuote(await ask(venue, CC, CBTC, '1000')), { gross: '0.001499', fee: { amount: '0.1', asset: 'CC', appliedTo: 'deducted_from_give' } });
  t.equal(calls[1]?.url, `${BASE}/api/v1/market/orderbook?symbol=Amulet/CBTC&levels=100`);
});

t.test('temple: "the walk over the sandbox\'s book gives the same figures as the sandbox temple"', async (t) => {
  const { venue } = setup();
  const cases: Array<[Token, Token, string]> = [
    [CC, USDCX, '1'],
    [CC, USDCX, '123.4567890123'],
    [CC, USDCX, '40000'],
    [CC, USDCX, '50000'],
    [CC, USDCX, '1169999.9999999999'],
    [CC, USDCX, '1170000.0000000001'],
    [CC, USDCX, '0.5'],
    [USDCX, CC, '0.1503'],
    [USDCX, CC, '0.15'],
    [USDCX, CC, '10000'],
    [USDCX, CC, '98765.4321'],
    [USDCX, CC, '10000000'],
    [CC, CBTC, '1000'],
    [CC, CBTC, '300000'],
    [CBTC, CC, '0.25'],
    [CBTC, CC, '1'],
    [USDCX, CBTC, '10'],
  ];
  for (const [give, want, amount] of cases) {
    t.strictSame(plainQuote(await ask(venue, give, want, amount)), plainQuote(await ask(sandboxTemple, give, want, amount)), `${amount} ${give.symbol}→${want.symbol}`);
  }
});

t.test('temple: levels are walked best first whatever order the answer lists them in', async (t) => {
  const { venue } = setup((symbol) => ({ body: bookJson(bookFor(symbol)!, (l) => [...l].reverse()) }));
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: '7498', fee: { amount: '5', asset: 'CC', appliedTo: 'deducted_from_give' } });
  t.has(plainQuote(await ask(venue, USDCX, CC, '100')), { gross: '665.3359946773' });
});

t.test('temple: "insufficient_liquidity past the book\'s depth"', async (t) => {
  const { venue } = setup();
  // Bids hold 1,170,000 CC.
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '1170000.0000000001')), 'insufficient_liquidity');
  t.has(plainQuote(await ask(venue, CC, USDCX, '1170000')), { gross: '173909' }, 'exactly the whole bid side: 6000 + 11984 + 22425 + 44700 + 88800');
  const empty = setup(() => ({ body: '{"bids":[],"asks":[]}' })).venue;
  t.strictSame(plainQuote(await ask(empty, USDCX, CC, '1')), 'insufficient_liquidity', 'an empty book');
});

t.test('temple: "a configured minimum size → below_minimum" (default 1 CC)', async (t) => {
  const { venue } = setup();
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '0.9999999999')), 'below_minimum');
  t.has(plainQuote(await ask(venue, CC, USDCX, '1')), { gross: '0.15' }, 'exactly 1 CC');
  t.strictSame(plainQuote(await ask(venue, USDCX, CC, '0.15')), 'below_minimum', 'buying ~0.998 CC');
  const fake = fakeFetch((call) => ({ body: bookJson(bookFor(new URL(call.url).searchParams.get('symbol'))!) }));
  const big = new TempleVenue({ baseUrl: BASE, timeoutMs: 1000, fetch: fake.fetch, headers: { 'X-API-Key': KEY }, minCc: dec('100') });
  t.strictSame(plainQuote(await ask(big, CC, USDCX, '99.9999999999')), 'below_minimum', 'a configured 100 CC');
  t.ok((await ask(big, CC, USDCX, '100')).available);
});

t.test('temple: "no_pool" for a pair without CC, without asking', async (t) => {
  const { venue, calls } = setup();
  t.strictSame(plainQuote(await ask(venue, USDCX, CBTC, '10')), 'no_pool');
  t.equal(calls.length, 0);
});

t.test('temple: "the taker fee is a constructor option, default 1 bp"; 0 → no fee', async (t) => {
  t.has(plainQuote(await ask(setup(undefined, { takerFeeBps: 3 }).venue, CC, USDCX, '333.3333333333')), { fee: { amount: '0.1', asset: 'CC', appliedTo: 'deducted_from_give' } }, '3 bp of 333.3333333333 = 0.09999999999999, rounded up');
  t.has(plainQuote(await ask(setup(undefined, { takerFeeBps: 0 }).venue, CC, USDCX, '1000')), { fee: null });
  t.has(plainQuote(await ask(setup().venue, CC, USDCX, '1.2345678901')), { fee: { amount: '0.0001234568', asset: 'CC', appliedTo: 'deducted_from_give' } }, '1 bp, rounded up');
});

t.test('temple: "a number with more digits than a float holds" reaches the result exactly', async (t) => {
  const body = '{"bids":[{"price":0.12345678912345678912,"quantity":1000000000}],"asks":[{"price":"0.15000000000000000001","quantity":"1000000"}]}';
  const { venue } = setup(() => ({ body }));
  // 1e9 × 0.12345678912345678912 = 123456789.12345678912; a float price would give ...123456784.
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '1000000000')), { gross: '123456789.1234567891', fee: { amount: '100000', asset: 'CC', appliedTo: 'deducted_from_give' } });
  // 1.5 / 0.15000000000000000001 is just under 10: floored to 9.9999999999.
  t.has(plainQuote(await ask(venue, USDCX, CC, '1.5')), { gross: '9.9999999999' });
});

t.test('temple: "HTTP 500" and "429" are thrown (the engine reports venue_error)', async (t) => {
  await t.rejects(ask(setup(() => ({ status: 500, body: '{"error":"boom"}' })).venue, CC, USDCX, '100'), VenueHttpError);
  const limited = await ask(setup(() => ({ status: 429, body: '{"error":"rate limited"}' })).venue, CC, USDCX, '100').catch((err: unknown) => err);
  t.ok(limited instanceof VenueHttpError && limited.status === 429, 'a 429 is rethrown');
});

t.test('temple: "malformed JSON" or an unreadable book is thrown', async (t) => {
  await t.rejects(ask(setup(() => ({ body: '{"bids": [' })).venue, CC, USDCX, '100'), VenueUnreadable);
  await t.rejects(ask(setup(() => ({ body: '{"bids": {}, "asks": []}' })).venue, CC, USDCX, '100'), VenueUnreadable);
  await t.rejects(ask(setup(() => ({ body: '{"bids":[{"price":"x","quantity":"1"}],"asks":[]}' })).venue, CC, USDCX, '100'), VenueUnreadable);
  await t.rejects(ask(setup(() => ({ body: '{"bids":[{"price":"0.15","quantity":"-1"}],"asks":[]}' })).venue, CC, USDCX, '100'), VenueUnreadable);
});

t.test('temple: a quote reads only the side of the book it walks; the other must still be a list', async (t) => {
  const bids = '[{"price":"0.15","quantity":"1000"}]';
  const asks = '[{"price":"0.1503","quantity":"1000"}]';
  const broken = '[{"price":"x","quantity":"1"}]';
  t.has(plainQuote(await ask(setup(() => ({ body: `{"bids":${bids},"asks":${broken}}` })).venue, CC, USDCX, '100')), { gross: '15' }, 'selling CC walks the bids: a bad ask is not read');
  t.has(plainQuote(await ask(setup(() => ({ body: `{"bids":${broken},"asks":${asks}}` })).venue, USDCX, CC, '15.03')), { gross: '100' }, 'buying CC walks the asks: a bad bid is not read');
  await t.rejects(ask(setup(() => ({ body: `{"bids":${bids},"asks":{}}` })).venue, CC, USDCX, '100'), VenueUnreadable, 'asks that are no list');
  await t.rejects(ask(setup(() => ({ body: `{"bids":${bids}}` })).venue, CC, USDCX, '100'), VenueUnreadable, 'no asks at all');
});

t.test('temple: "a hang past the deadline" → timeout, promptly', async (t) => {
  const { venue } = setup(() => 'hang');
  // The venue's own timeout (setup's) outlasts the test: only the deadline can settle it.
  t.strictSame(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, deadlineIn(30))), 'timeout');
  t.strictSame(plainQuote(await ask(setup(() => 'hang', { timeoutMs: 40 }).venue, CC, USDCX, '100')), 'timeout', "the venue's own timeout, with no deadline");
});

t.test('temple probe: "one book per pair (levels=1): live when any answers"', async (t) => {
  const signal = neverAborted();
  const { venue, calls } = setup();
  t.strictSame(await venue.probe(signal), { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] });
  t.strictSame(calls.map((c) => c.url).sort(), [`${BASE}/api/v1/market/orderbook?symbol=Amulet/CBTC&levels=1`, `${BASE}/api/v1/market/orderbook?symbol=Amulet/USDCx&levels=1`]);
  t.ok(calls.every((c) => c.headers['X-API-Key'] === KEY));
  const half = setup((symbol) => (symbol === 'Amulet/CBTC' ? { status: 500, body: '{}' } : { body: bookJson(bookFor(symbol)!) }));
  t.strictSame(await half.venue.probe(signal), { live: true, pairs: ['CC/USDCx'] }, 'one book answers');
  t.strictSame(await setup(() => ({ status: 429, body: '{}' })).venue.probe(signal), { live: false, pairs: [] }, 'none answers');
  t.strictSame(await setup(() => 'hang', { timeoutMs: 30 }).venue.probe(signal), { live: false, pairs: [] }, 'no answer in time');
  t.strictSame(await setup(() => ({ body: 'not json' })).venue.probe(signal), { live: false, pairs: [] }, 'unreadable');
});

t.test('temple: "an order book\'s best level is its spot": priceImpact = 1 - (gross / amount) / spot, rounded up, against the walked side\'s best level', async (t) => {
  const { venue } = setup();
  const impact = async (give: Token, want: Token, amount: string) => {
    const q = await ask(venue, give, want, amount);
    return q.available ? q.priceImpact?.toFixed() : q.rejectionCode;
  };
  t.equal(await impact(CC, USDCX, '100'), '0', 'filled within the best bid (0.15): paid at spot');
  // 7498 / 50000 = 0.14996 a CC against 0.15: 1 - 0.14996 / 0.15 = 0.000266666… -> up.
  t.equal(await impact(CC, USDCX, '50000'), '0.0002666667', 'into the second bid, rounded up');
  // Buying: 100 USDCx buy 665.3359946773 CC against 1 / 0.1503 a USDCx: 1 - 665.3359946773 × 0.1503 / 100.
  t.equal(await impact(USDCX, CC, '100'), '0.0000000001', 'the walk\'s own rounding down of gross, never an impact understated');
});
