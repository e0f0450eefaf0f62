// How venues price, shared by the adapters that turn a venue's answer into a quote: walking an
// order book, a fee taken from the give amount, a quote from an output after such a fee, and a
// trade's price impact (computed from the venue's spot, or as the venue states it). Every
// result is rounded toward the user's safety (outputs down, fees and impacts up) to 10 fractional digits. The
// sandbox's venues price with their own implementation (sandbox/pricing/), never with this, so
// the adapters quoting the sandbox are checked against arithmetic they do not share.
import { BPS, Decimal, ZERO, ceil10, divFloor10, floor10 } from '../decimal.js';
import type { Token } from '../tokens.js';
import { unavailable, type VenueFeeQuote, type VenueQuote, type VenueQuoteRequest } from './venue.js';
import { decimalField, VenueUnreadable } from './venue-http.js';

/** A proportional fee taken out of the give amount, rounded up. */
export function proportionalGiveFee(bps: number): (request: VenueQuoteRequest) => VenueFeeQuote {
  const rate = BPS.times(bps);
  return ({ give, amount }) => ({ amount: ceil10(amount.times(rate)), asset: give, appliedTo: 'deducted_from_give' });
}

/**
 * The quote of a venue that answers with its output after a fee taken from the give amount: gross
 * is that output at the quote's average rate for the whole amount, floor(output x amount /
 * (amount - fee)), so the net netAfterFee derives from it never exceeds what the venue said. No
 * output, or a fee of the whole amount, is below_minimum; `fee` null or 0 is no fee.
 */
export function quoteFromOutputAfterGiveFee(output: Decimal, amount: Decimal, fee: Decimal | null, give: Token): VenueQuote {
  if (output.isZero() || (fee && fee.gte(amount))) return unavailable('below_minimum');
  if (!fee || fee.isZero()) return { available: true, gross: floor10(output), fee: null };
  return { available: true, gross: divFloor10(output.times(amount), amount.minus(fee)), fee: { amount: fee, asset: give, appliedTo: 'deducted_from_give' } };
}

export interface BookLevel {
  readonly price: Decimal;
  readonly quantity: Decimal;
}

/**
 * Walks a book for a taker. Selling the base hits bids: output = sum of quantity × price. Buying the
 * base lifts asks with `amount` of quote currency: output = sum of quantity bought. Null when the book
 * is too thin for the amount.
 */
export function walkBook(levels: readonly BookLevel[], amount: Decimal, side: 'sell-base' | 'buy-base'): Decimal | null {
  let remaining = amount;
  let out = new Decimal(0);
  for (const { price, quantity } of levels) {
    if (remaining.isZero()) break;
    if (side === 'sell-base') {
      // A comparison, not Decimal.min, which copies its result.
      const take = remaining.lte(quantity) ? remaining : quantity;
      out = out.plus(take.times(price));
      remaining = remaining.minus(take);
    } else {
      const cost = quantity.times(price);
      if (remaining.gte(cost)) {
        out = out.plus(quantity);
        remaining = remaining.minus(cost);
      } else {
        out = out.plus(remaining.div(price));
        remaining = new Decimal(0);
      }
    }
  }
  return remaining.isZero() ? floor10(out) : null;
}

const ONE = new Decimal(1);

/**
 * A trade's price impact, 1 - effective / spot, from its effective rate and the venue's spot rate
 * before it (or any two figures in that ratio): the quotient rounded down and the impact up to 10
 * digits, so it is never understated; 0 for a trade paid at or above spot; null without a spot.
 */
export function impactFromRates(effective: Decimal, spot: Decimal): Decimal | null {
  if (!spot.gt(0)) return null;
  // Division rounds down (core/decimal.ts), so 1 minus it rounds up.
  const impact = ONE.minus(effective.div(spot));
  return impact.gt(0) ? ceil10(impact) : ZERO;
}

/**
 * A venue's own statement of a trade's price impact, a fraction (0.0012 = 0.12 %), rounded up to 10
 * digits. Null when it states none, or something that is no fraction below 1: the figure only
 * informs, so a quote is never refused over it.
 */
export function statedImpact(value: unknown): Decimal | null {
  if (value === undefined || value === null) return null;
  try {
    const impact = decimalField(value, 'priceImpact');
    return impact.lt(ONE) ? ceil10(impact) : null;
  } catch (err) {
    if (err instanceof VenueUnreadable) return null;
    throw err;
  }
}
