// The quote's arithmetic, in one place so every figure a response shows can be recomputed from
// the others exactly as documented in openapi/v1.yaml (QuoteVenue, QuoteResponse.edgeBps).
import { BPS, Decimal, ZERO, ceil10, divFloor10, floor10, smallQuotient, toWire } from '../decimal.js';
import type { Token } from '../tokens.js';
import type { VenueFeeQuote, VenueQuote } from '../venues/venue.js';
import type { QuoteVenue } from '../contract/v1.js';

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

/** The contract's bound on edgeBps: a best venue paying 100,000 times the next. */
export const MAX_EDGE_BPS = 1_000_000_000;

/** Edge of the best over the next, floor(10000 × (best - next) / next), at most MAX_EDGE_BPS. */
export function edgeBps(best: Decimal, next: Decimal): number {
  // Venues' amounts are read within 1e-30 to 1e30, so an unbounded edge could reach 1e64.
  if (best.gt(next.times(MAX_EDGE_BPS / 10_000 + 1))) return MAX_EDGE_BPS;
  return Math.min(smallQuotient(best.minus(next).times(TEN_THOUSAND), next), MAX_EDGE_BPS);
}

/**
 * A plan's minimum-receive floor, floor(net × (1 - slippageBps/10000)) to 10 fractional digits:
 * rounded down, so the floor never asks the venue for more than the quote's net allows.
 */
export function minReceive(net: Decimal, slippageBps: number): Decimal {
  return floor10(net.times(10_000 - slippageBps).times(BPS));
}

/**
 * A venue's entry as the engine ranks it: v1's wire entry, its net as a Decimal, and its price
 * impact (to 10 digits, rounded up; null when not known or unavailable), which v1's body never
 * carries: it travels beside it (engine.ts RankedQuote.impacts).
 */
type Entry = QuoteVenue & { readonly netValue: Decimal | null; readonly priceImpact: string | null };

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
  priceImpact: null,
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
    priceImpact: quote.priceImpact ? toWire(ceil10(quote.priceImpact)) : null,
  };
}
