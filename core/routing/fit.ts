// A constant-product curve fitted from what a quote already knows of a venue at the quoted
// amount, so that a split needs no venue call of its own: the quote's gross, its fee, and its
// priceImpact (openapi/v2.yaml QuoteVenue.priceImpact: 1 - (gross / amount) / spot).
//
// On a constant-product pool, a' reaching the curve (the amount less a fee taken before it) and
// U = Y a' / (X + a') its output, the impact is 1 - X / (X + a') = a' / (X + a') whatever the fee
// inside the price: that fee only scales X (a pool taking in a'(1 - f) prices as one holding
// X / (1 - f) without it). So Y = U / impact and X = a' (1 - impact) / impact, with the pool's
// own fee inside X: the fitted curve has no pool fee, and pays exactly U at a'. The sandbox's
// tradecraft, oneswap, nightly and cantex are such pools (core/venues/*.ts say how each adapter
// reads its impact); temple is a book, which a quote does not describe.
//
// Rounded toward the user's safety: the stated impact is rounded to 10 digits one way or the
// other (up by the service, down by some venues), so the fit takes the least impact it can come
// from, impact - 1e-10, which pays less for any amount below the quoted one (every leg of a
// split is); Y is rounded down and X up. test/core/routing/curve-fit.test.ts measures the fitted
// curves against the sandbox's own quotes.
import type { Decimal } from '../decimal.js';
import type { ConstantProductSpec, CurveFee } from './curves.js';
import { ceilDiv, fromUnits, toUnits, UNIT } from './units.js';

/** What a quote states of one available venue at the quoted amount. */
export interface QuotedVenue {
  readonly venueId: string;
  readonly amount: Decimal;
  readonly gross: Decimal;
  readonly priceImpact: Decimal;
  readonly fee: { readonly amount: Decimal; readonly token: 'give' | 'want'; readonly appliedTo: 'on_top' | 'deducted_from_give' } | null;
}

/** What the quote cannot say of the venue: how its fee grows, its limits, fees it did not state. */
export interface VenueShape {
  /**
   * How the stated fee grows with the amount: 'flat' (a traffic or network fee: OneSwap's, Cantex's)
   * or 'proportional' (a pool fee: Tradecraft's). Default flat. A want-token fee is taken as flat,
   * which overstates it for any smaller amount.
   */
  readonly feeScales?: 'flat' | 'proportional';
  /**
   * A give-token fee's place (CurveFee.placement): by default 'before-curve' when the quote says
   * `deducted_from_give` (Tradecraft's and OneSwap's adapters), 'on-top' when `on_top` (Cantex's).
   */
  readonly feePlacement?: 'before-curve' | 'on-top';
  /** Where the stated fee is waived from, if it is (CurveFee.waivedFrom). */
  readonly feeWaivedFrom?: Decimal;
  /** Fees the venue charges on part of its curve that this quote did not state (Cantex's network fee below 500 CC, quoted from above). */
  readonly unstatedFees?: readonly CurveFee[];
  readonly min?: Decimal;
  readonly max?: Decimal;
}

/** One least unit of the impact: the stated figure is rounded to 10 digits, either way. */
const IMPACT_SLACK = 1n;

/**
 * The constant-product curve through the venue's quote, or null when the quote cannot place one:
 * an impact of 0 (a trade too small to show the curve) or of 1 and more, or a fee of the whole amount.
 */
export function fitConstantProduct(quoted: QuotedVenue, shape: VenueShape = {}): ConstantProductSpec | null {
  const a = toUnits(quoted.amount);
  const gross = toUnits(quoted.gross);
  const stated = toUnits(quoted.priceImpact, true);
  const impact = stated - IMPACT_SLACK;
  if (a <= 0n || gross <= 0n || impact <= 0n || stated >= UNIT) return null;
  const { fee } = quoted;
  const placement = fee && fee.token === 'give' ? (shape.feePlacement ?? (fee.appliedTo === 'deducted_from_give' ? 'before-curve' : 'on-top')) : null;
  const before = fee && placement === 'before-curve' ? toUnits(fee.amount, true) : 0n;
  const reaching = a - before;
  if (reaching <= 0n) return null;
  // The curve's output U: gross itself, or, where a fee came off before the curve, the least U whose
  // stated gross floor(U a / a') is this one: gross a' / a.
  // Y = U / impact, rounded down; X = a' (1 - impact) / impact, rounded up (both in units).
  const reserveOut = (gross * reaching * UNIT) / (a * impact);
  const reserveIn = ceilDiv(reaching * (UNIT - impact), impact);
  const fees: CurveFee[] = [];
  if (fee) {
    const waived = shape.feeWaivedFrom ? { waivedFrom: shape.feeWaivedFrom } : {};
    if (fee.token === 'want') fees.push({ token: 'want', flat: fee.amount, ...waived });
    else if (shape.feeScales === 'proportional') {
      // The rate it was charged at, rounded up (to 20 digits): never less than the venue's.
      const rate = fromUnits(ceilDiv(toUnits(fee.amount, true) * 10n ** 20n, a)).times('1e-10');
      fees.push({ token: 'give', rate, placement: placement!, ...waived });
    } else fees.push({ token: 'give', flat: fee.amount, placement: placement!, ...waived });
  }
  return {
    kind: 'constant-product',
    venueId: quoted.venueId,
    reserveIn: fromUnits(reserveIn),
    reserveOut: fromUnits(reserveOut),
    fees: [...fees, ...(shape.unstatedFees ?? [])],
    ...(shape.min ? { min: shape.min } : {}),
    ...(shape.max ? { max: shape.max } : {}),
  };
}
