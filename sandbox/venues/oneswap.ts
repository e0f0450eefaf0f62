// OneSwap's wire (adapter: core/venues/oneswap.ts), answered from the sandbox oneswap's
// constant-product pools: the documented quote, which the adapter's probe also calls (OneSwap
// documents no health or pools endpoint), and beside it the wallet auth and swap intents
// (oneswap-intents.ts; intents are created and settled by this quote's arithmetic,
// oneswap-swap.ts):
//
// - GET /api/v1/quote?from=<instrument>&to=<instrument>&amount=<amount>, header `X-API-Key` ->
//   {inputToken, inputTokenAdmin, outputToken, outputTokenAdmin, inputAmount, outputAmount, rate,
//   priceImpact (decimal strings), fee (a JSON number: the pool fee inside the price, 0.003),
//   poolId, expiresIn (seconds), estimatedTrafficCost {cc, usd}, trafficFeeInInput,
//   inputAmountAfterTrafficFee}. CC is `Amulet`, as on the real venue.
//
// The traffic fee is the spec's fee (0.5 CC or 0.075 USDCx), taken out of the input as OneSwap
// documents: `outputAmount` is the pool's constant-product output for the input net of that fee,
// after the pool fee. So the adapter's net is the curve's output at the net input, where the
// in-process venue scales the full amount's output down by the same share: the wire's net is a
// hair higher (the curve is concave), the same pool and fees otherwise.
//
// Decided here, where the docs are silent:
// - The `*TokenAdmin` fields, which the adapter ignores, are the sandbox's instrument admins, the
//   same parties Cantex's sandbox wire serves (SANDBOX_INSTRUMENT_ADMINS).
// - `rate` is outputAmount / inputAmountAfterTrafficFee (what the pool pays per unit it takes, as
//   the adapter's fixtures have it), rounded down; `priceImpact` is the fraction the trade moves
//   the pool's price before its fee, in / (reserveIn + in) of the input after both fees, rounded
//   up. Neither is read by the adapter.
// - `estimatedTrafficCost` is the traffic fee in CC (at the traded pool's spot price) and USD (at
//   the CC/USDCx pool's, USDCx as USD; so the spec must have that pool), rounded up; `bytes` is
//   left out: the sandbox moves no ledger traffic to measure.
// - An amount no larger than the traffic fee is quoted, not refused: nothing reaches the pool,
//   `inputAmountAfterTrafficFee` and `outputAmount` are 0, and the adapter reads below_minimum,
//   as the in-process venue answers.
// - The 15 % price-impact cap (a documented 400) is not enforced: the in-process venue has no
//   such cap, and this must be the same venue. Nor is `maxPriceImpact` sent, which would claim it.
// - The sandbox has one pool per pair, so the documented 409 {code: 'ambiguous_pool_pair',
//   candidates} is never sent.
// - Errors are {"error": "<message>"}, as the adapter's fixtures have them: 401 for a missing or
//   wrong key (checked first, as a gateway does), 404 for a path other than GET /api/v1/quote,
//   400 for missing parameters, an amount that is not a positive decimal of at most 10 fractional
//   digits, or from = to; 404 "Pool not found for <from>/<to>" for a pair without a pool, an
//   unknown instrument included (the adapter's no_pool reads the word "pool"; the other 404 must
//   not say it, nor echo a path that might, so a wrong base URL reads as a broken venue).
import { BPS, ceil10, dec, divFloor10, ZERO, type Decimal } from '../../core/decimal.js';
import { CC, USDCX, type Token } from '../../core/tokens.js';
import type { SandboxFeeQuote, SandboxQuoteRequest } from '../pricing/quote-shapes.js';
import type { AmmPool, SandboxVenueSpec } from './sandbox-venue.js';
import { oneswapIntentsWire } from './oneswap-intents.js';
import { oneswapPoolId, oneswapSwap } from './oneswap-swap.js';
import { jsonNumber, jsonReply, SANDBOX_INSTRUMENT_ADMINS, SANDBOX_VENUE_KEY, type SandboxVenueDefinition, type WireHandler, type WireResponse } from './wire.js';

const QUOTE_PATH = '/api/v1/quote';
// At most 20 integer digits: past ~40, arithmetic at 50 significant digits would round the answer.
const AMOUNT = /^(0|[1-9][0-9]{0,19})(\.[0-9]{1,10})?$/;
/** How long a quote is good for; the adapter does not read it. */
const EXPIRES_IN_SECONDS = 30;

const error = (status: number, message: string): WireResponse => jsonReply(status, { error: message });

/** A JSON object's text from its fields' JSON texts, so numbers are written as decimal text. */
const object = (fields: ReadonlyArray<readonly [string, string]>): string => `{${fields.map(([k, v]) => `${JSON.stringify(k)}:${v}`).join(',')}}`;
const str = (x: Decimal | string): string => JSON.stringify(typeof x === 'string' ? x : jsonNumber(x));

export function oneswapWire(spec: SandboxVenueSpec): WireHandler {
  const { pricing } = spec;
  if (pricing.kind !== 'amm') throw new Error(`oneswapWire needs an AMM venue; ${spec.id} is ${pricing.kind}`);
  // OneSwap documents no minimum order; a spec with one would be another venue.
  if (spec.minCc) throw new Error(`oneswapWire serves no minimum order; ${spec.id} has one`);
  const usdcxPool = pricing.pools.find((p) => p.quote === USDCX);
  if (!usdcxPool) throw new Error(`oneswapWire values the traffic fee in USD at a CC/USDCx pool; ${spec.id} has none`);
  const { inPriceFeeBps } = pricing;
  const poolFee = BPS.times(inPriceFeeBps);

  /** The traffic fee in CC (at the traded pool's spot price) and in USD (at the CC/USDCx pool's, USDCx as USD). */
  const trafficCost = (trafficFee: Decimal, give: Token, pool: AmmPool): string => {
    const cc = give === CC ? trafficFee : ceil10(trafficFee.times(pool.baseReserve).div(pool.quoteReserve));
    const usd = give === USDCX ? trafficFee : ceil10(cc.times(usdcxPool.quoteReserve).div(usdcxPool.baseReserve));
    return object([['cc', str(cc)], ['usd', str(usd)]]);
  };

  /** The quote for a pair with a pool, from the pool's reserves as they are now. */
  function quote(pool: AmmPool, sellingCc: boolean, amount: Decimal): string {
    const { give, want, trafficFee, afterTrafficFee, poolIn, output, priceImpact } = oneswapSwap(spec, pool, sellingCc ? CC : pool.quote, amount);
    return object([
      ['inputToken', str(give.instrument)],
      ['inputTokenAdmin', str(SANDBOX_INSTRUMENT_ADMINS[give.instrument])],
      ['outputToken', str(want.instrument)],
      ['outputTokenAdmin', str(SANDBOX_INSTRUMENT_ADMINS[want.instrument])],
      ['inputAmount', str(amount)],
      ['outputAmount', str(output)],
      ['rate', str(afterTrafficFee.isZero() ? ZERO : divFloor10(output, afterTrafficFee))],
      ['priceImpact', str(poolIn.isZero() ? ZERO : priceImpact)],
      ['fee', jsonNumber(poolFee)],
      ['poolId', str(oneswapPoolId(pool))],
      ['expiresIn', String(EXPIRES_IN_SECONDS)],
      ['estimatedTrafficCost', trafficCost(trafficFee, give, pool)],
      ['trafficFeeInInput', str(trafficFee)],
      ['inputAmountAfterTrafficFee', str(afterTrafficFee)],
    ]);
  }

  const intents = oneswapIntentsWire(spec);
  return (request) => {
    if (request.headers['x-api-key'] !== SANDBOX_VENUE_KEY) return error(401, 'Invalid or missing API key');
    if (request.path !== QUOTE_PATH) return intents(request) ?? error(404, 'Not found');
    if (request.method !== 'GET') return error(404, 'Not found');
    const from = request.query.get('from');
    const to = request.query.get('to');
    const amountText = request.query.get('amount');
    if (!from || !to || !amountText) return error(400, 'from, to and amount are required');
    if (!AMOUNT.test(amountText) || dec(amountText).isZero()) return error(400, 'amount must be a positive decimal with at most 10 fractional digits');
    if (from === to) return error(400, 'from and to must be different tokens');
    // Read on every request: the pools are the market's live state, which others change.
    const sellingCc = from === CC.instrument;
    const other = sellingCc ? to : to === CC.instrument ? from : null;
    const pool = pricing.pools.find((p) => p.quote.instrument === other);
    if (!pool) return error(404, `Pool not found for ${from}/${to}`);
    return { status: 200, body: quote(pool, sellingCc, dec(amountText)) };
  };
}

const ONESWAP_TRAFFIC_FEE = { CC: dec('0.5'), USDCx: dec('0.075') };

/** OneSwap-style traffic fee: a flat amount of the give token taken out of the give amount. */
function oneswapTrafficFee({ give }: SandboxQuoteRequest): SandboxFeeQuote {
  return { amount: give === CC ? ONESWAP_TRAFFIC_FEE.CC : ONESWAP_TRAFFIC_FEE.USDCx, asset: give, appliedTo: 'deducted_from_give' };
}

/**
 * OneSwap: constant-product AMM, 0.30 % inside the price plus a traffic fee deducted from the
 * give amount. No CBTC pool: CC/CBTC quotes come back `no_pool`.
 */
export function createOneSwapSpec(): SandboxVenueSpec {
  return {
    id: 'oneswap',
    pricing: {
      kind: 'amm',
      inPriceFeeBps: 30,
      pools: [{ quote: USDCX, baseReserve: dec('12000000'), quoteReserve: dec('1806000') }],
    },
    fee: oneswapTrafficFee,
  };
}

/** The sandbox's oneswap: its market and its wire, under its prefix. */
export const oneswapVenue: SandboxVenueDefinition = { id: 'oneswap', prefix: '/oneswap', keyed: true, spec: createOneSwapSpec, wire: oneswapWire };
