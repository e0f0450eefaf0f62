// The sandbox AMMs' pricing, its own, written from the venues' documentation (Tradecraft's "AMM
// HTTP API", the CaviarNine cantex_sdk, docs.oneswap.cc, Nightly's "Canton Swap API Docs"; the
// fees as docs/sandbox.md's market table gives them), not shared with the service's adapters, so
// that an adapter and the venue it quotes check each other.
//
// The documented formula is the constant-product invariant: a pool holding x of the token given
// and y of the token wanted keeps x · y = k across a trade, so taking in a leaves y' = k / (x + a)
// of the wanted token and pays out y − y'. Tradecraft's, Cantex's, OneSwap's and Nightly's pools
// are all such AMMs; they differ in where their fee sits:
// - inside the price (Cantex's `fee_percentage`, "inside `returned`"; OneSwap's "fees inside the
//   input"; Nightly's): the curve takes in a · (1 − f);
// - deducted from the give amount before the curve (Tradecraft: `user_gets` for the amount less
//   the pool fee): the curve takes in a − fee.
//
// Rounding, where no venue says: the payout is rounded down to the ledger's 10 fractional digits
// (a Daml Decimal), so a pool never pays out more than its invariant allows. The input after an
// in-price fee is kept exact: it is a figure of the curve, not an amount any holding moves.
import { BPS, divFloor10, ZERO, type Decimal } from '../../core/decimal.js';

/** What the pool pays for `amountIn` (>= 0) by the invariant alone: y − x · y / (x + a), rounded down. */
export function poolPayout(reserveIn: Decimal, reserveOut: Decimal, amountIn: Decimal): Decimal {
  const invariant = reserveIn.times(reserveOut);
  const inAfter = reserveIn.plus(amountIn);
  // y − k / (x + a) over one denominator, so one exact floor division rounds it.
  return divFloor10(reserveOut.times(inAfter).minus(invariant), inAfter);
}

/** The payout for `amount` given to a pool whose fee of `feeBps` sits inside its price. */
export function payoutFeeInside(reserveIn: Decimal, reserveOut: Decimal, amount: Decimal, feeBps: number): Decimal {
  return poolPayout(reserveIn, reserveOut, feeBps === 0 ? amount : amount.times(BPS.times(10_000 - feeBps)));
}

/** The payout for `amount` given to a pool that first deducts `fee` of the give token from it; 0 when the fee takes it all. */
export function payoutAfterGiveFee(reserveIn: Decimal, reserveOut: Decimal, amount: Decimal, fee: Decimal): Decimal {
  const rest = amount.minus(fee);
  return rest.gt(0) ? poolPayout(reserveIn, reserveOut, rest) : ZERO;
}
