// The OneSwap adapter (core/venues/oneswap.ts) against fixtures of the documented shapes (its SDK
// types for GET /api/v1/quote and its errors), served by a fake fetch. Fixture bodies are JSON
// text, so numbers keep every digit they are written with; expected grosses are recomputed with an
// independent decimal.js instance, never by the adapter's own arithmetic.
import { Decimal as DecimalJs } from 'decimal.js';
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { ONESWAP_BASE_URL, OneSwapVenue } from '../../../core/venues/oneswap.js';
import { VenueHttpError, VenueUnreadable } from '../../../core/venues/venue-http.js';
import { deadlineIn, fakeFetch, neverAborted, noDeadline, outcome, plainQuote, type Reply, type SentRequest } from '../../helpers/venue-fetch.js';

const X = DecimalJs.clone({ precision: 200, rounding: DecimalJs.ROUND_FLOOR, toExpNeg: -300, toExpPos: 300 });
const x = (v: string): InstanceType<typeof X> => new X(v);
/** floor(output × amount / (amount − fee)) to 10 fractional digits: the documented extrapolation. */
const extrapolated = (output: string, amount: string, fee: string): string =>
  x(output).times(x(amount)).div(x(amount).minus(x(fee))).toDecimalPlaces(10, X.ROUND_FLOOR).toFixed();

const KEY = 'os_live_test';

/** A OneSwap venue over the fake fetch, answering with `reply`. */
function oneswap(reply: (call: SentRequest) => Reply) {
  const fake = fakeFetch(reply);
  const venue = new OneSwapVenue({ baseUrl: ONESWAP_BASE_URL, headers: { 'X-API-Key': KEY }, timeoutMs: 600_000, fetch: fake.fetch });
  return { venue, calls: fake.calls };
}

const open = noDeadline();

/** A quote answer of the documented shape; `extra` is spliced in as JSON text. */
function quoteBody(o: { input: string; output: string; give?: Token; want?: Token; extra?: string }): string {
  const give = o.give ?? CC;
  const want = o.want ?? USDCX;
  return `{
    "inputToken": "${give.instrument}", "inputTokenAdmin": "admin::1220aa",
    "outputToken": "${want.instrument}", "outputTokenAdmin": "admin::1220bb",
    "inputAmount": ${o.input}, "outputAmount": ${o.output},
    "rate": "0.1488", "priceImpact": "0.0008", "fee": 0.003,
    "poolId": "pool-cc-usdcx", "expiresIn": 30, "maxPriceImpact": "0.15"${o.extra ? `, ${o.extra}` : ''}
  }`;
}



const TRAFFIC = '"estimatedTrafficCost": {"bytes": 4096, "usd": "0.0118", "cc": "0.79"}, "trafficFeeInInput": "0.79", "inputAmountAfterTrafficFee": "99.21"';

t.test('"the output is computed from the input net of the traffic fee": fee = trafficFeeInInput deducted from the give amount, gross = floor(output × amount / (amount − fee))', async (t) => {
  const { venue, calls } = oneswap(() => ({ body: quoteBody({ input: '"100"', output: '"14.7651282205"', extra: TRAFFIC }) }));
  const q = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open);
  t.strictSame(plainQuote(q), {
    gross: extrapolated('14.7651282205', '100', '0.79'),
    fee: { amount: '0.79', asset: 'CC', appliedTo: 'deducted_from_give' },
  });
  t.match(plainQuote(q), { gross: '14.8827015628' }, 'by hand: 14.7651282205 × 100 / 99.21 = 14.88270156284…');
  t.equal(calls.length, 1);
  t.equal(calls[0]?.method, 'GET');
  t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/quote?from=Amulet&to=USDCx&amount=100', '"use Amulet for CC"');
  t.equal(calls[0]?.headers['X-API-Key'], KEY, 'the API key as X-API-Key');
});

t.test('"without a traffic fee (absent or 0) there is no fee and gross is outputAmount"', async (t) => {
  for (const extra of [undefined, '"trafficFeeInInput": "0", "inputAmountAfterTrafficFee": "1000"', '"trafficFeeInInput": null']) {
    const { venue, calls } = oneswap(() => ({ body: quoteBody({ give: USDCX, want: CC, input: '"1000"', output: '"6650.9"', ...(extra ? { extra } : {}) }) }));
    t.strictSame(plainQuote(await venue.quote({ give: USDCX, want: CC, amount: dec('1000') }, open)), { gross: '6650.9', fee: null }, extra ?? 'absent');
    t.equal(calls[0]?.url, 'https://api.oneswap.cc/api/v1/quote?from=USDCx&to=Amulet&amount=1000');
  }
});

t.test('"the larger of trafficFeeInInput and amount − inputAmountAfterTrafficFee is the fee", either alone too', async (t) => {
  const cases = [
    ['"inputAmountAfterTrafficFee": "99.5"', '0.5'],
    ['"trafficFeeInInput": "0.5", "inputAmountAfterTrafficFee": "99.4"', '0.6'],
    ['"trafficFeeInInput": "0.7", "inputAmountAfterTrafficFee": "99.4"', '0.7'],
  ] as const;
  for (const [extra, fee] of cases) {
    const { venue } = oneswap(() => ({ body: quoteBody({ input: '"100"', output: '"14.8"', extra }) }));
    t.strictSame(
      plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open)),
      { gross: extrapolated('14.8', '100', fee), fee: { amount: fee, asset: 'CC', appliedTo: 'deducted_from_give' } },
      extra,
    );
  }
});

t.test('"never let a float reach an amount": amounts are read exactly as strings, and a JSON number where OneSwap sends a string is refused, never rounded', async (t) => {
  const { venue } = oneswap(() => ({ body: quoteBody({ input: '"1000000"', output: '"123456789.1234567891"' }) }));
  t.strictSame(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('1000000') }, open)), { gross: '123456789.1234567891', fee: null });
  // As JSON numbers a float would read 123456789.12345679 and 0.50000000000000000001 as 0.5.
  const { venue: numeric } = oneswap(() => ({ body: quoteBody({ input: '"1000000"', output: '123456789.1234567891' }) }));
  await t.rejects(numeric.quote({ give: CC, want: USDCX, amount: dec('1000000') }, open), { name: 'VenueUnreadable', message: /outputAmount/ });
  const { venue: withFee } = oneswap(() => ({
    body: quoteBody({ input: '"100"', output: '"14.887162959697779123"', extra: '"trafficFeeInInput": "0.50000000000000000001"' }),
  }));
  t.strictSame(plainQuote(await withFee.quote({ give: CC, want: USDCX, amount: dec('100') }, open)), {
    // "fees round up": 0.5000000001; the gross extrapolates the exact output with that fee.
    gross: extrapolated('14.887162959697779123', '100', '0.5000000001'),
    fee: { amount: '0.5000000001', asset: 'CC', appliedTo: 'deducted_from_give' },
  });
});

t.test('"a zero output, or a traffic fee as large as the amount, is below_minimum"', async (t) => {
  for (const [output, extra] of [
    ['"0"', undefined],
    ['"0.01"', '"trafficFeeInInput": "1"'],
    ['"0.01"', '"trafficFeeInInput": "1.5"'],
  ] as const) {
    const { venue } = oneswap(() => ({ body: quoteBody({ input: '"1"', output, ...(extra ? { extra } : {}) }) }));
    t.equal(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('1') }, open)), 'below_minimum', `${output} ${extra ?? ''}`);
  }
});

t.test('"404 is no_pool"', async (t) => {
  const { venue } = oneswap(() => ({ status: 404, body: '{"error": "Pool not found"}' }));
  t.equal(plainQuote(await venue.quote({ give: USDCX, want: CBTC, amount: dec('100') }, open)), 'no_pool');
});

t.test('"400 over the 15 % price-impact cap is insufficient_liquidity"', async (t) => {
  for (const body of ['{"error": "Price impact 23.4% exceeds maximum of 15%"}', '{"error": "Bad request", "code": "PRICE_IMPACT_TOO_HIGH"}']) {
    const { venue } = oneswap(() => ({ status: 400, body }));
    t.equal(plainQuote(await venue.quote({ give: CC, want: USDCX, amount: dec('50000000') }, open)), 'insufficient_liquidity', body);
  }
});

t.test('"409 ambiguous_pool_pair is thrown (venue_error, logged), not no_pool"', async (t) => {
  const body = '{"error": "Multiple pools match", "code": "ambiguous_pool_pair", "candidates": [{"poolId": "a", "tokenA": "Amulet", "tokenB": "USDCx"}, {"poolId": "b", "tokenA": "Amulet", "tokenB": "USDCx"}]}';
  const { venue } = oneswap(() => ({ status: 409, body }));
  const err = await outcome(venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open));
  t.ok(err instanceof VenueHttpError && err.status === 409);
  t.match((err as VenueHttpError).body, { code: 'ambiguous_pool_pair' });
});

t.test('"anything else is thrown, so the engine logs it and reports venue_error": other 400s, 401, 429, HTTP 500', async (t) => {
  for (const [status, body] of [
    [400, '{"error": "amount must be a positive decimal"}'],
    [401, '{"error": "Invalid API key"}'],
    [429, '{"error": "Rate limit exceeded"}'],
    [500, '{"error": "Internal server error"}'],
    [500, 'Internal Server Error'],
  ] as const) {
    const { venue } = oneswap(() => ({ status, body }));
    const err = await outcome(venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open));
    t.ok(err instanceof VenueHttpError && err.status === status, `${status} ${body} is thrown as is`);
  }
});

t.test('"an answer that is not JSON, or not the documented shape, is unreadable" (venue_error)', async (t) => {
  const bodies = [
    '{"outputAmount": "14.8',
    'Bad Gateway',
    '"14.8"',
    '{"inputAmount": "100"}',
    quoteBody({ input: '"100"', output: '"-3"' }),
    quoteBody({ input: '"100"', output: '"14.8"', extra: '"trafficFeeInInput": "lots"' }),
    // An output for another amount than the one asked for.
    quoteBody({ input: '"10"', output: '"1.48"' }),
  ];
  for (const body of bodies) {
    const { venue } = oneswap(() => ({ body }));
    const err = await outcome(venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open));
    t.type(err, VenueUnreadable, body.slice(0, 60));
  }
});

t.test('"a hang past the deadline is timeout, promptly"', async (t) => {
  const { venue } = oneswap(() => 'hang');
  // The venue's own timeout outlasts the test: only the deadline can settle it.
  const q = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, deadlineIn(50));
  t.equal(plainQuote(q), 'timeout');
});

t.test('probe: "no health endpoint: a 100 CC quote per pair; live when OneSwap answers; a pair is served unless 404"', async (t) => {
  const { venue, calls } = oneswap((call) =>
    call.url.includes('to=CBTC')
      ? { status: 404, body: '{"error": "Pool not found"}' }
      : { body: quoteBody({ input: '"100"', output: '"14.8"', extra: TRAFFIC }) },
  );
  t.strictSame(await venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx'] });
  t.strictSame(calls.map((c) => c.url).sort(), [
    'https://api.oneswap.cc/api/v1/quote?from=Amulet&to=CBTC&amount=100',
    'https://api.oneswap.cc/api/v1/quote?from=Amulet&to=USDCx&amount=100',
  ]);
  t.equal(calls[0]?.headers['X-API-Key'], KEY);
  const both = oneswap(() => ({ body: quoteBody({ input: '"100"', output: '"14.8"' }) }));
  t.strictSame(await both.venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] });
  const ambiguous = oneswap((call) => (call.url.includes('to=CBTC') ? { status: 409, body: '{"code": "ambiguous_pool_pair", "candidates": []}' } : { status: 500, body: 'x' }));
  t.strictSame(await ambiguous.venue.probe(neverAborted()), { live: true, pairs: ['CC/CBTC'] }, 'a 409 is an answer: the pool exists');
});

t.test('probe: "not live when no pair gets an answer: 5xx, 401, 429, unreadable, or a hang"', async (t) => {
  for (const reply of [{ status: 500, body: 'oops' }, { status: 401, body: '{"error": "Invalid API key"}' }, { status: 429, body: '{}' }, { body: 'not json' }] as const) {
    const { venue } = oneswap(() => reply);
    t.strictSame(await venue.probe(neverAborted()), { live: false, pairs: [] }, JSON.stringify(reply));
  }
  const { venue } = oneswap(() => 'hang');
  t.strictSame(await venue.probe(deadlineIn(50).signal), { live: false, pairs: [] }, 'a hang, settled by the probe\'s signal alone');
});

t.test('a bare or HTML 404 (a wrong ONESWAP_URL) is a failing venue, not one without pools: thrown for the engine to log, and no answer for the probe', async (t) => {
  for (const body of ['<html>Not Found</html>', '{"detail": "Not Found"}']) {
    const { venue } = oneswap(() => ({ status: 404, body }));
    t.type(await outcome(venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open)), VenueHttpError, body);
    t.strictSame(await venue.probe(neverAborted()), { live: false, pairs: [] }, `${body}: the probe`);
  }
});

t.test('oneswap: "priceImpact as the venue states it", a fraction rounded up to 10 digits; an unreadable one is not known and the quote stands', async (t) => {
  const stated = async (priceImpact: string) => {
    const { venue } = oneswap(() => ({ body: quoteBody({ input: '"100"', output: '"14.7651282205"', extra: TRAFFIC }).replace('"priceImpact": "0.0008"', priceImpact) }));
    const q = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, open);
    return q.available ? (q.priceImpact === null ? null : q.priceImpact?.toFixed()) : q.rejectionCode;
  };
  t.equal(await stated('"priceImpact": "0.0008"'), '0.0008');
  t.equal(await stated('"priceImpact": "0.00000826671234"'), '0.0000082668', 'past 10 digits: up');
  t.equal(await stated('"priceImpact": "high"'), null);
  t.equal(await stated('"priceImpact": "15"'), null, 'not below 1');
});
