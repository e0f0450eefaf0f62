// The quote use case: the fee-free base quote, cached per normalised parameter combination. The
// cache has two levels: this instance's single-flight cache, always, and, when the shared state is
// shared between instances (Redis), the shared one, so every instance serves the same bytes for a
// combination within its window.
import { quoteAcrossVenues, type QuoteEngineOptions, type QuoteRequest } from './engine.js';
import type { SharedState, StoredValue } from '../state/shared-state.js';
import { SingleFlightCache } from './single-flight-cache.js';
import { toWire } from '../decimal.js';

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

  /** The base quote at once, when this instance has it computed: the hot path takes no promise. */
  ready({ cacheKey }: KeyedQuoteRequest): BaseQuote | undefined {
    const ready = this.cache.peek(cacheKey);
    if (!ready) return undefined;
    this.options.metrics?.quoteCacheHit();
    return { json: ready.value, cached: true };
  }

  /**
   * The base quote from this instance's cache (computed or in flight), else from the cache shared
   * with other instances (then kept here until it expires there), else computed here. Only in the
   * last case does `beforeCompute` run first, and its rejection refuses the request: a quote
   * another instance computed is no fresh quote for the caller.
   */
  async baseQuote({ request, cacheKey: key }: KeyedQuoteRequest, beforeCompute?: () => void | Promise<void>): Promise<BaseQuote> {
    const ready = this.ready({ request, cacheKey: key });
    if (ready) return ready;
    const { metrics } = this.options;
    if (!this.cache.has(key)) {
      const stored = await this.readShared(key);
      if (stored) {
        this.cache.get(key, async (expireIn) => {
          if (stored.ttlMs !== null) expireIn(stored.ttlMs);
          return stored.value;
        });
        metrics?.quoteCacheHit();
        return { json: stored.value, cached: true };
      }
      await beforeCompute?.();
    }
    const { value, hit } = this.cache.get(key, (expireIn) => this.compute(request, key, expireIn));
    if (hit) metrics?.quoteCacheHit();
    else metrics?.quoteCacheMiss();
    return { json: await value, cached: hit };
  }

  /** The shared level is an optimisation: when it cannot be reached, the quote is computed here. */
  private async readShared(key: string): Promise<StoredValue | null> {
    return (await this.options.sharedCache?.get(`quote:${key}`).catch(() => null)) ?? null;
  }

  private async compute(request: QuoteRequest, key: string, expireIn: (ms: number) => void): Promise<string> {
    const json = JSON.stringify(await quoteAcrossVenues(request, this.options));
    const shared = this.options.sharedCache;
    if (!shared) return json;
    if (await shared.setIfAbsent(`quote:${key}`, json, this.options.cacheTtlMs).catch(() => true)) return json;
    // Another instance stored its body first: serve that one, so all instances agree byte for byte.
    const winner = await this.readShared(key);
    if (winner && winner.ttlMs !== null) expireIn(winner.ttlMs);
    return winner?.value ?? json;
  }
}
