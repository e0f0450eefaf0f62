// The sandbox's Tradecraft wire (sandbox/venues/tradecraft.ts): its answers recomputed from the
// pool reserves with an independent decimal.js instance, and the real adapter
// (core/venues/tradecraft.ts) quoting through it as it quotes the real venue.
import t from 'tap';
import { dec } from '../../../core/decimal.js';
import { createSandboxVenues } from '../../../sandbox/venues/market.js';
import type { AmmPool, SandboxVenue, SandboxVenueSpec } from '../../../sandbox/venues/sandbox-venue.js';
import { tradecraftWire } from '../../../sandbox/venues/tradecraft.js';
import type { WireHandler, WireResponse } from '../../../sandbox/venues/wire.js';
import { CBTC, CC, USDCX, type Token } from '../../../core/tokens.js';
import { TRADECRAFT_BASE_URL, TradecraftVenue } from '../../../core/venues/tradecraft.js';
import { parseJsonKeepingNumbers } from '../../../core/json-numbers.js';
import { ceil10, floor10, s, x, X } from '../../helpers/exact.js';
import { wireFetch } from '../../helpers/wire-fetch.js';
import { neverAborted, noDeadline, plainQuote } from '../../helpers/venue-fetch.js';


/** The sandbox market's tradecraft venue, fresh: its pools are mutable state. */
function sandboxTradecraft(): SandboxVenue {
  const venue = createSandboxVenues().find((v) => v.id === 'tradecraft');
  if (!venue) throw new Error('no sandbox tradecraft');
  return venue;
}

function poolOf(spec: SandboxVenueSpec, quote: Token): AmmPool {
  const pool = spec.pricing.kind === 'amm' ? spec.pricing.pools.find((p) => p.quote === quote) : undefined;
  if (!pool) throw new Error(`no ${quote.symbol} pool`);
  return pool;
}

const get = (handler: WireHandler, path: string, query = '', method = 'GET'): WireResponse =>
  handler({ method, path, query: new URLSearchParams(query), headers: {}, body: '' });

/** Tradecraft's fee, 0.30 % of the give amount rounded up, and the curve's output for the rest, rounded down. */
function expected(pool: AmmPool, give: Token, amount: string): { fee: X; userGets: X } {
  const [rIn, rOut] = give === CC ? [x(pool.baseReserve), x(pool.quoteReserve)] : [x(pool.quoteReserve), x(pool.baseReserve)];
  const fee = ceil10(x(amount).times('0.003'));
  const rest = x(amount).minus(fee);
  return { fee, userGets: floor10(rOut.times(rest).div(rIn.plus(rest))) };
}

const userGetsOf = (answer: WireResponse): string => (parseJsonKeepingNumbers(answer.body) as { user_gets: string }).user_gets;

const adapterOver = (handler: WireHandler) => new TradecraftVenue({ baseUrl: TRADECRAFT_BASE_URL, timeoutMs: 1000, fetch: wireFetch(handler, TRADECRAFT_BASE_URL) });

// ---------------------------------------------------------------------------------------------
t.test('GET /pools: "{pools: [{token1, token2, lp_token_name, token1_holdings, token2_holdings, total_lp_tokens, lp_fee_percent, operator_fee_percent}]}", JSON numbers, holdings the live reserves, fees in percent', async (t) => {
  const { spec } = sandboxTradecraft();
  const answer = get(tradecraftWire(spec), '/pools');
  t.equal(answer.status, 200);
  const typed = JSON.parse(answer.body) as { pools: Array<Record<string, unknown>> };
  const exact = parseJsonKeepingNumbers(answer.body) as { pools: Array<Record<string, string>> };
  t.equal(exact.pools.length, 2);
  for (const [i, quote] of [USDCX, CBTC].entries()) {
    const pool = poolOf(spec, quote);
    const entry = exact.pools[i]!;
    t.strictSame(Object.keys(entry), ['token1', 'token2', 'lp_token_name', 'token1_holdings', 'token2_holdings', 'total_lp_tokens', 'lp_fee_percent', 'operator_fee_percent']);
    t.match(entry, { token1: 'CC', token2: quote.symbol, lp_token_name: `TC CC/${quote.symbol} LP` });
    t.equal(entry.token1_holdings, pool.baseReserve.toFixed());
    t.equal(entry.token2_holdings, pool.quoteReserve.toFixed());
    t.equal(entry.total_lp_tokens, s(floor10(x(pool.baseReserve).times(x(pool.quoteReserve)).sqrt())));
    t.equal(s(x(entry.lp_fee_percent!).plus(x(entry.operator_fee_percent!))), '0.3', 'lp + operator = 0.30 %');
    for (const field of ['token1_holdings', 'token2_holdings', 'total_lp_tokens', 'lp_fee_percent', 'operator_fee_percent']) {
      t.type(typed.pools[i]![field], 'number', `${field} is a JSON number`);
    }
  }
  t.match(answer.body, /"token1_holdings":20000000,"token2_holdings":3000000,/, 'written as plain number text');
});

t.test('GET /quoteForFixedInput/{tokenA}/{tokenB}?givingAmount= -> {"user_gets": <number>}: the constant-product output for givingAmount less the 0.30 % fee, rounded down', async (t) => {
  const { spec } = sandboxTradecraft();
  const handler = tradecraftWire(spec);
  const cases: Array<[Token, Token, string]> = [
    [CC, USDCX, '100'],
    [USDCX, CC, '250'],
    [CC, CBTC, '5000'],
    [CBTC, CC, '0.0123456789'],
    [CC, USDCX, '1234567.891'],
  ];
  for (const [give, want, amount] of cases) {
    const answer = get(handler, `/quoteForFixedInput/${give.symbol}/${want.symbol}`, `givingAmount=${amount}`);
    t.equal(answer.status, 200);
    t.match(answer.body, /^\{"user_gets":[0-9]+(\.[0-9]{1,10})?\}$/, 'a JSON number, at most 10 fractional digits');
    const pool = poolOf(spec, give === CC ? want : give);
    t.equal(userGetsOf(answer), s(expected(pool, give, amount).userGets), `${amount} ${give.symbol} -> ${want.symbol}`);
  }
});

t.test('quote: zero and negative amounts are quoted {"user_gets": 0}, as the venue does; so is an amount the fee consumes whole', async (t) => {
  const handler = tradecraftWire(sandboxTradecraft().spec);
  for (const amount of ['0', '-5', '0.0000000001']) {
    t.strictSame(get(handler, '/quoteForFixedInput/CC/USDCx', `givingAmount=${amount}`), { status: 200, body: '{"user_gets":0}' }, amount);
  }
});

t.test('errors: "400 {error}", "No AMM with id TC CC/NOPE LP" for a pair without a pool; 400 for an amount that is not a number', async (t) => {
  const handler = tradecraftWire(sandboxTradecraft().spec);
  t.strictSame(get(handler, '/quoteForFixedInput/CC/NOPE', 'givingAmount=1'), { status: 400, body: '{"error":"No AMM with id TC CC/NOPE LP"}' });
  t.strictSame(get(handler, '/quoteForFixedInput/USDCx/CBTC', 'givingAmount=1'), { status: 400, body: '{"error":"No AMM with id TC USDCx/CBTC LP"}' });
  t.strictSame(get(handler, '/quoteForFixedInput/CC/CC', 'givingAmount=1'), { status: 400, body: '{"error":"No AMM with id TC CC/CC LP"}' });
  for (const query of ['', 'givingAmount=', 'givingAmount=lots', 'givingAmount=1e9000000', 'givingAmount=0x10', `givingAmount=1${'0'.repeat(40)}`]) {
    const answer = get(handler, '/quoteForFixedInput/CC/USDCx', query);
    t.equal(answer.status, 400, JSON.stringify(query));
    t.match(JSON.parse(answer.body), { error: /givingAmount/ });
  }
});

t.test('an unknown path, or a method the venue does not serve, answers 404 with a JSON error body', async (t) => {
  const handler = tradecraftWire(sandboxTradecraft().spec);
  for (const [path, method] of [['/nope', 'GET'], ['/pools/extra', 'GET'], ['/quoteForFixedInput/CC', 'GET'], ['/pools', 'POST'], ['/v1/pools', 'GET']] as const) {
    const answer = get(handler, path, 'givingAmount=1', method);
    t.equal(answer.status, 404, `${method} ${path}`);
    t.type((JSON.parse(answer.body) as { error: unknown }).error, 'string');
  }
});

t.test('the handler "never mutates the state": reserves are unchanged after answering', async (t) => {
  const { spec } = sandboxTradecraft();
  const snapshot = () => [USDCX, CBTC].map((q) => [poolOf(spec, q).baseReserve.toFixed(), poolOf(spec, q).quoteReserve.toFixed()]);
  const before = snapshot();
  const handler = tradecraftWire(spec);
  get(handler, '/pools');
  get(handler, '/quoteForFixedInput/CC/USDCx', 'givingAmount=1000000');
  get(handler, '/quoteForFixedInput/CBTC/CC', 'givingAmount=5');
  t.strictSame(snapshot(), before);
});

t.test('a spec Tradecraft\'s wire cannot state (an order book, a fee inside the price) is refused when the handler is made', async (t) => {
  const [, cantex, , temple] = createSandboxVenues();
  t.throws(() => tradecraftWire(cantex!.spec), /in-price fee/);
  t.throws(() => tradecraftWire(temple!.spec), /in-price fee/);
});

// ---------------------------------------------------------------------------------------------
// The real adapter over the wire.

t.test('adapter: an available quote whose fee is 0.30 % of the give amount deducted from it, and whose net recomputes from the pool state (never more than user_gets)', async (t) => {
  const { spec } = sandboxTradecraft();
  const adapter = adapterOver(tradecraftWire(spec));
  for (const [give, want, amount] of [[CC, USDCX, '100'], [USDCX, CC, '250'], [CC, CBTC, '5000'], [CBTC, CC, '0.5']] as Array<[Token, Token, string]>) {
    const quote = await adapter.quote({ give, want, amount: dec(amount) }, noDeadline());
    const { fee, userGets } = expected(poolOf(spec, give === CC ? want : give), give, amount);
    // The adapter's documented mapping: gross = floor(user_gets × amount / (amount - fee)).
    const gross = floor10(userGets.times(amount).div(x(amount).minus(fee)));
    t.strictSame(plainQuote(quote), { gross: s(gross), fee: { amount: s(fee), asset: give.symbol, appliedTo: 'deducted_from_give' } }, `${amount} ${give.symbol} -> ${want.symbol}`);
    const net = floor10(gross.times(x(amount).minus(fee)).div(amount));
    t.ok(net.lte(userGets) && userGets.minus(net).lte('0.0000001'), 'net = floor(gross × (amount - fee) / amount) is user_gets, to rounding, never more');
  }
});

t.test('adapter: "economically the same venue" as the in-process sandbox tradecraft: the same fee, gross higher by the fee\'s price impact only', async (t) => {
  const inProcess = sandboxTradecraft();
  const adapter = adapterOver(tradecraftWire(sandboxTradecraft().spec));
  for (const [give, want, amount] of [[CC, USDCX, '100'], [USDCX, CC, '250'], [CC, CBTC, '5000'], [CC, USDCX, '1000000']] as Array<[Token, Token, string]>) {
    const request = { give, want, amount: dec(amount) };
    const [wire, local] = [await adapter.quote(request, noDeadline()), await inProcess.quote(request)];
    t.ok(wire.available && local.available, `${amount} ${give.symbol} -> ${want.symbol} available`);
    if (!wire.available || !local.available) continue;
    t.strictSame(wire.fee && { ...wire.fee, amount: wire.fee.amount.toFixed() }, local.fee && { ...local.fee, amount: local.fee.amount.toFixed() }, 'the same fee');
    // The wire takes the fee before the curve, so the fee pays no price impact: its gross is the
    // in-process gross × (reserveIn + amount) / (reserveIn + amount - fee), to rounding.
    const pool = poolOf(inProcess.spec, give === CC ? want : give);
    const reserveIn = x(give === CC ? pool.baseReserve : pool.quoteReserve).plus(amount);
    const impactFree = x(local.gross).times(reserveIn).div(reserveIn.minus(x(local.fee!.amount)));
    t.ok(x(wire.gross).gt(x(local.gross)), 'the wire gross is higher than the in-process gross');
    t.ok(x(wire.gross).minus(impactFree).abs().lte('0.0000000005'), `and by exactly the fee's price impact: ${wire.gross.toFixed()} vs ${s(impactFree)}`);
  }
});

t.test('adapter: each rejection the sandbox can produce: no_pool for a pair /pools does not list, and for a pool gone since (the wire\'s "No AMM" 400); below_minimum for an amount the fee consumes', async (t) => {
  const spec = sandboxTradecraft().spec;
  const pools = spec.pricing.kind === 'amm' ? [...spec.pricing.pools] : [];
  const mutable: SandboxVenueSpec = { ...spec, pricing: { kind: 'amm', inPriceFeeBps: 0, pools } };
  const adapter = adapterOver(tradecraftWire(mutable));
  t.equal(await adapter.quote({ give: USDCX, want: CBTC, amount: dec('1') }, noDeadline()).then(plainQuote), 'no_pool');
  t.equal(await adapter.quote({ give: CC, want: USDCX, amount: dec('0.0000000001') }, noDeadline()).then(plainQuote), 'below_minimum');
  t.equal(await sandboxTradecraft().quote({ give: CC, want: USDCX, amount: dec('0.0000000001') }).then(plainQuote), 'below_minimum', 'as the in-process venue');
  // The adapter has read /pools with the CBTC pool listed; the pool then goes.
  t.equal(await adapter.quote({ give: CC, want: CBTC, amount: dec('1000') }, noDeadline()).then((q) => q.available), true);
  pools.splice(pools.findIndex((p) => p.quote === CBTC), 1);
  t.equal(await adapter.quote({ give: CC, want: CBTC, amount: dec('1000') }, noDeadline()).then(plainQuote), 'no_pool');
});

t.test('adapter: the probe reads /pools live, with the pairs the in-process venue has', async (t) => {
  const inProcess = sandboxTradecraft();
  const probe = await adapterOver(tradecraftWire(sandboxTradecraft().spec)).probe(neverAborted());
  t.strictSame(probe, { live: true, pairs: ['CC/USDCx', 'CC/CBTC'] });
  t.strictSame(probe, await inProcess.probe());
});

t.test('adapter: quotes move when the pool\'s reserves change in the state object', async (t) => {
  const { spec } = sandboxTradecraft();
  const adapter = adapterOver(tradecraftWire(spec));
  const request = { give: CC, want: USDCX, amount: dec('10000') };
  const before = plainQuote(await adapter.quote(request, noDeadline()));
  const pool = poolOf(spec, USDCX);
  pool.baseReserve = dec('25000000');
  pool.quoteReserve = dec('2500000');
  const after = plainQuote(await adapter.quote(request, noDeadline()));
  t.notSame(after, before);
  const { fee, userGets } = expected(pool, CC, '10000');
  t.match(after, { gross: s(floor10(userGets.times('10000').div(x('10000').minus(fee)))) }, 'recomputed from the new reserves');
  const pools = parseJsonKeepingNumbers(get(tradecraftWire(spec), '/pools').body) as { pools: Array<Record<string, string>> };
  t.match(pools.pools[0], { token1_holdings: '25000000', token2_holdings: '2500000' }, '/pools shows them too');
});
