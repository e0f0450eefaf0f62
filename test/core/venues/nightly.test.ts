// The Nightly CantonSwap adapter (core/venues/nightly.ts) against fixtures of the documented
// shapes (cantonswap.nightly.app/docs: GET /nswap/tokens, POST /nswap/quote), served by a fake
// fetch. Expected values are written out by hand.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { NIGHTLY_BASE_URL, NightlyVenue } from '../../../core/venues/nightly.js';
import { VenueHttpError, VenueUnreadable } from '../../../core/venues/venue-http.js';
import { deadlineIn, fakeFetch, neverAborted, noDeadline, plainQuote, type Reply, sentJson, type SentRequest as Call } from '../../helpers/venue-fetch.js';

// ---------------------------------------------------------------------------------------------
// Fixtures, in the documented shapes (amounts as strings).
const TOKENS_JSON = JSON.stringify({
  tokens: [
    {
      index: 0,
      instrumentId: 'Amulet',
      name: 'Amulet',
      symbol: 'CC',
      decimals: 10,
      displayDecimals: 2,
      iconUrl: 'https://example.invalid/cc.png',
      price: '0.125',
      instrumentAdmin: 'DSO::1220aaaa',
      minSwapAmount: '125',
      maxSwapUsd: '50000',
    },
    {
      index: 1,
      instrumentId: 'USDCx',
      name: 'USD Coin (Canton)',
      symbol: 'USDCx',
      decimals: 6,
      displayDecimals: 2,
      iconUrl: 'https://example.invalid/usdcx.png',
      price: '1',
      instrumentAdmin: 'circle::1220bbbb',
      minSwapAmount: '20',
      maxSwapUsd: '50000',
    },
    {
      index: 2,
      instrumentId: 'CETH',
      name: 'Canton ETH',
      symbol: 'CETH',
      decimals: 8,
      displayDecimals: 4,
      iconUrl: 'https://example.invalid/ceth.png',
      price: 'not listed here',
      instrumentAdmin: 'eth::1220cccc',
      minSwapAmount: '0.01',
      maxSwapUsd: '50000',
    },
  ],
});

function quoteJson(fromAmount: string, toAmountText: string): string {
  // toAmount's text goes in as written, so a JSON number can carry more digits than a float.
  return `{"fromToken":"Amulet","toToken":"USDCx","fromAmount":"${fromAmount}","toAmount":${toAmountText},"minOutAmount":"148.4778394052","rate":"0.149123","priceImpact":"0.0012","memo":"nswap-7f3a","swapAddress":"nightly-swap::1220dddd"}`;
}

const PARTY = 'bestex-quotes::1220eeee';
const MAINTENANCE = '{"message":"Service under maintenance."}';

/** A venue over the fake: the tokens list, and `onQuote` for POST /nswap/quote. */
function setup(onQuote: (call: Call) => Reply = () => ({ body: quoteJson('1000', '"149.1234567891"') }), onTokens: () => Reply = () => ({ body: TOKENS_JSON }), timeoutMs = 600_000) {
  const fake = fakeFetch((call) => (call.url.endsWith('/nswap/tokens') ? onTokens() : onQuote(call)));
  const venue = new NightlyVenue({ baseUrl: NIGHTLY_BASE_URL, timeoutMs, fetch: fake.fetch, recipient: PARTY });
  const quotes = () => fake.calls.filter((c) => c.url.endsWith('/nswap/quote'));
  return { venue, calls: fake.calls, quotes };
}

const deadline = noDeadline();
const ask = (venue: NightlyVenue, give: Token, want: Token, amount: string) => venue.quote({ give, want, amount: dec(amount) }, deadline);


// ---------------------------------------------------------------------------------------------
t.test('nightly: "gross = toAmount, fee null" — POST /nswap/quote with instrumentIds, the amount as a string and the configured recipient', async (t) => {
  const { venue, calls, quotes } = setup();
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '1000')), { gross: '149.1234567891', fee: null });
  t.equal(calls[0]?.url, 'https://mainnet.rpc.canton.nightly.app/nswap/tokens', 'the token list is read first');
  t.equal(calls[0]?.method, 'GET');
  const [q] = quotes();
  t.equal(q?.url, 'https://mainnet.rpc.canton.nightly.app/nswap/quote');
  t.equal(q?.method, 'POST');
  t.strictSame(sentJson(q), { fromToken: 'Amulet', toToken: 'USDCx', amount: '1000', recipient: PARTY });
  t.equal(q?.headers['content-type'], 'application/json');
  t.equal(q?.headers.accept, 'application/json');
});

t.test('nightly: "the token list is cached" — read once for many quotes, again by the probe', async (t) => {
  const { venue, calls } = setup();
  await ask(venue, CC, USDCX, '1000');
  await ask(venue, CC, USDCX, '1000');
  t.equal(calls.filter((c) => c.url.endsWith('/nswap/tokens')).length, 1);
  await venue.probe(neverAborted());
  t.equal(calls.filter((c) => c.url.endsWith('/nswap/tokens')).length, 2);
});

t.test('nightly: USDCx→CC maps both ids the other way round', async (t) => {
  const { venue, quotes } = setup(() => ({ body: quoteJson('50', '"398.1234"') }));
  t.strictSame(plainQuote(await ask(venue, USDCX, CC, '50')), { gross: '398.1234', fee: null });
  t.strictSame(sentJson(quotes()[0]), { fromToken: 'USDCx', toToken: 'Amulet', amount: '50', recipient: PARTY });
});

t.test('nightly: "a number with more digits than a float holds" reaches gross exactly as a string, and net floors it to 10 dp; as a JSON number it is refused, never rounded', async (t) => {
  const { venue: numeric } = setup(() => ({ body: quoteJson('1000', '14.887162959697779123456') }));
  await t.rejects(ask(numeric, CC, USDCX, '1000'), { name: 'VenueUnreadable', message: /toAmount/ });
  const { venue } = setup(() => ({ body: quoteJson('1000', '"14.887162959697779123456"') }));
  const q = await ask(venue, CC, USDCX, '1000');
  t.strictSame(plainQuote(q), { gross: '14.887162959697779123456', fee: null });
  const wire = toQuoteVenue('nightly', dec('1000'), USDCX, CC, q);
  t.equal(wire.gross, '14.8871629596');
  t.equal(wire.net, '14.8871629596');
  t.equal(wire.feeBps, 0);
});

t.test('nightly: "Service under maintenance." → maintenance, on an error status or a 200', async (t) => {
  for (const status of [503, 200]) {
    const { venue } = setup(() => ({ status, body: MAINTENANCE }));
    t.strictSame(plainQuote(await ask(venue, CC, USDCX, '1000')), 'maintenance', `status ${status}`);
  }
  const { venue } = setup(undefined, () => ({ status: 503, body: MAINTENANCE }));
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '1000')), 'maintenance', 'the token list under maintenance');
  const { venue: v200 } = setup(undefined, () => ({ body: MAINTENANCE }));
  t.strictSame(plainQuote(await ask(v200, CC, USDCX, '1000')), 'maintenance', 'the token list answering 200 with the message');
});

t.test('nightly: "below minSwapAmount → below_minimum without asking for a quote"', async (t) => {
  const { venue, quotes } = setup(() => ({ body: quoteJson('125', '"15.6"') }));
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '124.9999999999')), 'below_minimum');
  t.equal(quotes().length, 0, 'no quote asked');
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '125')), { gross: '15.6', fee: null }, 'exactly 125 CC is asked');
  t.strictSame(plainQuote(await ask(venue, USDCX, CC, '19')), 'below_minimum', "USDCx's own minimum, 20");
});

t.test('nightly: "above maxSwapUsd at the give token\'s price → above_maximum" without asking for a quote', async (t) => {
  const { venue, quotes } = setup(() => ({ body: quoteJson('400000', '"49000"') }));
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '400000.0000000001')), 'above_maximum', 'just over 50,000 USD at 0.125');
  t.equal(quotes().length, 0, 'no quote asked');
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '400000')), { gross: '49000', fee: null }, 'exactly 50,000 USD is asked');
  const noPrice = JSON.stringify({ tokens: (JSON.parse(TOKENS_JSON) as { tokens: Array<Record<string, unknown>> }).tokens.map((tk) => ({ ...tk, price: '0' })) });
  const { venue: unpriced } = setup(() => ({ body: quoteJson('400000.0000000001', '"49000"') }), () => ({ body: noPrice }));
  t.ok((await ask(unpriced, CC, USDCX, '400000.0000000001')).available, 'without a usable price the cap is left to the venue');
});

t.test('nightly: "no_pool" for a token it does not list (CBTC) and a pair without CC', async (t) => {
  const { venue, quotes } = setup();
  t.strictSame(plainQuote(await ask(venue, CC, CBTC, '1000')), 'no_pool');
  t.strictSame(plainQuote(await ask(venue, USDCX, CBTC, '1000')), 'no_pool');
  t.equal(quotes().length, 0);
});

t.test('nightly: a zero toAmount → below_minimum', async (t) => {
  const { venue } = setup(() => ({ body: quoteJson('1000', '"0"') }));
  t.strictSame(plainQuote(await ask(venue, CC, USDCX, '1000')), 'below_minimum');
});

t.test('nightly: "HTTP 500" is thrown (the engine reports venue_error)', async (t) => {
  const { venue } = setup(() => ({ status: 500, body: '{"message":"internal error"}' }));
  await t.rejects(ask(venue, CC, USDCX, '1000'), VenueHttpError);
  const { venue: v429 } = setup(() => ({ status: 429, body: 'slow down' }));
  await t.rejects(ask(v429, CC, USDCX, '1000'), VenueHttpError, 'a 429 too');
});

t.test('nightly: "malformed JSON", a missing toAmount, or a fromAmount other than the amount asked is thrown as unreadable', async (t) => {
  await t.rejects(ask(setup(() => ({ body: '{"toAmount": ' })).venue, CC, USDCX, '1000'), VenueUnreadable);
  await t.rejects(ask(setup(() => ({ body: '{"fromAmount":"1000"}' })).venue, CC, USDCX, '1000'), VenueUnreadable);
  await t.rejects(ask(setup(() => ({ body: quoteJson('10000000000000', '"149"') })).venue, CC, USDCX, '1000'), VenueUnreadable, 'base units');
  await t.rejects(ask(setup(() => ({ body: quoteJson('1000', '"-1"') })).venue, CC, USDCX, '1000'), VenueUnreadable, 'negative');
  await t.rejects(ask(setup(undefined, () => ({ body: '{"tokens": "none"}' })).venue, CC, USDCX, '1000'), VenueUnreadable, 'a token list that is not a list');
});

t.test('nightly: "a hang past the deadline" → timeout, promptly', async (t) => {
  const { venue } = setup(() => 'hang');
  // The venue's own timeout (setup's) outlasts the test: only the deadline can settle it.
  t.strictSame(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('1000') }, deadlineIn(30))), 'timeout');
  const { venue: own } = setup(() => 'hang', undefined, 40);
  t.strictSame(plainQuote(await ask(own, CC, USDCX, '1000')), 'timeout', "the venue's own timeout, with no deadline");
  const { venue: tokensHang } = setup(undefined, () => 'hang', 40);
  t.strictSame(plainQuote(await ask(tokensHang, CC, USDCX, '1000')), 'timeout', 'the token list hanging');
});

t.test('nightly probe: "GET /nswap/tokens → live, pairs = CC paired with each known token present"', async (t) => {
  const signal = neverAborted();
  t.strictSame(await setup().venue.probe(signal), { live: true, pairs: ['CC/USDCx'] });
  t.strictSame(await setup(undefined, () => ({ status: 500, body: '{}' })).venue.probe(signal), { live: false, pairs: [] }, 'HTTP 500');
  t.strictSame(await setup(undefined, () => ({ body: MAINTENANCE })).venue.probe(signal), { live: false, pairs: [] }, 'maintenance');
  t.strictSame(await setup(undefined, () => ({ body: 'nope' })).venue.probe(signal), { live: false, pairs: [] }, 'not JSON');
  t.strictSame(await setup(undefined, () => 'hang', 30).venue.probe(signal), { live: false, pairs: [] }, 'no answer in time');
  const noCc = JSON.stringify({ tokens: [{ index: 1, instrumentId: 'USDCx', symbol: 'USDCx', price: '1', minSwapAmount: '20', maxSwapUsd: '50000' }] });
  t.strictSame(await setup(undefined, () => ({ body: noCc })).venue.probe(signal), { live: true, pairs: [] }, 'no CC listed: no pairs');
});

t.test('nightly: a recipient party is required', async (t) => {
  t.throws(() => new NightlyVenue({ baseUrl: NIGHTLY_BASE_URL, timeoutMs: 100, recipient: '' }));
});

t.test('nightly: "priceImpact as the venue states it", a fraction rounded up to 10 digits; none, or one that reads as no fraction below 1, is not known and the quote stands', async (t) => {
  const stated = async (priceImpact: string) => {
    const { venue } = setup(() => ({ body: quoteJson('1000', '"149.1234567891"').replace('"priceImpact":"0.0012"', priceImpact) }));
    const q = await ask(venue, CC, USDCX, '1000');
    return q.available ? (q.priceImpact === null ? null : q.priceImpact?.toFixed()) : q.rejectionCode;
  };
  t.equal(await stated('"priceImpact":"0.0012"'), '0.0012');
  t.equal(await stated('"priceImpact":"0.00000623746101"'), '0.0000062375', 'past 10 digits: up');
  t.equal(await stated('"priceImpact":null'), null);
  t.equal(await stated('"rate":"0.149123"'), null, 'absent');
  t.equal(await stated('"priceImpact":"1.2"'), null, 'not below 1 (a percentage?): not read as a fraction');
  t.equal(await stated('"priceImpact":"-0.1"'), null, 'negative');
  t.equal(await stated('"priceImpact":0.0012'), null, 'a JSON number, which would pass through a float');
});
