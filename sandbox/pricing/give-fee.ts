// A fee proportional to the amount given, taken out of it: Tradecraft's pool fee (its `/pools`
// states `lp_fee_percent` + `operator_fee_percent` of the give amount, "usually 0.30 %") and
// Temple's taker fee (reported as 1 bp). Written here for the sandbox, not shared with the
// service's adapters, so the two check each other.
//
// Rounding, where neither venue says: up, to the ledger's 10 fractional digits, so the venue never
// collects less than its rate.
import { ceil10, type Decimal } from '../../core/decimal.js';
import type { SandboxFeeQuote, SandboxQuoteRequest } from './quote-shapes.js';

const BPS_PER_WHOLE = 10_000;

/** `bps` basis points of `amount`, rounded up. */
export function giveFee(amount: Decimal, bps: number): Decimal {
  return ceil10(amount.times(bps).div(BPS_PER_WHOLE));
}

/** A venue spec's fee: `bps` of the give amount, deducted from it. */
export function giveSideFee(bps: number): (request: SandboxQuoteRequest) => SandboxFeeQuote {
  return ({ give, amount }) => ({ amount: giveFee(amount, bps), asset: give, appliedTo: 'deducted_from_give' });
}
