// The quote use case: the fee-free base quote, cached per normalised parameter combination. The
// cache has two levels: this instance's single-flight cache, always, and, when the shared state is
// shared between instances (Redis), the shared one, so every instance serves the same bytes for a
// combination within its window.
import { quoteAcrossVenues, type QuoteEngineOptions, type QuoteRequest } from './quote-engine.js';
import type { SharedState } from './shared-state.js';
import { SingleFlightCache } from './single-flight-cache.js';
import { toWire } from './decimal.js';

export interface QuoteServiceOptions extends QuoteEngineOptions {
  readonly cacheTtlMs: number;
  readonly cacheMaxEntries: number;
  /** The cache shared with other instances; omitted for a single instance. */
  readonly sharedCache?: SharedState;
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
  baseQuote({ request, cacheKey: key }: KeyedQuoteRequest, options: { sharedChecked?: boolean } = {}): BaseQuote | Promise<BaseQuote> {
    const ready = this.cache.peek(key);
    if (ready) return { json: ready.value, cached: true };
    const { value, hit } = this.cache.get(key, (expireIn) => this.compute(request, key, expireIn, options.sharedChecked === true));
    return value.then((json) => ({ json, cached: hit }));
  }

  /** Whether baseQuote(params) would be answered by this instance's cache, computed or in flight. */
  isCached({ cacheKey }: KeyedQuoteRequest): boolean {
    return this.cache.has(cacheKey);
  }

  /**
   * The base quote from the cache shared with other instances, which this instance then keeps
   * until it expires there; null when it is not there, or there is no shared cache. A caller that
   * gets null and computes next passes `sharedChecked` to baseQuote, which then does not ask again.
   */
  async fromSharedCache({ cacheKey }: KeyedQuoteRequest): Promise<BaseQuote | null> {
    const shared = this.options.sharedCache;
    if (!shared) return null;
    const stored = await shared.get(`quote:${cacheKey}`).catch(() => null);
    if (!stored) return null;
    this.cache.get(cacheKey, async (expireIn) => {
      if (stored.ttlMs !== null) expireIn(stored.ttlMs);
      return stored.value;
    });
    return { json: stored.value, cached: true };
  }

  /** The base quote from either cache level, or computed: what a caller exempt from the fresh-quote budget uses. */
  async anyBaseQuote(params: KeyedQuoteRequest): Promise<BaseQuote> {
    if (this.isCached(params)) return this.baseQuote(params);
    return (await this.fromSharedCache(params)) ?? this.baseQuote(params, { sharedChecked: true });
  }

  private async compute(request: QuoteRequest, key: string, expireIn: (ms: number) => void, sharedChecked: boolean): Promise<string> {
    const shared = this.options.sharedCache;
    if (!shared) return JSON.stringify(await quoteAcrossVenues(request, this.options));
    const sharedKey = `quote:${key}`;
    // The shared level is an optimisation: when it cannot be reached, the quote is computed here.
    const fromShared = async () => {
      const stored = await shared.get(sharedKey).catch(() => null);
      if (stored?.ttlMs != null) expireIn(stored.ttlMs);
      return stored?.value;
    };
    const known = sharedChecked ? undefined : await fromShared();
    if (known !== undefined) return known;
    const json = JSON.stringify(await quoteAcrossVenues(request, this.options));
    const stored = await shared.setIfAbsent(sharedKey, json, this.options.cacheTtlMs).catch(() => true);
    // Another instance stored its body first: serve that one, so all instances agree byte for byte.
    return stored ? json : ((await fromShared()) ?? json);
  }
}
