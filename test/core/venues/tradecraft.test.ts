// The Tradecraft adapter (core/venues/tradecraft.ts) against fixtures of its documented API, and
// the shared venue HTTP client (core/venues/venue-http.ts).
import { Decimal as DecimalJs } from 'decimal.js';
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { TradecraftVenue } from '../../../core/venues/tradecraft.js';
import { parseJsonKeepingNumbers } from '../../../core/json-numbers.js';
import { decimalField, VenueHttp, VenueHttpError, VenueUnreadable } from '../../../core/venues/venue-http.js';
import { deadlineIn, fakeFetch, neverAborted, noDeadline, type Reply } from '../../helpers/venue-fetch.js';

const POOLS = `{"pools":[
  {"token1":"CC","token2":"USDCx","lp_token_name":"TC CC/USDCx LP","token1_holdings":20000000,"token2_holdings":3000000,"total_lp_tokens":1,"lp_fee_percent":0.25,"operator_fee_percent":0.05},
  {"token1":"CC","token2":"CETH","lp_token_name":"TC CC/CETH LP","token1_holdings":1,"token2_holdings":1,"total_lp_tokens":1,"lp_fee_percent":0.3,"operator_fee_percent":0}
]}`;

/** A Tradecraft venue over the fake fetch, answering by path (after /v1) from `routes`, else 404. */
const venue = (routes: Record<string, Reply>, timeoutMs = 1000) => {
  const fake = fakeFetch((call) => routes[new URL(call.url).pathname.replace(/^\/v1/, '')] ?? { status: 404, body: '{"error":"not found"}' });
  return { venue: new TradecraftVenue({ baseUrl: 'https://api.tradecraft.fi/v1', timeoutMs, fetch: fake.fetch }), sent: fake.calls };
};

t.test('parseJsonKeepingNumbers: "never let a float reach an amount": every JSON number keeps its source text', async (t) => {
  t.strictSame(parseJsonKeepingNumbers('{"user_gets": 14.887162959697779123, "n": [1e-7, 0]}'), { user_gets: '14.887162959697779123', n: ['1e-7', '0'] });
});

t.test('quote: "GET /quoteForFixedInput/{tokenA}/{tokenB}?givingAmount=" -> user_gets, with the pool fee from /pools deducted from the give amount', async (t) => {
  const { venue: tradecraft, sent } = venue({
    '/pools': { body: POOLS },
    '/quoteForFixedInput/CC/USDCx': { body: '{"user_gets": 14.887162959697779}' },
  });
  const quote = await tradecraft.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline());
  t.ok(quote.available);
  if (!quote.available) return;
  t.equal(quote.fee?.amount.toFixed(), '0.3', 'fee = amount × (lp 0.25 % + operator 0.05 %)');
  t.equal(quote.fee?.asset, CC);
  t.equal(quote.fee?.appliedTo, 'deducted_from_give');
  // gross = floor(user_gets × 100 / 99.7), so net = floor(gross × 99.7 / 100) never exceeds user_gets.
  t.equal(quote.gross.toFixed(), dec('14.887162959697779').times(100).div('99.7').toDecimalPlaces(10, 1).toFixed());
  t.ok(quote.gross.times('99.7').div(100).lte('14.887162959697779'), 'the net it implies is never more than the venue said');
  const quoteRequest = sent.find((s) => s.url.includes('quoteForFixedInput'))!;
  t.equal(quoteRequest.url, 'https://api.tradecraft.fi/v1/quoteForFixedInput/CC/USDCx?givingAmount=100');
  t.match(quoteRequest.headers['user-agent'], /^bestex\//, 'a user agent of its own: the CDN refuses Node\'s default');
});

t.test('quote: a user_gets with more digits than a float holds reaches the quote exactly', async (t) => {
  const { venue: tradecraft } = venue({
    '/pools': { body: POOLS.replace('"lp_fee_percent":0.25,"operator_fee_percent":0.05', '"lp_fee_percent":0,"operator_fee_percent":0') },
    '/quoteForFixedInput/USDCx/CC': { body: '{"user_gets": 663.1234567891234567}' },
  });
  const quote = await tradecraft.quote({ give: USDCX, want: CC, amount: dec('100') }, noDeadline());
  t.equal(quote.available && quote.gross.toFixed(), '663.1234567891', 'floor to 10 fractional digits of the exact text, not of a float');
});

t.test('quote: a pair /pools does not list is no_pool, without asking for a quote', async (t) => {
  const { venue: tradecraft, sent } = venue({ '/pools': { body: POOLS } });
  t.strictSame(await tradecraft.quote({ give: CC, want: CBTC, amount: dec('100') }, noDeadline()), { available: false, rejectionCode: 'no_pool' });
  t.notOk(sent.some((s) => s.url.includes('quoteForFixedInput')));
});

t.test('quote: "400 {error}" for an unknown AMM is no_pool; other HTTP errors and unreadable bodies are thrown for the engine to log as venue_error', async (t) => {
  const noAmm = venue({ '/pools': { body: POOLS }, '/quoteForFixedInput/CC/USDCx': { status: 400, body: '{"error":"No AMM with id TC CC/USDCx LP"}' } });
  t.strictSame(await noAmm.venue.quote({ give: CC, want: USDCX, amount: dec('1') }, noDeadline()), { available: false, rejectionCode: 'no_pool' });
  const failing = venue({ '/pools': { body: POOLS }, '/quoteForFixedInput/CC/USDCx': { status: 500, body: 'upstream down' } });
  await t.rejects(failing.venue.quote({ give: CC, want: USDCX, amount: dec('1') }, noDeadline()), VenueHttpError);
  const garbled = venue({ '/pools': { body: POOLS }, '/quoteForFixedInput/CC/USDCx': { body: '{"user_gets": ' } });
  await t.rejects(garbled.venue.quote({ give: CC, want: USDCX, amount: dec('1') }, noDeadline()), VenueUnreadable);
  const wrongShape = venue({ '/pools': { body: POOLS }, '/quoteForFixedInput/CC/USDCx': { body: '{"user_gets": "lots"}' } });
  await t.rejects(wrongShape.venue.quote({ give: CC, want: USDCX, amount: dec('1') }, noDeadline()), { name: 'VenueUnreadable', message: /user_gets/ });
});

t.test('quote: a venue that hangs past its timeout is a timeout, promptly; so is one the quote\'s deadline aborts', async (t) => {
  const hanging = venue({ '/pools': { body: POOLS }, '/quoteForFixedInput/CC/USDCx': 'hang' }, 50);
  t.strictSame(await hanging.venue.quote({ give: CC, want: USDCX, amount: dec('1') }, noDeadline()), { available: false, rejectionCode: 'timeout' });
  const aborted = venue({ '/pools': { body: POOLS }, '/quoteForFixedInput/CC/USDCx': 'hang' }, 60_000);
  t.strictSame(await aborted.venue.quote({ give: CC, want: USDCX, amount: dec('1') }, deadlineIn(20)), { available: false, rejectionCode: 'timeout' });
});

t.test('probe: live with the pairs /pools lists (pools of tokens the service does not quote left out); dead when /pools fails', async (t) => {
  t.strictSame(await venue({ '/pools': { body: POOLS } }).venue.probe(neverAborted()), { live: true, pairs: ['CC/USDCx'] });
  t.strictSame(await venue({ '/pools': { status: 503, body: '' } }).venue.probe(neverAborted()), { live: false, pairs: [] });
  t.strictSame(await venue({ '/pools': { body: '<html>' } }).venue.probe(neverAborted()), { live: false, pairs: [] });
});

t.test('quote: once /pools is read, a pair it does not list is no_pool without reading it again; a pool without fees quotes no fee', async (t) => {
  const { venue: tradecraft, sent } = venue({
    '/pools': { body: POOLS.replace('"lp_fee_percent":0.25,"operator_fee_percent":0.05', '"lp_fee_percent":0,"operator_fee_percent":0') },
    '/quoteForFixedInput/CC/USDCx': { body: '{"user_gets": 15}' },
  });
  const quote = await tradecraft.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline());
  t.match(quote, { available: true, fee: null });
  await tradecraft.quote({ give: CC, want: CBTC, amount: dec('1') }, noDeadline());
  await tradecraft.quote({ give: CBTC, want: CC, amount: dec('1') }, noDeadline());
  t.equal(sent.filter((s) => s.url.endsWith('/pools')).length, 1, '/pools read once');
});

t.test('venue HTTP: nothing secret reaches an error a log could carry: not a URL\'s credentials, not a venue\'s error body', async (t) => {
  const http = new VenueHttp({ baseUrl: 'https://user:hunter2@api.tradecraft.fi/v1', timeoutMs: 1000 });
  const err = await http.getJson('/pools', noDeadline()).catch((e: unknown) => e as Error);
  t.type(err, VenueUnreadable);
  t.notMatch(String((err as Error).message), /hunter2/);
  const failing = new VenueHttp({ baseUrl: 'https://api.example/v1', timeoutMs: 1000, fetch: fakeFetch(() => ({ status: 401, body: '{"error":"bad key os_live_hunter2"}' })).fetch });
  const refused = await failing.getJson('/x', noDeadline()).catch((e: unknown) => e as VenueHttpError);
  t.match(refused, { status: 401, body: { error: 'bad key os_live_hunter2' } }, 'the adapter can read the body');
  t.notMatch(JSON.stringify(refused), /hunter2/, 'but it is not among the error\'s own fields, which a logger writes');
});

t.test('decimalField: "never let a float reach an amount", and no number so large that writing it out would stall the service', async (t) => {
  t.equal(decimalField('14.887162959697779123', 'x').toFixed(), '14.887162959697779123');
  t.equal(decimalField('1.5e3', 'x').toFixed(), '1500');
  for (const bad of ['1e9000000000000000', '1e31', '1e-31', `1${'0'.repeat(70)}`, '-1', '0x10', 'NaN', '']) {
    t.throws(() => decimalField(bad, 'x'), VenueUnreadable, JSON.stringify(bad));
  }
});

/** ceil(a' / (x + a')) to 10 digits, a' the amount less the fee, in an independent decimal.js. */
const X = DecimalJs.clone({ precision: 200 });
const curveImpact = (holdings: string, amount: string, fee: string): string => {
  const after = new X(amount).minus(fee);
  return after.div(new X(holdings).plus(after)).toDecimalPlaces(10, X.ROUND_CEIL).toFixed();
};

t.test('quote: priceImpact from the pool\'s holdings /pools stated (no round trip of its own): 1 - x / (x + a\'), x the give token\'s holdings, a\' the amount less the fee; rounded up', async (t) => {
  const { venue: tradecraft, sent } = venue({
    '/pools': { body: POOLS },
    '/quoteForFixedInput/CC/USDCx': { body: '{"user_gets": 14.9549254495}' },
    '/quoteForFixedInput/USDCx/CC': { body: '{"user_gets": 663.1234567891}' },
  });
  const impact = async (give: Token, want: Token, amount: string) => {
    const q = await tradecraft.quote({ give, want, amount: dec(amount) }, noDeadline());
    return q.available ? q.priceImpact?.toFixed() : q.rejectionCode;
  };
  t.equal(await impact(CC, USDCX, '100'), curveImpact('20000000', '100', '0.3'));
  t.equal(await impact(CC, USDCX, '100'), '0.000004985', 'by hand: 99.7 / 20000099.7 = 0.00000498497…, up');
  t.equal(await impact(USDCX, CC, '100'), curveImpact('3000000', '100', '0.3'), 'giving USDCx: its holdings');
  t.equal(sent.filter((s) => s.url.endsWith('/pools')).length, 1, '/pools read once, not per quote');
});

t.test('quote: without holdings in /pools (absent, unreadable or zero) the impact is not known, and the quote stands', async (t) => {
  for (const [what, holdings] of [['absent', ''], ['a string that is no amount', '"token1_holdings":"lots","token2_holdings":3000000,'], ['zero', '"token1_holdings":0,"token2_holdings":3000000,']] as const) {
    const { venue: tradecraft } = venue({
      '/pools': { body: POOLS.replace('"token1_holdings":20000000,"token2_holdings":3000000,', holdings) },
      '/quoteForFixedInput/CC/USDCx': { body: '{"user_gets": 14.9549254495}' },
    });
    const q = await tradecraft.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline());
    t.ok(q.available, what);
    t.equal(q.available && q.priceImpact, undefined, `${what}: none`);
  }
});
