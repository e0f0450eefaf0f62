// An in-process venue over the sandbox market's pools or books. Each venue's pricing and fee
// mechanics are its own; the quote engine treats them all through the venue port.
import { BPS, type Decimal } from '../core/decimal.js';
import { constantProductOut, walkBook, type BookLevel } from '../core/venues/venue-math.js';
import { CC, pairKey, type Token } from '../core/tokens.js';
import { unavailable, type Venue, type VenueFeeQuote, type VenueProbe, type VenueQuote, type VenueQuoteRequest } from '../core/venues/venue.js';

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
  readonly fee: (request: VenueQuoteRequest, trade: PricedTrade) => VenueFeeQuote | null;
  /** Orders smaller than this many CC are refused. */
  readonly minCc?: Decimal;
}

export class SandboxVenue implements Venue {
  readonly settlementMode = 'managed-deposit' as const;
  /** The share of the give amount an AMM prices after its in-price fee; null when it has none. */
  private readonly inPriceShare: Decimal | null;

  constructor(readonly spec: SandboxVenueSpec) {
    const feeBps = spec.pricing.kind === 'amm' ? spec.pricing.inPriceFeeBps : 0;
    this.inPriceShare = feeBps === 0 ? null : BPS.times(10_000 - feeBps);
  }

  get id(): string {
    return this.spec.id;
  }

  async quote(request: VenueQuoteRequest): Promise<VenueQuote> {
    const { give, want, amount } = request;
    const other = give === CC ? want : want === CC ? give : null;
    if (!other) return unavailable('no_pool');
    const trade = this.price(other, give === CC, amount);
    if (trade === 'no_pool' || trade === 'insufficient_liquidity') return unavailable(trade);
    if (this.spec.minCc && trade.ccSize.lt(this.spec.minCc)) return unavailable('below_minimum');
    if (trade.gross.isZero()) return unavailable('below_minimum');
    return { available: true, gross: trade.gross, fee: this.spec.fee(request, trade) };
  }

  async probe(): Promise<VenueProbe> {
    const { pricing } = this.spec;
    const quotes = pricing.kind === 'amm' ? pricing.pools.map((p) => p.quote) : pricing.books.map((b) => b.quote);
    return { live: true, pairs: quotes.map((q) => pairKey(CC, q)) };
  }

  private price(other: Token, sellingCc: boolean, amount: Decimal): PricedTrade | 'no_pool' | 'insufficient_liquidity' {
    const { pricing } = this.spec;
    if (pricing.kind === 'amm') {
      const pool = pricing.pools.find((p) => p.quote === other);
      if (!pool) return 'no_pool';
      const effectiveIn = this.inPriceShare ? amount.times(this.inPriceShare) : amount;
      const [reserveIn, reserveOut] = sellingCc ? [pool.baseReserve, pool.quoteReserve] : [pool.quoteReserve, pool.baseReserve];
      const gross = constantProductOut(reserveIn, reserveOut, effectiveIn);
      if (gross.gte(reserveOut)) return 'insufficient_liquidity';
      return { gross, ccSize: sellingCc ? amount : gross };
    }
    const book = pricing.books.find((b) => b.quote === other);
    if (!book) return 'no_pool';
    const gross = sellingCc ? walkBook(book.bids, amount, 'sell-base') : walkBook(book.asks, amount, 'buy-base');
    if (!gross) return 'insufficient_liquidity';
    return { gross, ccSize: sellingCc ? amount : gross };
  }
}


