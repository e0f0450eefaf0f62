// Temple Digital Group, a central limit order book. No public API reference; the shapes here come
// from a third-party SDK written against its API. Auth by `X-API-Key`,
// rate-limited per key (429, limits not published).
//
// - Book: GET /api/v1/market/orderbook?symbol=Amulet/USDCx&levels=N -> {bids: [{price, quantity}],
//   asks: [{price, quantity}]} (3P SDK). Symbols served: Amulet/USDCx and Amulet/CBTC.
// - No quote endpoint: the book is walked for the amount (core/venues/venue-math.ts walkBook, as the
//   sandbox's temple does): selling CC hits the bids, buying CC with the quote currency lifts the
//   asks.
// - Taker fee: reported as 1 bp (unverified), taken out of the give amount and rounded up, as the
//   sandbox's temple does; a constructor option (`takerFeeBps`, default 1).
//
// Ambiguous, and decided here:
// - `price` is quote currency per CC and `quantity` is in CC (the symbol's base, Amulet, first).
// - Levels are sorted best first here (bids by price descending, asks ascending) rather than
//   trusting the answer's order; levels with a zero price or quantity are dropped.
// - The walk sees only the levels fetched (`levels` option, default 100): an amount past them is
//   'insufficient_liquidity', though the venue may hold more depth beyond.
// - The minimum order is not published: `minCc` option (default 1 CC, the sandbox's figure); an
//   order smaller than it, in CC (the give amount when selling CC, the output when buying), is
//   'below_minimum', checked after the walk as in the sandbox.
// - The symbol goes in the query as written in the SDK (`Amulet/USDCx`, slash unescaped).
// - Price impact: the book's best level is its spot (the walked side's first level: a bid's price
//   when selling CC, the CC an ask's price buys when buying it), against the walk's gross before
//   the taker fee; no round trip of its own.
// - No error body is documented: only the venue's own timeout becomes a rejection; anything else,
//   a 429 included, is thrown, so the quote engine logs it and reports venue_error.
import { dec, type Decimal } from '../decimal.js';
import { impactFromRates, proportionalGiveFee, walkBook, type BookLevel } from './venue-math.js';
import { CBTC, CC, pairKey, USDCX, type Token } from '../tokens.js';
import { unavailable, untilAborted, type Deadline, type Venue, type VenueFeeQuote, type VenueLimits, type VenueProbe, type VenueQuote, type VenueQuoteRequest } from './venue.js';
import { decimalField, objectField, VenueFailure, VenueHttp, type VenueHttpOptions, VenueTimeout, VenueUnreadable } from './venue-http.js';

export interface TempleVenueOptions extends VenueHttpOptions {
  /** The taker fee in bps of the give amount; default 1 (reported, unverified). */
  readonly takerFeeBps?: number;
  /** Orders smaller than this many CC are refused; default 1. */
  readonly minCc?: Decimal;
  /** Book levels fetched per side for a quote; default 100. */
  readonly levels?: number;
}

/** Temple's book symbol for CC against each other token. */
const SYMBOLS: ReadonlyMap<Token, string> = new Map([
  [USDCX, 'Amulet/USDCx'],
  [CBTC, 'Amulet/CBTC'],
]);

export class TempleVenue implements Venue {
  readonly id = 'temple';
  readonly settlementMode = 'managed-deposit' as const;
  private readonly http: VenueHttp;
  /** The taker fee; null without one. */
  private readonly fee: ((request: VenueQuoteRequest) => VenueFeeQuote) | null;
  private readonly minCc: Decimal;
  private readonly levels: number;

  constructor(options: TempleVenueOptions) {
    const { takerFeeBps = 1, minCc = dec('1'), levels = 100, ...http } = options;
    if (!Number.isInteger(takerFeeBps) || takerFeeBps < 0 || takerFeeBps >= 10_000) throw new Error('takerFeeBps must be an integer from 0 to 9999');
    if (!Number.isInteger(levels) || levels < 1) throw new Error('levels must be a positive integer');
    // No reference says whether a level's price and quantity are strings or numbers: either is read exactly.
    this.http = new VenueHttp({ ...http, amountFields: ['price', 'quantity'] });
    this.fee = takerFeeBps === 0 ? null : proportionalGiveFee(takerFeeBps);
    this.minCc = minCc;
    this.levels = levels;
  }

  /** Its minimum order, in CC: known for CC given; for another token it depends on the price. */
  limits(token: Token): VenueLimits | null {
    return token === CC ? { min: this.minCc, max: null } : null;
  }

  async quote(request: VenueQuoteRequest, deadline: Deadline): Promise<VenueQuote> {
    const { give, want, amount } = request;
    const other = give === CC ? want : want === CC ? give : null;
    const symbol = other && SYMBOLS.get(other);
    if (!symbol) return unavailable('no_pool');
    const sellingCc = give === CC;
    try {
      const book = await this.readBook(symbol, this.levels, deadline, sellingCc ? 'bids' : 'asks');
      const gross = walkBook(book, amount, sellingCc ? 'sell-base' : 'buy-base');
      if (!gross) return unavailable('insufficient_liquidity');
      const ccSize = sellingCc ? amount : gross;
      if (ccSize.lt(this.minCc) || gross.isZero()) return unavailable('below_minimum');
      // A book that filled the amount has a best level. Selling CC: gross / amount against the best
      // bid. Buying: against 1 / the best ask, i.e. gross × ask against amount.
      const best = book[0]!.price;
      const priceImpact = sellingCc ? impactFromRates(gross, amount.times(best)) : impactFromRates(gross.times(best), amount);
      return { available: true, gross, fee: this.fee?.(request) ?? null, priceImpact };
    } catch (err) {
      if (err instanceof VenueTimeout) return unavailable('timeout');
      throw err;
    }
  }

  async probe(signal: AbortSignal): Promise<VenueProbe> {
    const answered = await Promise.all(
      [...SYMBOLS].map(async ([token, symbol]) => {
        try {
          await this.readBook(symbol, 1, untilAborted(signal), 'bids');
          return pairKey(CC, token);
        } catch (err) {
          if (err instanceof VenueFailure) return null;
          throw err;
        }
      }),
    );
    const pairs = answered.filter((p): p is string => p !== null);
    return { live: pairs.length > 0, pairs };
  }


  /**
   * The side of the book a quote walks, best level first. The other side is checked to be a list
   * but not read: a quote walks one side only, and reading both cost a fresh quote twice the
   * decimals and sorting.
   */
  private async readBook(symbol: string, levels: number, deadline: Deadline, walked: 'bids' | 'asks'): Promise<BookLevel[]> {
    const answer = objectField(await this.http.getJson(`/api/v1/market/orderbook?symbol=${symbol}&levels=${levels}`, deadline), 'the order book');
    const other = walked === 'bids' ? 'asks' : 'bids';
    if (!Array.isArray(answer[other])) throw new VenueUnreadable(`'${other}' is not a list`);
    const book = side(answer[walked], walked);
    // Bids best (highest) first, asks best (lowest) first.
    return walked === 'bids' ? book.sort((a, b) => b.price.comparedTo(a.price)) : book.sort((a, b) => a.price.comparedTo(b.price));
  }
}

/** One side of the book, levels with nothing to trade dropped. */
function side(value: unknown, name: string): BookLevel[] {
  if (!Array.isArray(value)) throw new VenueUnreadable(`'${name}' is not a list`);
  const levels: BookLevel[] = [];
  for (const [i, entry] of value.entries()) {
    const level = objectField(entry, `${name}[${i}]`);
    const price = decimalField(level.price, `${name}[${i}].price`);
    const quantity = decimalField(level.quantity, `${name}[${i}].quantity`);
    if (!price.isZero() && !quantity.isZero()) levels.push({ price, quantity });
  }
  return levels;
}
