// The quote use case: the fee-free base quote, cached per normalised parameter combination.
import { quoteAcrossVenues, type QuoteEngineOptions, type QuoteRequest } from './quote-engine.js';
import { SingleFlightCache } from './single-flight-cache.js';
import { toWire } from './decimal.js';
import type { QuoteResponse } from './wire.js';

export interface QuoteServiceOptions extends QuoteEngineOptions {
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
}

export interface BaseQuote {
  readonly response: QuoteResponse;
  /** False when this request computed the quote (a cache miss). */
  readonly cached: boolean;
}

export class QuoteService {
  private readonly cache: SingleFlightCache<QuoteResponse>;

  constructor(private readonly options: QuoteServiceOptions) {
    this.cache = new SingleFlightCache(options.cacheTtlMs, options.cacheMaxEntries);
  }

  async baseQuote(request: QuoteRequest): Promise<BaseQuote> {
    const key = `${request.give.symbol}|${request.want.symbol}|${toWire(request.amount)}`;
    const { value, hit } = this.cache.get(key, () => quoteAcrossVenues(request, this.options));
    return { response: await value, cached: hit };
  }

  get venueIds(): readonly string[] {
    return this.options.venues.map((v) => v.id);
  }
}
