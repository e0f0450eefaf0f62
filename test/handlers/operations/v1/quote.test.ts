// GET /api/quote: the spec's quote rules that need no key.
import t from 'tap';
import { dec, type Decimal } from '../../../../core/decimal.js';
import type { Venue, VenueQuote, VenueQuoteRequest } from '../../../../core/venues/venue.js';
import type { QuoteResponse } from '../../../../core/contract/v1.js';
import { memoizedQuoteParams } from '../../../../core/quotes/params.js';
import { testApp } from '../../../helpers/app.js';
import { testSandbox } from '../../../helpers/sandbox.js';

const QUOTE = '/api/quote?from=CC&to=USDCx&amount=100';

/** Wraps a venue to count its quote calls and optionally delay or replace its answer. */
/** The service's own adapters over a sandbox of the test's own (the app under test has another). */
async function sandboxVenues(t: { teardown(fn: () => Promise<void>): void }, timeoutMs?: number): Promise<Venue[]> {
  const sandbox = await testSandbox();
  t.teardown(sandbox.close);
  return sandbox.adapters(timeoutMs);
}

function instrumented(venue: Venue, behaviour: { hang?: boolean; fail?: boolean } = {}) {
  const calls: VenueQuoteRequest[] = [];
  const signals: AbortSignal[] = [];
  const wrapped: Venue = {
    id: venue.id,
    settlementMode: venue.settlementMode,
    probe: (signal) => venue.probe(signal),
    quote: (request, deadline) => {
      calls.push(request);
      signals.push(deadline.signal);
      if (behaviour.hang) return new Promise<VenueQuote>(() => {});
      if (behaviour.fail) return Promise.reject(new Error('upstream exploded'));
      return venue.quote(request, deadline);
    },
  };
  return { venue: wrapped, calls, signals };
}

t.test('one entry per integrated venue, ranked by net receive after all fees, best first', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const res = await app.server.inject(QUOTE);
  t.equal(res.statusCode, 200);
  const body = res.json<QuoteResponse>();
  t.strictSame(body.venues.map((v) => v.venueId).sort(), ['cantex', 'nightly', 'oneswap', 'temple', 'tradecraft']);
  const nets = body.venues.filter((v) => v.available).map((v) => dec(v.net!));
  for (let i = 1; i < nets.length; i++) t.ok(nets[i - 1]!.gte(nets[i]!), `venue ${i - 1} nets at least venue ${i}`);
  t.strictSame(body.best, { venueId: body.venues[0]!.venueId, gross: body.venues[0]!.gross, net: body.venues[0]!.net });
  t.strictSame(body.pair, { give: 'Amulet', want: 'USDCx' }, 'CC appears as Amulet in pair');
});

t.test('every figure can be recomputed: net from gross, fee and amount; feeBps from gross and net; edgeBps from the two best nets', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  for (const query of ['from=CC&to=USDCx&amount=100', 'from=USDCx&to=CC&amount=250.5', 'from=CC&to=CBTC&amount=12345.6789']) {
    const body = (await app.server.inject(`/api/quote?${query}`)).json<QuoteResponse>();
    const amount = dec(body.amount);
    const available = body.venues.filter((v) => v.available);
    for (const v of available) {
      const gross = dec(v.gross!);
      let expected: Decimal = gross;
      if (v.fee) {
        const fee = dec(v.fee.amount);
        expected = v.fee.asset === body.pair.want ? gross.minus(fee) : gross.times(amount.minus(fee)).div(amount);
      }
      t.equal(v.net, expected.toDecimalPlaces(10, 3 /* ROUND_FLOOR */).toFixed(), `${query} ${v.venueId} net`);
      const bps = gross.minus(dec(v.net!)).times(10_000).div(gross).toDecimalPlaces(0, 4 /* ROUND_HALF_UP */).toNumber();
      t.equal(v.feeBps, bps, `${query} ${v.venueId} feeBps`);
    }
    const [best, next] = available.map((v) => dec(v.net!));
    t.equal(body.edgeBps, best!.minus(next!).times(10_000).div(next!).floor().toNumber(), `${query} edgeBps`);
  }
});

t.test('a venue that cannot quote the pair shows available: false with a rejectionCode, after the available ones', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const body = (await app.server.inject('/api/quote?from=CC&to=CBTC&amount=100')).json<QuoteResponse>();
  const last = body.venues.at(-1)!;
  t.strictSame(last, {
    venueId: 'oneswap',
    settlementMode: 'managed-deposit',
    available: false,
    gross: null,
    net: null,
    fee: null,
    feeBps: null,
    rejectionCode: 'no_pool',
  });
});

t.test('a fee on top of the give amount does not make a venue look better than the same fee deducted', async (t) => {
  const [tradecraft] = await sandboxVenues(t);
  const base: Venue = tradecraft!;
  const withFee = (id: string, appliedTo: 'on_top' | 'deducted_from_give'): Venue => ({
    id,
    settlementMode: 'managed-deposit',
    probe: (s) => base.probe(s),
    quote: async (r) => ({ available: true, gross: dec('15'), fee: { amount: dec('1'), asset: r.give, appliedTo } }),
  });
  const app = await testApp({ overrides: { venues: [withFee('ontop', 'on_top'), withFee('deducted', 'deducted_from_give')] } });
  t.teardown(app.close);
  const body = (await app.server.inject(QUOTE)).json<QuoteResponse>();
  const nets = Object.fromEntries(body.venues.map((v) => [v.venueId, v.net]));
  t.equal(nets.ontop, nets.deducted, 'same net for the same fee');
  t.equal(nets.ontop, '14.85', '15 × (100 − 1) / 100');
  t.equal(body.edgeBps, 0);
});

t.test('all venues failing is still 200 with best: null and every venue unavailable', async (t) => {
  const venues = (await sandboxVenues(t)).map((v) => instrumented(v, { fail: true }).venue);
  const app = await testApp({ overrides: { venues } });
  t.teardown(app.close);
  const res = await app.server.inject(QUOTE);
  t.equal(res.statusCode, 200);
  const body = res.json<QuoteResponse>();
  t.equal(body.best, null);
  t.equal(body.edgeBps, null);
  t.equal(body.venues.length, 5);
  t.ok(body.venues.every((v) => !v.available && v.rejectionCode === 'venue_error'));
});

t.test('a venue that does not answer within its deadline does not hold the response', async (t) => {
  // Long enough for the others to answer over loopback on a busy machine.
  const [tradecraft, ...others] = await sandboxVenues(t, 300);
  const hanging = instrumented(tradecraft!, { hang: true });
  const app = await testApp({ env: { VENUE_TIMEOUT_MS: '300' }, overrides: { venues: [hanging.venue, ...others] } });
  t.teardown(app.close);
  const res = await app.server.inject(QUOTE);
  t.equal(res.statusCode, 200);
  const body = res.json<QuoteResponse>();
  t.equal(body.venues.find((v) => v.venueId === 'tradecraft')?.rejectionCode, 'timeout');
  t.equal(body.venues.filter((v) => v.available).length, 4, 'the other venues still quote');
  t.ok(hanging.signals[0]?.aborted, 'the hanging venue was told to give up');
});

t.test('keyless bodies are byte-identical for everyone within the cache window and carry Cache-Control: public, s-maxage=10', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const a = await app.server.inject({ url: QUOTE, remoteAddress: '10.0.0.1' });
  const b = await app.server.inject({ url: QUOTE, remoteAddress: '10.0.0.2' });
  t.equal(a.headers['cache-control'], 'public, s-maxage=10');
  t.equal(a.body, b.body);
});

t.test('the base body is cached per normalised parameter combination: equal amounts and symbol spellings share one entry', async (t) => {
  const [first, ...rest] = await sandboxVenues(t);
  const counted = instrumented(first!);
  const app = await testApp({ overrides: { venues: [counted.venue, ...rest] } });
  t.teardown(app.close);
  const a = await app.server.inject('/api/quote?from=CC&to=USDCx&amount=100');
  const b = await app.server.inject('/api/quote?from=cc&to=usdcx&amount=100.000');
  const c = await app.server.inject('/api/quote?from=Amulet&to=USDCx&amount=100&slippageBps=300');
  t.equal(counted.calls.length, 1, 'computed once');
  t.equal(a.body, b.body);
  t.equal(a.body, c.body);
  t.equal(a.json<QuoteResponse>().amount, '100', 'the amount is echoed in canonical form');
  await app.server.inject('/api/quote?from=CC&to=USDCx&amount=101');
  t.equal(counted.calls.length, 2, 'another amount is another combination');
});

t.test('the cache expires after QUOTE_CACHE_TTL_MS', async (t) => {
  const [first, ...rest] = await sandboxVenues(t);
  const counted = instrumented(first!);
  const app = await testApp({ env: { QUOTE_CACHE_TTL_MS: '20' }, overrides: { venues: [counted.venue, ...rest] } });
  t.teardown(app.close);
  await app.server.inject(QUOTE);
  await new Promise((resolve) => setTimeout(resolve, 40));
  await app.server.inject(QUOTE);
  t.equal(counted.calls.length, 2);
});

t.test('concurrent misses for the same combination compute once', async (t) => {
  const [first, ...rest] = await sandboxVenues(t);
  const counted = instrumented(first!);
  const app = await testApp({ overrides: { venues: [counted.venue, ...rest] } });
  t.teardown(app.close);
  const bodies = await Promise.all(Array.from({ length: 20 }, () => app.server.inject(QUOTE).then((r) => r.body)));
  t.equal(counted.calls.length, 1);
  t.equal(new Set(bodies).size, 1);
});

t.test('ref is validated, recorded for attribution, stripped from the cache key and never changes a byte of the response', async (t) => {
  const [first, ...rest] = await sandboxVenues(t);
  const counted = instrumented(first!);
  const app = await testApp({ overrides: { venues: [counted.venue, ...rest] } });
  t.teardown(app.close);
  const plain = await app.server.inject(QUOTE);
  const withRef = await app.server.inject(`${QUOTE}&ref=my-wallet`);
  t.equal(withRef.body, plain.body, 'same bytes');
  t.equal(counted.calls.length, 1, 'same cache entry');
  const line = app.logs().find((l) => l.msg === 'request completed' && l.ref === 'my-wallet');
  t.ok(line, 'the ref is on the request log line');
  const bad = await app.server.inject(`${QUOTE}&ref=Not_A_Slug`);
  t.equal(bad.statusCode, 400);
  t.match(bad.json(), { code: 'bad_request', error: /'ref'/ });
});

t.test('every quote-endpoint 400 cause gives 400 with a message naming the parameter', async (t) => {
  const app = await testApp();
  t.teardown(app.close);
  const cases: Array<[string, string, RegExp]> = [
    ['to=USDCx&amount=1', 'bad_request', /missing required query parameter 'from'/],
    ['from=CC&amount=1', 'bad_request', /missing required query parameter 'to'/],
    ['from=CC&to=USDCx', 'bad_request', /missing required query parameter 'amount'/],
    ['from=DOGE&to=USDCx&amount=1', 'unknown_token', /unknown token 'DOGE' in from: known symbols are CC, USDCx, CBTC/],
    ['from=CC&to=CC&amount=1', 'bad_request', /'from' and 'to' must be different/],
    ['from=CC&to=USDCx&amount=-1', 'bad_request', /'amount' must be a positive decimal/],
    ['from=CC&to=USDCx&amount=0.0', 'bad_request', /'amount' must be a positive decimal string of at most 1000000000/],
    ['from=CC&to=USDCx&amount=abc', 'bad_request', /'amount' must be a positive decimal/],
    ['from=CC&to=USDCx&amount=1000000000.0000000001', 'bad_request', /'amount' must be a positive decimal string of at most 1000000000/],
    ['from=CC&to=USDCx&amount=1&slippageBps=1.5', 'bad_request', /'slippageBps' must be a non-negative integer/],
    ['from=CC&to=USDCx&amount=1&slippageBps=x', 'bad_request', /'slippageBps' must be a non-negative integer/],
    ['from=CC&to=USDCx&amount=1&feeBps=5', 'missing_key', /'feeBps' and 'feeRecipient' require a partner key/],
    ['from=CC&to=USDCx&amount=1&feeRecipient=x', 'missing_key', /require a partner key/],
    ['from=CC&to=USDCx&amount=1&feeBps=99&feeRecipient=bad', 'missing_key', /require a partner key/],
    ['from=CC&to=USDCx&amount=1&frm=CC', 'bad_request', /unknown query parameter 'frm'/],
  ];
  for (const [query, code, message] of cases) {
    const res = await app.server.inject(`/api/quote?${query}`);
    t.equal(res.statusCode, 400, query);
    t.match(res.json(), { code, error: message }, query);
    t.equal(res.headers['cache-control'], 'no-store', `${query}: errors are no-store`);
  }
  t.equal((await app.server.inject('/api/quote?from=CC&to=USDCx&amount=1000000000')).statusCode, 200, 'exactly the maximum is accepted');
});

t.test('memoizedQuoteParams: a repeated query object gets the very same parameters; a query that does not parse is never remembered', async (t) => {
  const parse = memoizedQuoteParams();
  const query = Object.freeze({ from: 'CC', to: 'USDCx', amount: '100.5', ref: 'wallet-x' });
  const first = parse(query);
  t.equal(parse(query), first, 'the same object for the same query object');
  t.equal(first.cacheKey, 'CC|USDCx|100.5');
  t.equal(first.ref, 'wallet-x');
  const copy = parse({ ...query });
  t.not(copy, first, 'an equal query in a new object is parsed afresh');
  t.strictSame(copy, first, 'to equal parameters');
  const bad = Object.freeze({ from: 'CC', to: 'USDCx', amount: '0' });
  t.throws(() => parse(bad), { code: 'bad_request' });
  t.throws(() => parse(bad), { code: 'bad_request' }, 'still refused the second time');
});
