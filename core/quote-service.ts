// The quote use case: the fee-free base quote, cached per normalised parameter combination.
import { quoteAcrossVenues, type QuoteEngineOptions, type QuoteRequest } from './quote-engine.js';
import { SingleFlightCache } from './single-flight-cache.js';
import { toWire } from './decimal.js';

export interface QuoteServiceOptions extends QuoteEngineOptions {
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
}

export interface BaseQuote {
  /** The QuoteResponse as JSON text: the same bytes for every caller within the cache window. */
  readonly json: string;
  /** False when this request computed the quote (a cache miss). */
  readonly cached: boolean;
}

/** The normalised parameter combination a base quote is cached under. */
export const quoteCacheKey = (request: QuoteRequest): string =>
  `${request.give.symbol}|${request.want.symbol}|${toWire(request.amount)}`;

/** A request with its cache key, made together (parseQuoteParams) so they cannot disagree. */
export interface KeyedQuoteRequest {
  readonly request: QuoteRequest;
  /** quoteCacheKey(request). */
  readonly cacheKey: string;
}

export class QuoteService {
  // Entries hold the JSON text, not the response object: one string is one object for the
  // garbage collector where a response is dozens, and at the 10,000-entry cap, with every miss
  // promoting a new entry, tracing those graphs cost a fresh quote 12-30 % more CPU.
  private readonly cache: SingleFlightCache<string>;

  constructor(private readonly options: QuoteServiceOptions) {
    this.cache = new SingleFlightCache(options.cacheTtlMs, options.cacheMaxEntries);
  }

  /**
   * The base quote for `request`: at once when it is cached and computed (the hot path takes no
   * promise), otherwise once the computation this call started or joined settles.
   */
  baseQuote({ request, cacheKey: key }: KeyedQuoteRequest): BaseQuote | Promise<BaseQuote> {
    const ready = this.cache.peek(key);
    if (ready) return { json: ready.value, cached: true };
    const { value, hit } = this.cache.get(key, () => quoteAcrossVenues(request, this.options).then((r) => JSON.stringify(r)));
    return value.then((json) => ({ json, cached: hit }));
  }
}
