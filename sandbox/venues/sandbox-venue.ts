// An in-process venue over the sandbox market's pools or books. Each venue's pricing and fee
// mechanics are its own, priced by the sandbox's own implementation of each venue's documented
// formula (pricing/), never by the service's adapters' code (core/venues/): the sandbox is the
// other side the adapters are checked against, so it must not share their arithmetic.
import type { Decimal } from '../../core/decimal.js';
import { CC, pairKey, type Token } from '../../core/tokens.js';
import { payoutFeeInside } from '../pricing/constant-product.js';
import { buyFromAsks, sellIntoBids, type BookLevel } from '../pricing/order-book.js';
import type { SandboxFeeQuote, SandboxQuoteRequest } from '../pricing/quote-shapes.js';

// The rest of the venue port's shapes (core/venues/venue.ts), restated beside the request and fee
// that pricing owns (pricing/quote-shapes.ts), for the same reason.

/** The refusals a sandbox venue gives, each one of the contract's rejection codes. */
export type SandboxRejection = 'no_pool' | 'insufficient_liquidity' | 'below_minimum';

export type SandboxQuote =
  | { readonly available: true; readonly gross: Decimal; readonly fee: SandboxFeeQuote | null }
  | { readonly available: false; readonly rejectionCode: SandboxRejection };

const unavailable = (rejectionCode: SandboxRejection): SandboxQuote => ({ available: false, rejectionCode });

/** A CC-paired constant-product pool: `base` is always CC. */
export interface AmmPool {
  readonly quote: Token;
  baseReserve: Decimal;
  quoteReserve: Decimal;
}

/** A CC-paired order book, prices in quote currency per CC, best level first. */
export interface OrderBook {
  readonly quote: Token;
  readonly bids: readonly BookLevel[];
  readonly asks: readonly BookLevel[];
}

export interface PricedTrade {
  /** Output for the full amount at the headline price. */
  readonly gross: Decimal;
  /** What the output is worth in CC, for venue minimums. */
  readonly ccSize: Decimal;
}

export type Pricing =
  | { readonly kind: 'amm'; readonly pools: readonly AmmPool[]; readonly inPriceFeeBps: number }
  | { readonly kind: 'book'; readonly books: readonly OrderBook[] };

export interface SandboxVenueSpec {
  readonly id: string;
  readonly pricing: Pricing;
  /** The venue's fee outside its headline price, if any. */
  readonly fee: (request: SandboxQuoteRequest, trade: PricedTrade) => SandboxFeeQuote | null;
  /** Orders smaller than this many CC are refused. */
  readonly minCc?: Decimal;
}

export class SandboxVenue {
  readonly settlementMode = 'managed-deposit' as const;

  constructor(readonly spec: SandboxVenueSpec) {}

  get id(): string {
    return this.spec.id;
  }

  async quote(request: SandboxQuoteRequest): Promise<SandboxQuote> {
    const { give, want, amount } = request;
    const other = give === CC ? want : want === CC ? give : null;
    if (!other) return unavailable('no_pool');
    const trade = this.price(other, give === CC, amount);
    if (trade === 'no_pool' || trade === 'insufficient_liquidity') return unavailable(trade);
    if (this.spec.minCc && trade.ccSize.lt(this.spec.minCc)) return unavailable('below_minimum');
    if (trade.gross.isZero()) return unavailable('below_minimum');
    return { available: true, gross: trade.gross, fee: this.spec.fee(request, trade) };
  }

  async probe(): Promise<{ readonly live: boolean; readonly pairs: readonly string[] }> {
    const { pricing } = this.spec;
    const quotes = pricing.kind === 'amm' ? pricing.pools.map((p) => p.quote) : pricing.books.map((b) => b.quote);
    return { live: true, pairs: quotes.map((q) => pairKey(CC, q)) };
  }

  private price(other: Token, sellingCc: boolean, amount: Decimal): PricedTrade | 'no_pool' | 'insufficient_liquidity' {
    const { pricing } = this.spec;
    if (pricing.kind === 'amm') {
      const pool = pricing.pools.find((p) => p.quote === other);
      if (!pool) return 'no_pool';
      const [reserveIn, reserveOut] = sellingCc ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve];
      const gross = payoutFeeInside(reserveIn, reserveOut, amount, pricing.inPriceFeeBps);
      if (gross.gte(reserveOut)) return 'insufficient_liquidity';
      return { gross, ccSize: sellingCc ? amount : gross };
    }
    const book = pricing.books.find((b) => b.quote === other);
    if (!book) return 'no_pool';
    const gross = sellingCc ? sellIntoBids(book.bids, amount) : buyFromAsks(book.asks, amount);
    if (!gross) return 'insufficient_liquidity';
    return { gross, ccSize: sellingCc ? amount : gross };
  }
}


