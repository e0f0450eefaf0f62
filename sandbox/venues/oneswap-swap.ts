// The sandbox OneSwap's arithmetic for a swap, shared by its quote (oneswap.ts), its intents'
// creation (oneswap-intents.ts) and the ledger's OneSwap desk, so all three price alike.
import { BPS, ceil10, ZERO, type Decimal } from '../../core/decimal.js';
import { CC, type Token } from '../../core/tokens.js';
import { payoutFeeInside, poolPayout } from '../pricing/constant-product.js';
import type { AmmPool, SandboxVenueSpec } from './sandbox-venue.js';

/** The pool's id on the wire. */
export const oneswapPoolId = (pool: AmmPool): string => `oneswap-${CC.instrument}-${pool.quote.instrument}`.toLowerCase();

/** What giving `amount` of `give` on `pool` does now: the traffic fee taken out, what reaches the pool, its output and price impact. */
export interface OneSwapSwap {
  readonly give: Token;
  readonly want: Token;
  readonly trafficFee: Decimal;
  readonly afterTrafficFee: Decimal;
  /** What the curve prices: the input after both fees. */
  readonly poolIn: Decimal;
  readonly output: Decimal;
  /** The fraction the trade moves the pool's price before its fee, rounded up. */
  readonly priceImpact: Decimal;
  readonly reserveOut: Decimal;
}

/** The quote's arithmetic, which the intents' creation and the ledger's OneSwap desk run too. */
export function oneswapSwap(spec: SandboxVenueSpec, pool: AmmPool, give: Token, amount: Decimal): OneSwapSwap {
  const inPriceFeeBps = spec.pricing.kind === 'amm' ? spec.pricing.inPriceFeeBps : 0;
  const sellingCc = give === CC;
  const want = sellingCc ? pool.quote : CC;
  const [reserveIn, reserveOut] = sellingCc ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve];
  // The spec's fee function is given the trade it is documented to see (the full amount's
  // output), though OneSwap's flat fee does not depend on it.
  const fullOutput = payoutFeeInside(reserveIn, reserveOut, amount, inPriceFeeBps);
  const fee = spec.fee({ give, want, amount }, { gross: fullOutput, ccSize: sellingCc ? amount : fullOutput });
  if (fee && (fee.asset !== give || fee.appliedTo !== 'deducted_from_give')) throw new Error(`OneSwap takes its traffic fee out of the input; ${spec.id}'s is not`);
  const trafficFee = fee ? ceil10(fee.amount) : ZERO;
  const afterTrafficFee = amount.gt(trafficFee) ? amount.minus(trafficFee) : ZERO;
  const poolIn = afterTrafficFee.times(BPS.times(10_000 - inPriceFeeBps));
  const output = poolPayout(reserveIn, reserveOut, poolIn);
  const priceImpact = poolIn.isZero() ? ZERO : ceil10(poolIn.div(reserveIn.plus(poolIn)));
  return { give, want, trafficFee, afterTrafficFee, poolIn, output, priceImpact, reserveOut };
}
