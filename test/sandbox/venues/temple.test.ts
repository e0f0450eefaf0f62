// Temple's sandbox wire (sandbox/venues/temple.ts): its answers to GET /api/v1/market/orderbook
// read directly, and the real Temple adapter (core/venues/temple.ts) quoting through it, with every
// figure recomputed from the spec's books by an independent decimal.js instance.
import t from 'tap';
import { dec, type Decimal } from '../../../core/decimal.js';
import { netAfterFee } from '../../../core/quotes/math.js';
import { type BookLevel } from '../../../core/venues/venue-math.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import type { OrderBook, SandboxVenue, SandboxVenueSpec } from '../../../sandbox/venues/sandbox-venue.js';
import { templeWire } from '../../../sandbox/venues/temple.js';
import { SANDBOX_VENUE_KEY, type WireHandler, type WireRequest } from '../../../sandbox/venues/wire.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { TempleVenue } from '../../../core/venues/temple.js';
import { VenueHttpError } from '../../../core/venues/venue-http.js';
import { neverAborted, noDeadline, plainQuote } from '../../helpers/venue-fetch.js';
import { ceil10, floor10, s, x, X } from '../../helpers/exact.js';
import { wireFetch } from '../../helpers/wire-fetch.js';


/** A fresh sandbox temple: its books are mutable state, so each test takes its own. */
function freshTemple(): SandboxVenue {
  const temple = createSandboxVenues().find((v) => v.id === 'temple');
  if (!temple || temple.spec.pricing.kind !== 'book') throw new Error('no sandbox temple book');
  return temple;
}
const booksOf = (spec: SandboxVenueSpec): readonly OrderBook[] => (spec.pricing.kind === 'book' ? spec.pricing.books : []);
const bookOf = (spec: SandboxVenueSpec, quote: Token): OrderBook => {
  const book = booksOf(spec).find((b) => b.quote === quote);
  if (!book) throw new Error(`no ${quote.symbol} book`);
  return book;
};
/** The book as the state object is changed by another part of the system. */
const writable = (book: OrderBook) => book as { bids: readonly BookLevel[]; asks: readonly BookLevel[] };

const KEYED = { 'x-api-key': SANDBOX_VENUE_KEY };
function get(handler: WireHandler, path: string, query: string, headers: WireRequest['headers'] = KEYED, method = 'GET') {
  const answer = handler({ method, path, query: new URLSearchParams(query), headers, body: '' });
  return { status: answer.status, json: JSON.parse(answer.body) as unknown };
}
const BOOK = '/api/v1/market/orderbook';

const wireLevels = (levels: readonly BookLevel[]) => levels.map((l) => ({ price: l.price.toFixed(), quantity: l.quantity.toFixed() }));

const BASE = 'http://sandbox.invalid/temple';
function adapter(handler: WireHandler, key = SANDBOX_VENUE_KEY): TempleVenue {
  return new TempleVenue({ baseUrl: BASE, timeoutMs: 5000, fetch: wireFetch(handler, BASE), headers: { 'X-API-Key': key } });
}
const ask = (venue: TempleVenue | SandboxVenue, give: Token, want: Token, amount: string) => venue.quote({ give, want, amount: dec(amount) }, noDeadline());

/**
 * The taker's walk, recomputed: selling CC fills bids for quantity × price, buying CC spends the
 * quote currency on asks; null past the book's depth. Rounded down to 10 fractional digits.
 */
function walk(levels: readonly BookLevel[], amount: string, sellingCc: boolean): string | null {
  let remaining = x(amount);
  let out = x('0');
  for (const level of levels) {
    const price = x(level.price.toFixed());
    const quantity = x(level.quantity.toFixed());
    const take = sellingCc ? X.min(remaining, quantity) : X.min(remaining, quantity.times(price));
    out = out.plus(sellingCc ? take.times(price) : take.div(price));
    remaining = remaining.minus(take);
  }
  return remaining.isZero() ? s(floor10(out)) : null;
}

/** 1 bp of the give amount, rounded up; net = gross × (amount − fee) / amount, rounded down. */
function expected(spec: SandboxVenueSpec, give: Token, want: Token, amount: string) {
  const sellingCc = give === CC;
  const book = bookOf(spec, sellingCc ? want : give);
  const gross = walk(sellingCc ? book.bids : book.asks, amount, sellingCc);
  if (gross === null) return null;
  const fee = ceil10(x(amount).times('0.0001'));
  return { gross, fee: s(fee), net: s(floor10(x(gross).times(x(amount).minus(fee)).div(amount))) };
}

// ---------------------------------------------------------------------------------------------
// The wire, read directly.

t.test('temple wire: "GET orderbook -> {bids, asks} of [{price, quantity}], best first, straight from the spec\'s books"', async (t) => {
  const { spec } = freshTemple();
  const handler = templeWire(spec);
  for (const [symbol, quote] of [['Amulet/USDCx', USDCX], ['Amulet/CBTC', CBTC]] as const) {
    const book = bookOf(spec, quote);
    const answer = get(handler, BOOK, `symbol=${symbol}&levels=100`);
    t.equal(answer.status, 200, symbol);
    t.strictSame(answer.json, { bids: wireLevels(book.bids), asks: wireLevels(book.asks) }, symbol);
  }
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx&levels=1').json, {
    bids: [{ price: '0.15', quantity: '40000' }],
    asks: [{ price: '0.1503', quantity: '40000' }],
  }, 'the seeded top of the CC/USDCx book, as the README gives it');
  t.strictSame(get(handler, BOOK, 'symbol=Amulet%2FCBTC&levels=1').json, get(handler, BOOK, 'symbol=Amulet/CBTC&levels=1').json, 'the symbol URL-encoded reads the same');
});

t.test('temple wire: "honour levels": at most N levels a side; without it, the whole book', async (t) => {
  const { spec } = freshTemple();
  const handler = templeWire(spec);
  const book = bookOf(spec, USDCX);
  for (const n of [1, 2, 4, 5, 6]) {
    t.strictSame(get(handler, BOOK, `symbol=Amulet/USDCx&levels=${n}`).json, { bids: wireLevels(book.bids.slice(0, n)), asks: wireLevels(book.asks.slice(0, n)) }, `levels=${n}`);
  }
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx').json, { bids: wireLevels(book.bids), asks: wireLevels(book.asks) });
  for (const bad of ['0', '-1', '1.5', 'abc', '']) {
    t.strictSame(get(handler, BOOK, `symbol=Amulet/USDCx&levels=${bad}`), { status: 400, json: { error: 'levels must be a positive integer' } }, `levels=${bad}`);
  }
});

t.test('temple wire: "round what the venue pays out down and what it charges up": bid prices and quantities down, ask prices up', async (t) => {
  const { spec } = freshTemple();
  const book = writable(bookOf(spec, USDCX));
  book.bids = [{ price: dec('0.15000000009'), quantity: dec('1.00000000009') }];
  book.asks = [{ price: dec('0.15030000001'), quantity: dec('2.00000000009') }];
  t.strictSame(get(templeWire(spec), BOOK, 'symbol=Amulet/USDCx').json, {
    bids: [{ price: '0.15', quantity: '1' }],
    asks: [{ price: '0.1503000001', quantity: '2' }],
  });
});

t.test('temple wire: "X-API-Key: <SANDBOX_VENUE_KEY>" or a 401 {error}', async (t) => {
  const handler = templeWire(freshTemple().spec);
  const refused = { status: 401, json: { error: 'invalid or missing API key' } };
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx', {}), refused, 'no key');
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx', { 'x-api-key': 'tdg_other_key' }), refused, 'another key');
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx', { authorization: `Bearer ${SANDBOX_VENUE_KEY}` }), refused, 'the key in another header');
  t.strictSame(get(handler, '/nowhere', '', {}), refused, 'before routing, as a gateway does');
  t.equal(get(handler, BOOK, 'symbol=Amulet/USDCx').status, 200, 'the key');
});

t.test('temple wire: "errors in the venue\'s shape": unknown symbol 404, no symbol 400, unknown path 404, other methods 405', async (t) => {
  const handler = templeWire(freshTemple().spec);
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDT&levels=1'), { status: 404, json: { error: 'unknown symbol: Amulet/USDT' } });
  t.strictSame(get(handler, BOOK, 'symbol=CC/USDCx&levels=1'), { status: 404, json: { error: 'unknown symbol: CC/USDCx' } }, 'the symbol is the instrument, Amulet');
  t.strictSame(get(handler, BOOK, 'symbol=USDCx/CBTC&levels=1'), { status: 404, json: { error: 'unknown symbol: USDCx/CBTC' } });
  t.strictSame(get(handler, BOOK, 'levels=1'), { status: 400, json: { error: 'symbol is required' } });
  t.strictSame(get(handler, '/api/v1/market/ticker', 'symbol=Amulet/USDCx'), { status: 404, json: { error: 'no such endpoint: /api/v1/market/ticker' } });
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx', KEYED, 'POST'), { status: 405, json: { error: `POST is not allowed on ${BOOK}` } });
});

t.test('temple wire: "only an order-book venue": an AMM spec is refused at construction', async (t) => {
  const amm = createSandboxVenues().find((v) => v.id === 'tradecraft');
  t.throws(() => templeWire(amm!.spec), /order-book venue/);
});

// ---------------------------------------------------------------------------------------------
// The real adapter through the wire.

t.test('temple adapter over the wire: "an available quote whose net recomputes from the books"', async (t) => {
  const { spec } = freshTemple();
  const venue = adapter(templeWire(spec));
  const cases: Array<[Token, Token, string]> = [
    [CC, USDCX, '50000'],
    [USDCX, CC, '100'],
    [CC, CBTC, '1000'],
    [CBTC, CC, '0.25'],
    [CC, USDCX, '123.4567890123'],
  ];
  for (const [give, want, amount] of cases) {
    const label = `${amount} ${give.symbol}→${want.symbol}`;
    const exp = expected(spec, give, want, amount)!;
    const quote = await ask(venue, give, want, amount);
    if (!quote.available) {
      t.fail(`${label}: ${quote.rejectionCode}`);
      continue;
    }
    t.strictSame(plainQuote(quote), { gross: exp.gross, fee: { amount: exp.fee, asset: give.symbol, appliedTo: 'deducted_from_give' } }, label);
    t.equal(netAfterFee(dec(amount), quote.gross, quote.fee, want).toFixed(), exp.net, `${label}: net`);
  }
  // By hand: 40,000 × 0.15 + 10,000 × 0.1498 = 7498, fee 5 CC, net 7498 × 49995 / 50000.
  t.strictSame(expected(spec, CC, USDCX, '50000'), { gross: '7498', fee: '5', net: '7497.2502' }, 'the recomputation itself');
});

t.test('temple adapter over the wire: "economically the same venue" as the in-process sandbox temple', async (t) => {
  const temple = freshTemple();
  const venue = adapter(templeWire(temple.spec));
  const cases: Array<[Token, Token, string]> = [
    [CC, USDCX, '1'],
    [CC, USDCX, '0.9999999999'],
    [CC, USDCX, '40000'],
    [CC, USDCX, '1170000'],
    [CC, USDCX, '1170000.0000000001'],
    [USDCX, CC, '0.15'],
    [USDCX, CC, '0.1503'],
    [USDCX, CC, '98765.4321'],
    [USDCX, CC, '10000000'],
    [CC, CBTC, '300000'],
    [CBTC, CC, '1'],
    [USDCX, CBTC, '10'],
  ];
  for (const [give, want, amount] of cases) {
    t.strictSame(plainQuote(await ask(venue, give, want, amount)), plainQuote(await ask(temple, give, want, amount)), `${amount} ${give.symbol}→${want.symbol}`);
  }
});

t.test('temple adapter over the wire: "the adapter\'s hard-coded fee and minimum agree with the sandbox spec\'s"', async (t) => {
  const { spec } = freshTemple();
  t.equal(spec.minCc?.toFixed(), '1', 'the spec\'s minimum is the adapter\'s default 1 CC');
  const venue = adapter(templeWire(spec));
  for (const [give, want, amount] of [[CC, USDCX, '1.2345678901'], [USDCX, CC, '777']] as const) {
    const quote = await ask(venue, give, want, amount);
    if (!quote.available) {
      t.fail(quote.rejectionCode);
      continue;
    }
    const specFee = spec.fee({ give, want, amount: dec(amount) }, { gross: quote.gross, ccSize: give === CC ? dec(amount) : quote.gross });
    t.strictSame(plainQuote(quote), plainQuote({ available: true, gross: quote.gross, fee: specFee }), `${amount} ${give.symbol}: the spec's fee`);
  }
});

t.test('temple adapter over the wire: each rejection the sandbox temple produces — no_pool, insufficient_liquidity, below_minimum', async (t) => {
  const { spec } = freshTemple();
  const venue = adapter(templeWire(spec));
  t.equal(plainQuote(await ask(venue, USDCX, CBTC, '10')), 'no_pool', 'a pair without CC');
  // Bids hold 1,170,000 CC; asks 1,170,000 CC for 6012 + 12040 + 22620 + 45360 + 91200 USDCx.
  const askDepth = s(bookOf(spec, USDCX).asks.reduce((sum, l) => sum.plus(x(l.quantity.toFixed()).times(l.price.toFixed())), x('0')));
  t.equal(askDepth, '177232');
  t.equal(plainQuote(await ask(venue, CC, USDCX, '1170000.0000000001')), 'insufficient_liquidity', 'past the bids');
  t.equal(plainQuote(await ask(venue, USDCX, CC, '177232.0000000001')), 'insufficient_liquidity', 'past the asks');
  t.has(plainQuote(await ask(venue, USDCX, CC, askDepth)), { gross: '1170000' }, 'the whole ask side');
  t.equal(plainQuote(await ask(venue, CC, USDCX, '0.9999999999')), 'below_minimum', 'selling under 1 CC');
  t.equal(plainQuote(await ask(venue, USDCX, CC, '0.15')), 'below_minimum', 'buying 0.15 / 0.1503 ≈ 0.998 CC');
  writable(bookOf(spec, USDCX)).bids = [];
  t.equal(plainQuote(await ask(venue, CC, USDCX, '1')), 'insufficient_liquidity', 'an emptied side');
});

t.test('temple adapter over the wire: a wrong key is the venue\'s 401, thrown (the engine reports venue_error)', async (t) => {
  const failure = await ask(adapter(templeWire(freshTemple().spec), 'tdg_wrong'), CC, USDCX, '100').catch((err: unknown) => err);
  t.ok(failure instanceof VenueHttpError && failure.status === 401, 'HTTP 401');
  t.strictSame(failure instanceof VenueHttpError && failure.body, { error: 'invalid or missing API key' });
});

t.test('temple probe over the wire: "live, with each book\'s pair"', async (t) => {
  const { spec } = freshTemple();
  t.strictSame(await adapter(templeWire(spec)).probe(neverAborted()), { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] });
  t.strictSame(await adapter(templeWire(spec), 'tdg_wrong').probe(neverAborted()), { live: false, pairs: [] }, 'refused without the key');
  const onlyUsdcx: SandboxVenueSpec = { ...spec, pricing: { kind: 'book', books: [bookOf(spec, USDCX)] } };
  t.strictSame(await adapter(templeWire(onlyUsdcx)).probe(neverAborted()), { live: true, pairs: ['CC/USDCx'] }, 'a market without the CBTC book');
});

t.test('temple adapter over the wire: "quotes move when the books change in the state object"', async (t) => {
  const { spec } = freshTemple();
  const handler = templeWire(spec);
  const venue = adapter(handler);
  t.has(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: '7498' });
  // Another part of the system fills 30,000 CC of the top bid and moves the best ask.
  const book = writable(bookOf(spec, USDCX));
  book.bids = [{ price: dec('0.15'), quantity: dec('10000') }, ...book.bids.slice(1)];
  book.asks = [{ price: dec('0.1504'), quantity: dec('40000') }, ...book.asks.slice(1)];
  // 10,000 × 0.15 + 40,000 × 0.1498 = 1500 + 5992.
  t.has(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: '7492' });
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: expected(spec, CC, USDCX, '50000')!.gross, fee: { amount: '5', asset: 'CC', appliedTo: 'deducted_from_give' } });
  t.has(plainQuote(await ask(venue, USDCX, CC, '100')), { gross: expected(spec, USDCX, CC, '100')!.gross });
  t.has(plainQuote(await ask(venue, USDCX, CC, '100')), { gross: '664.8936170212' }, '100 / 0.1504');
  t.strictSame(get(handler, BOOK, 'symbol=Amulet/USDCx&levels=1').json, { bids: [{ price: '0.15', quantity: '10000' }], asks: [{ price: '0.1504', quantity: '40000' }] });
  // A level changed in place, as well as replaced.
  (book.bids[0]! as { quantity: Decimal }).quantity = dec('20000');
  t.has(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: expected(spec, CC, USDCX, '50000')!.gross });
  t.has(plainQuote(await ask(venue, CC, USDCX, '50000')), { gross: '7494' }, '20,000 × 0.15 + 30,000 × 0.1498');
});
