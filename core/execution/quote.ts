// The v2 quote: the v1 quote's body (the same core computes it, keyless byte-identical and cached,
// keyed with its fee lines), each venue entry with its price impact (computed with v1's body and
// cached beside it, never in it) and telling whether a wallet can execute it and how the venue
// settles (venues.ts), and the best venue executable now named beside the best net.
import type * as V1 from '../contract/v1.js';
import type * as V2 from '../contract/v2.js';
import type { Partner } from '../keys/partner-keys.js';
import type { PartnerQuotes } from '../quotes/partner-quotes.js';
import type { QuoteParams } from '../quotes/params.js';
import type { VenueImpacts } from '../quotes/engine.js';
import type { BaseQuote, KeyedQuoteRequest, QuoteCounts, QuoteService } from '../quotes/service.js';
import { venueExecution } from './venues.js';
import { QuoteSplits, quoteSplit, type LimitsOf, type SplitOf } from './split.js';
import { TOKENS } from '../tokens.js';

/** No venue's limits known. */
const NO_LIMITS: LimitsOf = () => null;

/** The split with no venue's limits known, computed each time. */
const SPLIT_WITHOUT_LIMITS: SplitOf = (quote, venues, bestExecutable, give) => quoteSplit(quote, venues, bestExecutable, give, NO_LIMITS);

/** The v2 quote of a v1 quote and its venues' price impacts: its ranking, numbers and fee lines unchanged, its best split beside them. */
export function withExecution(quote: V1.QuoteResponse, impacts: VenueImpacts, splitOf: SplitOf = SPLIT_WITHOUT_LIMITS): V2.QuoteResponse {
  const venues = quote.venues.map(
    (venue): V2.QuoteVenue => ({ ...venue, priceImpact: venue.available ? (impacts[venue.venueId] ?? null) : null, execution: venueExecution(venue.venueId) }),
  );
  // Ranked best net first, the unavailable after: the first available executable entry is the best executable now.
  const first = venues.find((venue) => venue.available && venue.execution.executable && venue.net !== null && venue.gross !== null);
  const { pair, amount, asOf, best, edgeBps, appliedSchema } = quote;
  const bestExecutable = first ? { venueId: first.venueId, gross: first.gross!, net: first.net! } : null;
  const give = TOKENS.find((token) => token.instrument === pair.give);
  const split = give ? splitOf(quote, venues, bestExecutable, give) : null;
  return {
    pair,
    amount,
    asOf,
    venues,
    best,
    bestExecutable,
    edgeBps,
    ...(appliedSchema === undefined ? {} : { appliedSchema }),
    ...(split === null ? {} : { split }),
  };
}

/** The v2 body of a v1 quote's JSON text and its impacts' (service.ts CachedQuote). */
export const v2QuoteJson = (v1Json: string, impacts: string, splitOf: SplitOf = SPLIT_WITHOUT_LIMITS): string =>
  JSON.stringify(withExecution(JSON.parse(v1Json) as V1.QuoteResponse, JSON.parse(impacts) as VenueImpacts, splitOf));

/**
 * The v2 bodies of the keyless quotes, each computed once per cached quote: every caller within a
 * cache window gets the same v1 text and impacts, so the v2 text is byte-identical for everyone
 * too, and a cached quote costs v2 a map lookup (the v1 text's hash is computed once per string)
 * and a comparison of its impacts (the same string, but for a quote read again from the shared cache).
 */
export class V2QuoteBodies {
  private readonly bodies = new Map<string, { readonly impacts: string; readonly body: string }>();

  constructor(
    private readonly maxEntries = 1024,
    private readonly splitOf: SplitOf = SPLIT_WITHOUT_LIMITS,
  ) {}

  body(v1Json: string, impacts: string): string {
    const known = this.bodies.get(v1Json);
    if (known?.impacts === impacts) return known.body;
    const body = v2QuoteJson(v1Json, impacts, this.splitOf);
    // The oldest out first: a body outlives its cache window by no more than the entries after it.
    if (!known && this.bodies.size >= this.maxEntries) this.bodies.delete(this.bodies.keys().next().value!);
    this.bodies.set(v1Json, { impacts, body });
    return body;
  }
}

/** A v2 partner quote: the partner's v1 quote with its execution blocks. */
export interface V2PartnerQuote {
  readonly body: V2.QuoteResponse;
  readonly cached: boolean;
}

/**
 * The v2 quote over the same core as v1's: the keyless quote's cache, counts and fresh-quote
 * budget, and the partner quote's fee lines, each answer with its execution blocks. Its methods
 * are QuoteService's and PartnerQuotes', in v2's shape.
 */
export class V2Quotes {
  private readonly bodies: V2QuoteBodies;

  private readonly splits: QuoteSplits;

  /** `limitsOf`: each venue's limits on the give token, which a split's legs keep to. */
  constructor(
    private readonly quotes: QuoteService,
    private readonly partnerQuotes: PartnerQuotes,
    maxBodies?: number,
    limitsOf: LimitsOf = NO_LIMITS,
  ) {
    this.splits = new QuoteSplits(limitsOf);
    this.bodies = new V2QuoteBodies(maxBodies, this.splits.of);
  }

  private readonly v2 = ({ json, impacts, cached }: BaseQuote): BaseQuote => ({ json: this.bodies.body(json, impacts), impacts, cached });

  /** QuoteService.ready, in v2. */
  ready(keyed: KeyedQuoteRequest): BaseQuote | undefined {
    const ready = this.quotes.ready(keyed);
    return ready && this.v2(ready);
  }

  /** QuoteService.baseQuote, in v2. */
  baseQuote(keyed: KeyedQuoteRequest, beforeCompute?: () => void | Promise<void>): Promise<BaseQuote> {
    return this.quotes.baseQuote(keyed, beforeCompute).then(this.v2);
  }

  /** QuoteService.counted, in v2. */
  counted(keyed: KeyedQuoteRequest, counts: QuoteCounts): Promise<BaseQuote> {
    return this.quotes.counted(keyed, counts).then(this.v2);
  }

  /** PartnerQuotes.quote, in v2. */
  async partner(params: QuoteParams, partner: Partner, beforeCompute?: () => void | Promise<void>, counts?: QuoteCounts): Promise<V2PartnerQuote> {
    const { body, cached, impacts } = await this.partnerQuotes.quote(params, partner, beforeCompute, counts);
    return { body: withExecution(body, JSON.parse(impacts) as VenueImpacts, this.splits.of), cached };
  }
}
