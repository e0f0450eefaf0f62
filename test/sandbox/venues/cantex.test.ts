// The sandbox's Cantex wire (sandbox/venues/cantex.ts): its answers checked directly, every
// figure recomputed from the pool reserves with an independent decimal.js instance, and the real
// adapter (core/venues/cantex.ts) run against it through wireFetch, next to the in-process
// sandbox venue it must be economically the same as.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { toQuoteVenue } from '../../../core/quotes/math.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import type { AmmPool, SandboxVenue, SandboxVenueSpec } from '../../../sandbox/venues/sandbox-venue.js';
import { cantexWire } from '../../../sandbox/venues/cantex.js';
import { SANDBOX_INSTRUMENT_ADMINS, SANDBOX_VENUE_KEY, type WireHandler, type WireResponse } from '../../../sandbox/venues/wire.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { CANTEX_BASE_URL, CantexVenue } from '../../../core/venues/cantex.js';
import { VenueHttpError } from '../../../core/venues/venue-http.js';
import { neverAborted, noDeadline, outcome, plainQuote } from '../../helpers/venue-fetch.js';
import { ceil10, floor10, s, x, X } from '../../helpers/exact.js';
import { wireFetch } from '../../helpers/wire-fetch.js';


/** Constant product, the 0.05 % LP fee inside the price unless `lpFee` is false. */
function cpOut(reserveIn: string, reserveOut: string, amount: string, lpFee = true): X {
  const effIn = lpFee ? x(amount).times('0.9995') : x(amount);
  return floor10(x(reserveOut).times(effIn).div(x(reserveIn).plus(effIn)));
}

const ADMINS = SANDBOX_INSTRUMENT_ADMINS;
const AUTH = { authorization: `Bearer ${SANDBOX_VENUE_KEY}` };

let market: SandboxVenue;
let spec: SandboxVenueSpec;
let wire: WireHandler;
t.beforeEach(() => {
  // Fresh pools per test: their reserves are mutable objects.
  const found = createSandboxVenues().find((v) => v.id === 'cantex');
  if (!found) throw new Error('no sandbox cantex');
  market = found;
  spec = found.spec;
  wire = cantexWire(spec, ADMINS);
});

const pool = (quote: Token): AmmPool => {
  const found = spec.pricing.kind === 'amm' ? spec.pricing.pools.find((p) => p.quote === quote) : undefined;
  if (!found) throw new Error(`no ${quote.symbol} pool`);
  return found;
};

/** The SDK's get_swap_quote body: every field a string. */
function quoteRequest(sell: Token, buy: Token, sellAmount: string, admins: Record<string, string> = ADMINS) {
  return {
    sellAmount,
    sellInstrumentId: sell.instrument,
    sellInstrumentAdmin: admins[sell.instrument],
    buyInstrumentId: buy.instrument,
    buyInstrumentAdmin: admins[buy.instrument],
  };
}

function post(body: unknown, headers: Record<string, string> = AUTH, path = '/v2/pools/quote'): WireResponse {
  return wire({ method: 'POST', path, query: new URLSearchParams(), headers, body: typeof body === 'string' ? body : JSON.stringify(body) });
}

function get(path: string, headers: Record<string, string> = AUTH): WireResponse {
  return wire({ method: 'GET', path, query: new URLSearchParams(), headers, body: '' });
}

const json = (r: WireResponse) => JSON.parse(r.body) as Record<string, any>;

/** The real adapter, pointed at the wire. */
function adapter(admins: Record<Token['instrument'], string> = ADMINS, key = SANDBOX_VENUE_KEY): CantexVenue {
  return new CantexVenue({
    baseUrl: CANTEX_BASE_URL,
    headers: { authorization: `Bearer ${key}` },
    timeoutMs: 1_000,
    fetch: wireFetch(wire, CANTEX_BASE_URL),
    instrumentAdmins: admins,
  });
}

t.test('SANDBOX_INSTRUMENT_ADMINS: "party ids <hint>::1220 + 64 lowercase hex", one per instrument, distinct', async (t) => {
  t.strictSame(Object.keys(ADMINS).sort(), ['Amulet', 'CBTC', 'USDCx']);
  for (const party of Object.values(ADMINS)) t.match(party, /^[A-Za-z0-9-]+::1220[0-9a-f]{64}$/, party);
  t.equal(new Set(Object.values(ADMINS)).size, 3);
  t.match(ADMINS.Amulet, /^DSO::/);
});

t.test('"POST /v2/pools/quote answers the documented shape, amounts as decimal strings": every figure recomputes from the pool', async (t) => {
  const answer = post(quoteRequest(CC, USDCX, '100'));
  t.equal(answer.status, 200);
  const body = json(answer);
  const [rIn, rOut, amount] = ['30000000', '4485000', '100'];
  const returned = cpOut(rIn, rOut, amount);
  const noFee = cpOut(rIn, rOut, amount, false);
  const leg = (v: string, token: Token) => ({ amount: v, instrument_id: token.instrument, instrument_admin: ADMINS[token.instrument] });
  t.match(body.pools?.[0]?.contract_id, /^00[0-9a-f]{64}$/, 'a contract id shaped like Canton\'s');
  t.strictSame(body, {
    returned: leg(s(returned), USDCX),
    prices: {
      pool_before: '0.1495',
      pool_after: s(floor10(x(rOut).minus(returned).div(x(rIn).plus(amount)))),
      slippage: s(floor10(x('1').minus(noFee.div(amount).div(x(rOut).div(rIn))))),
      trade: s(floor10(returned.div(amount))),
      trade_no_fees: s(floor10(noFee.div(amount))),
    },
    fees: {
      // "a 0.05 % LP fee inside the price", 5 % of it to the admin.
      fee_percentage: '0.0005',
      amount_admin: '0.0025',
      amount_liquidity: '0.0475',
      instrument_id: 'Amulet',
      instrument_admin: ADMINS.Amulet,
      network_fee: leg('0.79', CC),
    },
    pools: [{ pool_id: 'Amulet-USDCx', contract_id: body.pools[0].contract_id, sell: leg('100', CC), buy: leg(s(returned), USDCX) }],
    pool_size: leg('4485000', USDCX),
    estimated_time_seconds: '6',
  });
  t.equal(s(returned), '14.9424752166', 'the figure itself, as a check on the recomputation');
  // No JSON number anywhere: amounts are text on the wire.
  t.notMatch(answer.body, /"\s*:\s*[-0-9]/);
});

t.test('"returned.amount recomputes from the pool" both ways on both pools, LP fee ceil10 of the sell amount', async (t) => {
  const cases: Array<[Token, Token, string, string, string]> = [
    [CC, USDCX, '123456.7891234567', '30000000', '4485000'],
    [USDCX, CC, '250', '4485000', '30000000'],
    [CC, CBTC, '5000', '10000000', '14.95'],
    [CBTC, CC, '0.0123456789', '14.95', '10000000'],
  ];
  for (const [sell, buy, amount, rIn, rOut] of cases) {
    const body = json(post(quoteRequest(sell, buy, amount)));
    t.equal(body.returned.amount, s(cpOut(rIn, rOut, amount)), `${amount} ${sell.symbol} -> ${buy.symbol}`);
    t.equal(body.returned.instrument_id, buy.instrument);
    const lpFee = ceil10(x(amount).times('0.0005'));
    t.equal(s(x(body.fees.amount_admin).plus(body.fees.amount_liquidity)), s(lpFee), 'admin + liquidity is the LP fee, rounded up');
    t.equal(body.fees.instrument_id, sell.instrument, 'the LP fee is in the sell instrument');
    t.equal(body.pool_size.amount, rOut);
  }
});

t.test('"a 0.79 CC network fee on top for trades under 500 CC; none from 500 CC", counted on the CC side whether sold or bought', async (t) => {
  const fee = (sell: Token, buy: Token, amount: string) => json(post(quoteRequest(sell, buy, amount))).fees.network_fee;
  const cc = (amount: string) => ({ amount, instrument_id: 'Amulet', instrument_admin: ADMINS.Amulet });
  t.strictSame(fee(CC, USDCX, '499.9999999999'), cc('0.79'));
  t.strictSame(fee(CC, USDCX, '500'), cc('0'));
  t.strictSame(fee(CC, CBTC, '100'), cc('0.79'));
  // Buying CC: 10 USDCx buys ~66.8 CC (under 500), 100 USDCx ~668 CC.
  t.strictSame(fee(USDCX, CC, '10'), cc('0.79'));
  t.strictSame(fee(USDCX, CC, '100'), cc('0'));
});

t.test('"an instrument is its id AND its admin": a wrong admin, an unknown instrument or a pair without a pool is 404 {"detail": "Pool not found"}', async (t) => {
  const wrongAdmins = [
    { ...quoteRequest(CC, USDCX, '100'), sellInstrumentAdmin: `DSO::1220${'f'.repeat(64)}` },
    { ...quoteRequest(CC, USDCX, '100'), buyInstrumentAdmin: ADMINS.CBTC },
    { ...quoteRequest(CC, USDCX, '100'), buyInstrumentId: 'CETH' },
    quoteRequest(USDCX, CBTC, '100'),
    quoteRequest(CC, CC, '100'),
  ];
  for (const request of wrongAdmins) {
    const answer = post(request);
    t.equal(answer.status, 404, JSON.stringify(request));
    t.strictSame(json(answer), { detail: 'Pool not found' });
  }
});

t.test('"malformed requests are 400 {detail}", worded without "pool" so the adapter never reads them as no_pool', async (t) => {
  const good = quoteRequest(CC, USDCX, '100');
  const bodies: unknown[] = [
    'not json',
    '[]',
    'null',
    { ...good, sellAmount: undefined },
    { ...good, buyInstrumentAdmin: 7 },
    // A JSON number is refused: it would reach an amount through a float.
    `{"sellAmount": 100, "sellInstrumentId": "Amulet", "sellInstrumentAdmin": "${ADMINS.Amulet}", "buyInstrumentId": "USDCx", "buyInstrumentAdmin": "${ADMINS.USDCx}"}`,
    ...['0', '0.0', '-1', '1.00000000001', '1e3', 'abc', '', ' 1', '01'].map((sellAmount) => ({ ...good, sellAmount })),
  ];
  for (const body of bodies) {
    const answer = post(body);
    t.equal(answer.status, 400, JSON.stringify(body));
    const { detail } = json(answer);
    t.type(detail, 'string');
    t.notMatch(detail, /pool/i);
  }
  t.equal(post({ ...good, sellAmount: '0.0000000001' }).status, 200, 'the smallest Daml Decimal is an amount');
});

t.test('"require Authorization: Bearer <SANDBOX_VENUE_KEY>; anything else is 401 {detail}", on both endpoints', async (t) => {
  for (const headers of [{} as Record<string, string>, { authorization: 'Bearer wrong' }, { authorization: SANDBOX_VENUE_KEY }, { authorization: `Basic ${SANDBOX_VENUE_KEY}` }, { authorization: `Bearer ${SANDBOX_VENUE_KEY}x` }]) {
    for (const answer of [post(quoteRequest(CC, USDCX, '100'), headers), get('/v2/pools/info', headers)]) {
      t.equal(answer.status, 401, JSON.stringify(headers));
      t.strictSame(json(answer), { detail: 'Invalid API key' });
    }
  }
  t.equal(post(quoteRequest(CC, USDCX, '100'), { authorization: `bearer ${SANDBOX_VENUE_KEY}` }).status, 200, 'the scheme is case-insensitive');
});

t.test('"an unknown path answers 404 with a JSON error body"; a known path under another method is 405', async (t) => {
  for (const answer of [get('/v2/pools'), get('/v2/pools/quote/'), post({}, {}, '/v1/pools/quote'), get('/')]) {
    t.equal(answer.status, 404);
    t.strictSame(json(answer), { detail: 'Not Found' });
  }
  t.equal(get('/v2/pools/quote').status, 405);
  t.equal(post(quoteRequest(CC, USDCX, '100'), AUTH, '/v2/pools/info').status, 405);
  t.strictSame(json(get('/v2/pools/quote')), { detail: 'Method Not Allowed' });
});

t.test('"GET /v2/pools/info": the SDK\'s pool entries, one per sandbox pool, under the configured admins', async (t) => {
  const answer = get('/v2/pools/info');
  t.equal(answer.status, 200);
  const { pools } = json(answer);
  t.equal(pools.length, 2);
  t.match(pools, [
    { token_a_instrument_id: 'Amulet', token_a_instrument_admin: ADMINS.Amulet, token_b_instrument_id: 'USDCx', token_b_instrument_admin: ADMINS.USDCx },
    { token_a_instrument_id: 'Amulet', token_a_instrument_admin: ADMINS.Amulet, token_b_instrument_id: 'CBTC', token_b_instrument_admin: ADMINS.CBTC },
  ]);
  for (const p of pools) t.match(p.contract_id, /^00[0-9a-f]{64}$/);
  t.not(pools[0].contract_id, pools[1].contract_id);
  // The same contract id in the quote's pools[] as in the pool list.
  t.equal(json(post(quoteRequest(CC, CBTC, '100'))).pools[0].contract_id, pools[1].contract_id);
});

t.test('"the handler never mutates the state": reserves are as they were after quotes both ways', async (t) => {
  const before = [pool(USDCX), pool(CBTC)].map((p) => [p.baseReserve.toFixed(), p.quoteReserve.toFixed()]);
  for (const [sell, buy] of [[CC, USDCX], [USDCX, CC], [CC, CBTC], [CBTC, CC]] as const) post(quoteRequest(sell, buy, '1000'));
  t.strictSame([pool(USDCX), pool(CBTC)].map((p) => [p.baseReserve.toFixed(), p.quoteReserve.toFixed()]), before);
});

t.test('cantexWire refuses a spec it cannot serve: an order book, or a minimum Cantex has no way to state', async (t) => {
  const temple = createSandboxVenues().find((v) => v.id === 'temple');
  t.throws(() => cantexWire(temple!.spec, ADMINS), /not an AMM/);
  t.throws(() => cantexWire({ ...spec, minCc: dec('1') }, ADMINS), /minimum/);
});

// The real adapter against the wire.

t.test('"the real adapter through the wire is the in-process venue of the same id": the same gross and fee', async (t) => {
  const venue = adapter();
  const requests: Array<[Token, Token, string]> = [
    [CC, USDCX, '100'],
    [CC, USDCX, '500'],
    [CC, USDCX, '2500000.123'],
    [USDCX, CC, '10'],
    [USDCX, CC, '250'],
    [CC, CBTC, '5000'],
    [CBTC, CC, '0.001'],
    [CBTC, CC, '1'],
  ];
  for (const [give, want, amount] of requests) {
    const request = { give, want, amount: dec(amount) };
    const wired = plainQuote(await venue.quote(request, noDeadline()));
    t.strictSame(wired, plainQuote(await market.quote(request)), `${amount} ${give.symbol} -> ${want.symbol}`);
  }
  // And the figures themselves: 100 CC, a 0.79 CC network fee on top, valued at the quote's rate.
  const gross = cpOut('30000000', '4485000', '100');
  const hundred = await venue.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline());
  t.strictSame(plainQuote(hundred), { gross: s(gross), fee: { amount: '0.79', asset: 'CC', appliedTo: 'on_top' } });
  t.equal(toQuoteVenue('cantex', dec('100'), USDCX, CC, hundred).net, s(floor10(gross.times('99.21').div('100'))), 'net = gross x (100 - 0.79) / 100');
  t.strictSame(plainQuote(await venue.quote({ give: USDCX, want: CC, amount: dec('100') }, noDeadline())), { gross: s(cpOut('4485000', '30000000', '100')), fee: null });
});

t.test('adapter: "no_pool" for a pair without a pool, and for instruments under admins the venue does not know', async (t) => {
  t.equal(plainQuote(await adapter().quote({ give: USDCX, want: CBTC, amount: dec('100') }, noDeadline())), 'no_pool');
  t.equal(plainQuote(await market.quote({ give: USDCX, want: CBTC, amount: dec('100') })), 'no_pool', 'as in-process');
  const misconfigured = adapter({ ...ADMINS, USDCx: `usdc-elsewhere::1220${'e'.repeat(64)}` });
  t.equal(plainQuote(await misconfigured.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline())), 'no_pool');
});

t.test('adapter: "below_minimum" when the output floors to zero, as in-process', async (t) => {
  const request = { give: CC, want: CBTC, amount: dec('0.0000000001') };
  t.equal(plainQuote(await adapter().quote(request, noDeadline())), 'below_minimum');
  t.equal(plainQuote(await market.quote(request)), 'below_minimum');
});

t.test('adapter: a wrong key is HTTP 401, thrown (venue_error), and the probe reads the venue as not live', async (t) => {
  const venue = adapter(ADMINS, 'not-the-key');
  const err = await outcome(venue.quote({ give: CC, want: USDCX, amount: dec('100') }, noDeadline()));
  t.ok(err instanceof VenueHttpError && err.status === 401, 'HTTP 401');
  t.strictSame(await venue.probe(neverAborted()), { live: false, pairs: [] });
});

t.test('probe: "live, with the pairs of the pools the wire lists": CC/USDCx and CC/CBTC, read from the state', async (t) => {
  t.strictSame(await adapter().probe(neverAborted()), { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] });
  // One pool only: the probe reads it, not the adapter's assumed pairs.
  if (spec.pricing.kind !== 'amm') throw new Error('not an AMM');
  wire = cantexWire({ ...spec, pricing: { ...spec.pricing, pools: [pool(CBTC)] } }, ADMINS);
  t.strictSame(await adapter().probe(neverAborted()), { live: true, pairs: ['CC/CBTC'] });
  // Configured with other admins than the venue's: the venue reads as dead.
  const others = { Amulet: `DSO::1220${'9'.repeat(64)}`, USDCx: `u::1220${'9'.repeat(64)}`, CBTC: `c::1220${'9'.repeat(64)}` };
  t.strictSame(await adapter(others).probe(neverAborted()), { live: false, pairs: [] });
});

t.test('"quotes move when the pool\'s reserves are changed in the state object"', async (t) => {
  const venue = adapter();
  const request = { give: CC, want: USDCX, amount: dec('1000') };
  const before = plainQuote(await venue.quote(request, noDeadline()));
  const usdcx = pool(USDCX);
  usdcx.baseReserve = dec('31000000');
  usdcx.quoteReserve = dec('4400000');
  const after = plainQuote(await venue.quote(request, noDeadline()));
  t.notSame(after, before);
  t.strictSame(after, { gross: s(cpOut('31000000', '4400000', '1000')), fee: null });
  t.strictSame(after, plainQuote(await market.quote(request)), 'still the in-process venue');
  t.equal(json(get('/v2/pools/info')).pools.length, 2);
  t.equal(json(post(quoteRequest(CC, USDCX, '1'))).pool_size.amount, '4400000');
});
