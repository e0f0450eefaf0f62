// Tradecraft's wire (its public "Tradecraft AMM HTTP API", read by core/venues/tradecraft.ts),
// answered from the sandbox market's tradecraft pools. Served under the base's `/v1`, no auth:
//
// - GET /pools -> {pools: [{token1, token2, lp_token_name, token1_holdings, token2_holdings,
//   total_lp_tokens, lp_fee_percent, operator_fee_percent}]}, JSON numbers, fees in percent
//   (0.3 means 0.3 %). token1 is CC, as the sandbox's pools are CC-paired.
// - GET /quoteForFixedInput/{give}/{want}?givingAmount=<amount> -> {"user_gets": <number>}: the
//   constant-product output for the give amount less the pool fee, rounded down, the reading the
//   adapter's header comment decided on.
// - Errors: 400 {error}: `No AMM with id TC CC/NOPE LP` for a pair without a pool (the
//   third-party capture's wording, the path's tokens in the path's order); an amount that is not
//   a decimal. Anything else is 404 {error}.
//
// Choices:
// - The fee is the spec's own fee, asked of it per request, so the adapter discloses exactly the
//   in-process venue's fee; /pools states it as the fee on giving 100 token1, all of it as
//   lp_fee_percent (the sandbox has no operator share).
// - Zero and negative amounts are quoted `{"user_gets": 0}`, as a third-party capture shows the
//   venue does; so is an amount the fee consumes whole.
// - total_lp_tokens is sqrt(token1_holdings x token2_holdings), rounded down: the sandbox keeps
//   no LP supply, and that is what a first deposit of the current reserves would have minted.
import { Decimal, ZERO, dec, floor10 } from '../../core/decimal.js';
import { CBTC, CC, TOKENS, USDCX, type Token } from '../../core/tokens.js';
import { payoutAfterGiveFee, poolPayout } from '../pricing/constant-product.js';
import { giveSideFee } from '../pricing/give-fee.js';
import type { AmmPool, SandboxVenueSpec } from './sandbox-venue.js';
import { jsonNumber, jsonReply, type SandboxVenueDefinition, type WireHandler, type WireResponse } from './wire.js';

const QUOTE_PATH = /^\/quoteForFixedInput\/([^/]+)\/([^/]+)$/;
/** A plain decimal, bounded so that no request makes the handler build an enormous number. */
const AMOUNT = /^-?[0-9]{1,30}(\.[0-9]{1,30})?$/;
const HUNDRED = new Decimal(100);

/** The pool's reserves as [in, out] for a trade giving `give`. */
const reserves = (pool: AmmPool, give: Token): [Decimal, Decimal] => (give === CC ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve]);

/** The spec's fee for giving `amount` of `give` for `want` on `pool`, as the in-process venue charges it. */
function poolGiveFee(spec: SandboxVenueSpec, pool: AmmPool, give: Token, want: Token, amount: Decimal): Decimal {
  const gross = poolPayout(...reserves(pool, give), amount);
  const fee = spec.fee({ give, want, amount }, { gross, ccSize: give === CC ? amount : gross });
  if (!fee) return ZERO;
  if (fee.asset !== give || fee.appliedTo !== 'deducted_from_give') throw new Error(`${spec.id}: Tradecraft's wire states only a fee deducted from the give amount`);
  return fee.amount;
}

/**
 * What the pool pays for `amount` (> 0) of `give`: the curve's output for the amount less the
 * pool fee, rounded down. The quote's `user_gets`, and the sandbox ledger's payout on accepting a
 * deposit, so a deposit is paid exactly what a quote at the same reserves said.
 */
export function poolUserGets(spec: SandboxVenueSpec, pool: AmmPool, give: Token, want: Token, amount: Decimal): Decimal {
  return payoutAfterGiveFee(...reserves(pool, give), amount, poolGiveFee(spec, pool, give, want, amount));
}

export function tradecraftWire(spec: SandboxVenueSpec): WireHandler {
  const { pricing } = spec;
  // Tradecraft states one pool fee, taken from the give amount before the curve: a fee inside the
  // price has no place on its wire.
  if (pricing.kind !== 'amm' || pricing.inPriceFeeBps !== 0) throw new Error(`${spec.id}: Tradecraft's wire serves an AMM without an in-price fee`);
  // The pools' list and reserves are read on every request: the market moves them.
  const { pools } = pricing;

  function poolsAnswer(): WireResponse {
    const entries = pools.map((pool) => {
      const name = `TC ${CC.symbol}/${pool.quote.symbol} LP`;
      const feePercent = poolGiveFee(spec, pool, CC, pool.quote, HUNDRED);
      return (
        `{"token1":${JSON.stringify(CC.symbol)},"token2":${JSON.stringify(pool.quote.symbol)},"lp_token_name":${JSON.stringify(name)},` +
        `"token1_holdings":${jsonNumber(pool.baseReserve)},"token2_holdings":${jsonNumber(pool.quoteReserve)},` +
        `"total_lp_tokens":${jsonNumber(floor10(pool.baseReserve.times(pool.quoteReserve).sqrt()))},` +
        `"lp_fee_percent":${jsonNumber(feePercent)},"operator_fee_percent":0}`
      );
    });
    return { status: 200, body: `{"pools":[${entries.join(',')}]}` };
  }

  function quote(giveName: string, wantName: string, givingAmount: string | null): WireResponse {
    const give = TOKENS.find((t) => t.symbol === giveName);
    const want = TOKENS.find((t) => t.symbol === wantName);
    const other = give === CC ? want : want === CC ? give : undefined;
    const pool = other && pools.find((p) => p.quote === other);
    if (!give || !want || !pool) return jsonReply(400, { error: `No AMM with id TC ${giveName}/${wantName} LP` });
    if (givingAmount === null || !AMOUNT.test(givingAmount)) return jsonReply(400, { error: 'givingAmount must be a decimal number' });
    const amount = new Decimal(givingAmount);
    // Kept from the fee and the curve, whose arithmetic is for positive amounts.
    if (!amount.gt(0)) return { status: 200, body: '{"user_gets":0}' };
    const userGets = poolUserGets(spec, pool, give, want, amount);
    return { status: 200, body: `{"user_gets":${jsonNumber(userGets)}}` };
  }

  return (request) => {
    if (request.method === 'GET') {
      if (request.path === '/pools') return poolsAnswer();
      const match = QUOTE_PATH.exec(request.path);
      if (match) return quote(match[1]!, match[2]!, request.query.get('givingAmount'));
    }
    return jsonReply(404, { error: `no route ${request.method} ${request.path}` });
  };
}

/**
 * Tradecraft: constant-product AMM, 0.30 % fee deducted from the give amount. The v1 execution
 * venue (managed deposit: the minimum-receive floor rides in the deposit memo).
 */
export function createTradecraftSpec(): SandboxVenueSpec {
  return {
    id: 'tradecraft',
    pricing: {
      kind: 'amm',
      inPriceFeeBps: 0,
      pools: [
        { quote: USDCX, baseReserve: dec('20000000'), quoteReserve: dec('3000000') },
        { quote: CBTC, baseReserve: dec('8000000'), quoteReserve: dec('12') },
      ],
    },
    fee: giveSideFee(30),
  };
}

/** The sandbox's tradecraft: its market and its wire, under its prefix. */
export const tradecraftVenue: SandboxVenueDefinition = { id: 'tradecraft', prefix: '/tradecraft/v1', keyed: false, spec: createTradecraftSpec, wire: tradecraftWire };
