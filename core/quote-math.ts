// The quote's arithmetic, in one place so every figure a response shows can be recomputed from
// the others exactly as documented in openapi/v1.yaml (QuoteVenue, QuoteResponse.edgeBps).
import { BPS, Decimal, ZERO, ceil10, divFloor10, floor10, smallQuotient, toWire } from './decimal.js';
import type { Token } from './tokens.js';
import { unavailable, type VenueFeeQuote, type VenueQuote, type VenueQuoteRequest } from './venue.js';
import type { QuoteVenue } from './wire.js';

const TEN_THOUSAND = new Decimal(10_000);
const TWENTY_THOUSAND = new Decimal(20_000);

/**
 * Worst-case output after the venue's fee, on one basis for every venue: a want-side fee is
 * subtracted as is; a give-side fee (deducted or on top) is valued at the quote's average rate.
 */
export function netAfterFee(amount: Decimal, gross: Decimal, fee: VenueFeeQuote | null, want: Token): Decimal {
  if (!fee) return floor10(gross);
  if (fee.asset === want) return floor10(gross.minus(fee.amount));
  if (fee.amount.gte(amount)) return ZERO;
  return divFloor10(gross.times(amount.minus(fee.amount)), amount);
}

/**
 * The fee's cost in bps of gross, round(10000 × (gross - net) / gross) half up, computed as
 * floor((20000 × (gross - net) + gross) / (2 × gross)); 0 without a fee.
 */
export function feeCostBps(gross: Decimal, net: Decimal): number {
  if (gross.isZero() || net.eq(gross)) return 0;
  return smallQuotient(gross.minus(net).times(TWENTY_THOUSAND).plus(gross), gross.plus(gross));
}

/** Edge of the best over the next, floor(10000 × (best - next) / next). */
export function edgeBps(best: Decimal, next: Decimal): number {
  return smallQuotient(best.minus(next).times(TEN_THOUSAND), next);
}

/**
 * A plan's minimum-receive floor, floor(net × (1 - slippageBps/10000)) to 10 fractional digits:
 * rounded down, so the floor never asks the venue for more than the quote's net allows.
 */
export function minReceive(net: Decimal, slippageBps: number): Decimal {
  return floor10(net.times(10_000 - slippageBps).times(BPS));
}

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

export function constantProductOut(reserveIn: Decimal, reserveOut: Decimal, amountIn: Decimal): Decimal {
  return divFloor10(reserveOut.times(amountIn), reserveIn.plus(amountIn));
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

type Entry = QuoteVenue & { readonly netValue: Decimal | null };

const rejected = (venueId: string, rejectionCode: QuoteVenue['rejectionCode']): Entry => ({
  venueId,
  settlementMode: 'managed-deposit',
  available: false,
  gross: null,
  net: null,
  fee: null,
  feeBps: null,
  rejectionCode,
  netValue: null,
});

/** Shapes one venue's answer into its wire entry, computing net and feeBps. */
export function toQuoteVenue(venueId: string, amount: Decimal, want: Token, give: Token, quote: VenueQuote): Entry {
  if (!quote.available) return rejected(venueId, quote.rejectionCode);
  if (quote.fee && quote.fee.asset !== give && quote.fee.asset !== want) return rejected(venueId, 'venue_error');
  // A fee is what the user pays: rounded up before it enters the net.
  const fee = quote.fee && { ...quote.fee, amount: ceil10(quote.fee.amount) };
  const gross = floor10(quote.gross);
  const net = netAfterFee(amount, gross, fee, want);
  if (!net.gt(0)) return rejected(venueId, 'below_minimum');
  return {
    venueId,
    settlementMode: 'managed-deposit',
    available: true,
    gross: toWire(gross),
    net: toWire(net),
    fee: fee ? { amount: toWire(fee.amount), asset: fee.asset.instrument, appliedTo: fee.appliedTo } : null,
    feeBps: feeCostBps(gross, net),
    rejectionCode: null,
    netValue: net,
  };
}
